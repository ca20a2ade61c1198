// The service as src/main.ts starts it, with the reacting test module mounted beside its own: what the
// suites that start the service as a process run (ServiceProcess), and the bench's reactor scenario.
import '../../src/node-version';
import '../../src/tracing/tracing';
import { serve } from '../../src/serve';
import { TestLedgerModule } from './test-ledger/test-ledger.module';

void serve([TestLedgerModule]);
