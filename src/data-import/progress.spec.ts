import { Writable } from 'node:stream';
import { ProgressReport, rateLine } from './progress';

/** A stderr stand-in that keeps what is written; a terminal or not. */
function output(isTTY: boolean) {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(stream, { isTTY, columns: 120, cursorTo: () => true, clearLine: () => true });
  return { stream, text: () => written.join('') };
}

describe('ProgressReport', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('on a terminal, draws a bar with records, percent, rate and time left', () => {
    const { stream, text } = output(true);
    const report = new ProgressReport(stream, false);
    report.begin('transactions.json', 1000);
    jest.setSystemTime(10_000);
    report.update('transactions.json', { records: 50_000, done: 250, total: 1000 });
    report.end();
    expect(text()).toContain('transactions.json');
    expect(text()).toMatch(/25%/);
    expect(text()).toContain('50,000 records');
    expect(text()).toContain('5,000/s | about 30s left');
  });

  it('tells no time left until some of the total is done, never "NFs"', () => {
    const { stream, text } = output(true);
    const report = new ProgressReport(stream, false);
    report.begin('transactions.json', 1000);
    jest.setSystemTime(10_000);
    report.update('transactions.json', { records: 0, done: 0, total: 1000 });
    report.end();
    expect(text()).toContain('0 records | 0/s');
    expect(text()).not.toMatch(/ETA|NF|left/);
  });

  it('elsewhere, writes one plain line every few seconds', () => {
    const { stream, text } = output(false);
    const report = new ProgressReport(stream, false);
    report.begin('transactions.json', 1000);
    jest.setSystemTime(1000);
    report.update('transactions.json', { records: 1000, done: 100, total: 1000 });
    expect(text()).toBe('transactions.json: started\n');
    jest.setSystemTime(10_000);
    report.update('transactions.json', { records: 10_000, done: 500, total: 1000 });
    jest.setSystemTime(11_000);
    report.update('transactions.json', { records: 11_000, done: 550, total: 1000 });
    expect(text().split('\n')).toEqual([
      'transactions.json: started',
      'transactions.json: 10,000 records, 50%, 1,000 records/s, about 10s left',
      '',
    ]);
  });

  it('with quiet, writes nothing', () => {
    const { stream, text } = output(true);
    const report = new ProgressReport(stream, true);
    report.begin('transactions.json', 1000);
    jest.setSystemTime(10_000);
    report.update('transactions.json', { records: 10, done: 10, total: 1000 });
    report.end();
    expect(text()).toBe('');
  });

  it('sums up counts, duration and rate', () => {
    expect(rateLine(1_000_000, 'transactions', 192_000)).toBe(
      '1,000,000 transactions in 3m12s (5,208 transactions/s)',
    );
    expect(rateLine(40_000, 'transactions', 4_321)).toBe(
      '40,000 transactions in 4.3s (9,257 transactions/s)',
    );
  });

  it('gives no rate for a run under a second, and its duration in tenths', () => {
    expect(rateLine(6, 'transactions', 88)).toBe('6 transactions in 0.1s');
  });
});
