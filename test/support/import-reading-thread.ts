// A thread that reads import files as `npm run data:import` reads them, the built code in a plain
// Node.js context, and times each read: the suites' own module sandbox slows the CSV parser's work
// per character tenfold, and would time the sandbox rather than the reader.
import { parentPort } from 'node:worker_threads';
import { loadAppConfig } from '../../src/config/app-config';
import { recordFile } from '../../src/data-import/record-files';
import { TransactionDto } from '../../src/transaction/dto/transaction.dto';

/** What reading one file of transactions gave: how long it took, the records, or the failure. */
export interface ImportRead {
  readonly ms: number;
  readonly records: number;
  readonly error?: string;
}

/** The configuration the import command runs with unless told otherwise. */
const { importMaxRecordSize } = loadAppConfig({}, { serving: false });

parentPort?.on('message', (path: string) => {
  void (async () => {
    const started = performance.now();
    let records = 0;
    let error: string | undefined;
    try {
      for await (const record of await recordFile(
        path,
        TransactionDto,
        'transaction_id',
        importMaxRecordSize,
      ))
        if (record) records++;
    } catch (failure) {
      error = (failure as Error).message;
    }
    const read: ImportRead = { ms: performance.now() - started, records, error };
    parentPort?.postMessage(read);
  })();
});
