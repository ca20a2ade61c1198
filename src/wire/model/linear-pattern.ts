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
 * cannot see (a string), since each tests what clients send. A pattern is tested whole, so nothing
 * after it can reject a match: `é+` is found at once, `\s+$` can fail at every position.
 */
export function superLinearCause(pattern: RegExp): string | undefined {
  const { reports } = analyse(parser.parseLiteral(String(pattern)), {
    assumeRejectingSuffix: false,
  });
  return reports.length === 0 ? undefined : reports.map(describe).join('; ');
}
