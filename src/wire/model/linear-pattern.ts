import { RegExpParser } from '@eslint-community/regexpp';
import { analyse, type Report } from 'scslre';

const parser = new RegExpParser();

function describe(report: Report): string {
  const attack = `/${report.character.literal.source}+/`;
  switch (report.type) {
    case 'Move':
      return `${report.quant.raw} is tried again at every position of a run such as ${attack}: anchor the pattern with ^`;
    case 'Self':
      return `${report.quant.raw} can reach itself through ${report.parentQuant.raw} on a run such as ${attack}`;
    case 'Trade':
      return `${report.startQuant.raw} and ${report.endQuant.raw} can trade the characters of a run such as ${attack}`;
  }
}

/**
 * Why a pattern a module declares could take more than linear time on some text, or `undefined`: the
 * same analysis (scslre) as the lint's regexp/no-super-linear-* rules, for the patterns the lint
 * cannot see (a string, or a class-validator `@Matches`), since each runs on what clients send.
 */
export function superLinearCause(pattern: RegExp): string | undefined {
  const { reports } = analyse(parser.parseLiteral(String(pattern)), {
    assumeRejectingSuffix: true,
  });
  return reports.length === 0 ? undefined : reports.map(describe).join('; ');
}
