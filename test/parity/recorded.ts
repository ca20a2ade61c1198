import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ParityAnswer, type ParityRequest } from './exchange';

/** One case as it was sent to the legacy service, and what that answered. */
export interface RecordedExchange {
  readonly name: string;
  readonly group: string;
  readonly request: ParityRequest;
  readonly legacy: ParityAnswer;
}

/** Written by `npm run parity:record` (test/parity/record.ts); read as data, not compiled. */
export const LEGACY_EXCHANGES = JSON.parse(
  readFileSync(join(__dirname, 'legacy-exchanges.json'), 'utf8'),
) as readonly RecordedExchange[];
