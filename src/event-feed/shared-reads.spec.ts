import { SharedReads } from './shared-reads';

describe('SharedReads, one read for the readers that ask for the same thing together', () => {
  it('runs one load for the readers that ask while it is under way, and gives them the same answer', async () => {
    const reads = new SharedReads<{ body: string }>();
    let loads = 0;
    let finish!: (value: { body: string }) => void;
    const load = () => {
      loads++;
      return new Promise<{ body: string }>((resolve) => (finish = resolve));
    };
    const answers = Array.from({ length: 500 }, () => reads.read('7|100', load));
    finish({ body: '[]' });
    const [first, ...others] = await Promise.all(answers);
    expect(loads).toBe(1);
    for (const other of others) expect(other).toBe(first);
  });

  it('reads apart what differs, and again once a read has settled, even a failed one', async () => {
    const reads = new SharedReads<string>();
    const load = jest.fn((value: string) => Promise.resolve(value));
    expect(
      await Promise.all([reads.read('a', () => load('a')), reads.read('b', () => load('b'))]),
    ).toEqual(['a', 'b']);
    await expect(reads.read('a', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await reads.read('a', () => load('a again'))).toBe('a again');
    expect(load).toHaveBeenCalledTimes(3);
  });

  it('keeps the answers of reads whose answer never changes, while they weigh the budget, and no failure', async () => {
    const reads = new SharedReads<string>({ budget: 10, weigh: (answer) => answer.length });
    const load = jest.fn((value: string) => Promise.resolve(value));
    expect(await reads.read('a', () => load('1234'))).toBe('1234');
    expect(await reads.read('a', () => load('other'))).toBe('1234');
    expect(await reads.read('b', () => load('123456'))).toBe('123456');
    // Past the budget: shared while under way, read again after.
    expect(await reads.read('c', () => load('1'))).toBe('1');
    expect(await reads.read('c', () => load('2'))).toBe('2');
    await expect(reads.read('d', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await reads.read('d', () => load(''))).toBe('');
    expect(await reads.read('b', () => load('other'))).toBe('123456');
    expect(load.mock.calls).toEqual([['1234'], ['123456'], ['1'], ['2'], ['']]);
  });
});
