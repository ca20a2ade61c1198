import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PARITY_CASES, resolvedRequest } from './cases';
import { exchange, type ParityAnswer, recordValues } from './exchange';
import { type RecordedExchange } from './recorded';

/**
 * Records what the legacy service answers to every parity case, in order, into
 * test/parity/legacy-exchanges.json. Run from the repository root against a twin freshly started on the
 * demo data (it keeps its data in memory and UpdateAgents changes it):
 * `PARITY_LEGACY_URL=http://127.0.0.1:5101 npm run parity:record`.
 */
async function record(legacyUrl: string): Promise<void> {
  const answers = new Map<string, ParityAnswer>();
  const recorded: RecordedExchange[] = [];
  for (const parityCase of PARITY_CASES) {
    const request = resolvedRequest(parityCase, (name) => answers.get(name));
    const answer = await exchange(legacyUrl, request).catch((error: unknown) => {
      throw new Error(`${parityCase.name}: ${String(error)}`);
    });
    answers.set(parityCase.name, answer);
    // A read-back's stamp is the time of the twin's change: kept out, so that recording is repeatable.
    const legacy = parityCase.record === 'changed' ? recordValues(answer, 'changed') : answer;
    recorded.push({ name: parityCase.name, group: parityCase.group, request, legacy });
  }
  const file = resolve('test/parity/legacy-exchanges.json');
  writeFileSync(file, `${JSON.stringify(recorded, null, 2)}\n`);
  const statuses = new Map<number, number>();
  for (const { legacy } of recorded)
    statuses.set(legacy.status, (statuses.get(legacy.status) ?? 0) + 1);
  const summary = [...statuses].map(([status, count]) => `${count} × ${status}`).join(', ');
  process.stdout.write(`${recorded.length} exchanges (${summary}) written to ${file}\n`);
}

const legacyUrl = process.env.PARITY_LEGACY_URL;
if (!legacyUrl) {
  process.stderr.write('usage: PARITY_LEGACY_URL=<legacy service URL> npm run parity:record\n');
  process.exit(2);
}
record(legacyUrl).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
