import { retryDelay } from './retry-schedule';

const SECOND = 1000;
const DAY = 86_400_000;

describe('retryDelay', () => {
  it("follows Standard Webhooks' schedule without jitter", () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => retryDelay(n, SECOND, DAY, middle))).toEqual([
      0,
      5 * SECOND,
      300 * SECOND,
      1800 * SECOND,
      7200 * SECOND,
      18_000 * SECOND,
      36_000 * SECOND,
      36_000 * SECOND,
      36_000 * SECOND,
    ]);
  });

  it('moves each delay by at most 20% either way', () => {
    expect(retryDelay(2, SECOND, DAY, () => 0)).toBe(4 * SECOND);
    expect(retryDelay(2, SECOND, DAY, () => 0.999_999)).toBe(6 * SECOND);
    for (let i = 0; i < 100; i++) {
      const delay = retryDelay(3, SECOND, DAY);
      expect(delay).toBeGreaterThanOrEqual(240 * SECOND);
      expect(delay).toBeLessThanOrEqual(360 * SECOND);
    }
  });

  it('never waits past the moment the subscription is disabled', () => {
    expect(retryDelay(7, SECOND, 60 * SECOND, () => 0.5)).toBe(60 * SECOND);
    expect(retryDelay(4, SECOND, 0, () => 0.5)).toBe(0);
  });

  it('scales with the base, as tests shorten it', () => {
    expect(retryDelay(2, 10, DAY, () => 0.5)).toBe(50);
  });
});
