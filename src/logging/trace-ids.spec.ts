import { traceIdOfTraceparent } from './trace-ids';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';

describe('traceIdOfTraceparent', () => {
  it.each(['01', '00', 'ff'])(
    'reads the trace id of version 00, whatever the flags (%s)',
    (flags) => {
      expect(traceIdOfTraceparent(`00-${TRACE_ID}-${PARENT_ID}-${flags}`)).toBe(TRACE_ID);
    },
  );

  it.each([
    ['no header', undefined],
    ['the header twice', [`00-${TRACE_ID}-${PARENT_ID}-01`, `00-${TRACE_ID}-${PARENT_ID}-01`]],
    ['two headers joined', `00-${TRACE_ID}-${PARENT_ID}-01, 00-${TRACE_ID}-${PARENT_ID}-01`],
    ['another version', `01-${TRACE_ID}-${PARENT_ID}-01`],
    ['upper case', `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`],
    ['a trace id of zeros', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
    ['a parent id of zeros', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`],
    ['no flags', `00-${TRACE_ID}-${PARENT_ID}`],
    ['text after it', `00-${TRACE_ID}-${PARENT_ID}-01-more`],
    ['a line break', `00-${TRACE_ID}-${PARENT_ID}-01\n`],
  ])('ignores %s', (_, header) => {
    expect(traceIdOfTraceparent(header)).toBeUndefined();
  });
});
