// What the terminal shows while a batch runs: the bar fits 80 columns with its ETA whole, and its
// requests a second count only requests to the service, never the PUTs to the document storage.
import { describe, expect, it } from 'vitest';
import { barLine, etaText, preflightText, requestMeter, stoppingText } from '../../src/cli/render.ts';
import type { ClientEvent } from '../../src/client/http.ts';

describe('the progress bar', () => {
  it('fits 80 columns with the ETA whole, however big the counts and however long the wait', () => {
    const cases = [
      { value: 0, total: 52, failed: 0, rps: '0.0', eta: 'NULL' },
      { value: 26, total: 52, failed: 1, rps: '5.0', eta: 11 },
      { value: 99_999, total: 100_000, failed: 12_345, rps: '5.0', eta: 400_000 },
      { value: 5_000, total: 100_000, failed: 0, rps: '4.8', eta: 19 * 3600 + 59 * 60 + 59 },
    ];
    for (const v of cases) {
      const line = barLine(v, 80);
      expect(line.length, line).toBeLessThan(80);
      expect(line).toContain(`${v.value}/${v.total} rows | failed ${v.failed} | ${v.rps} req/s | ETA ${etaText(v.eta)}`);
    }
    expect(barLine(cases[2]!, 80)).toMatch(/ETA 99h\+$/);
    expect(barLine(cases[3]!, 80)).toMatch(/ETA 19h59m$/);
    expect(barLine(cases[0]!, 80)).toMatch(/ETA --$/);
  });

  it('shows the bar where there is room, and leaves it out rather than cut the figures', () => {
    const v = { value: 13, total: 52, failed: 0, rps: '5.0', eta: 8 };
    const wide = barLine(v, 120);
    expect(wide).toMatch(/^ [\u2588\u2591]{40} 13\/52 rows/);
    expect(wide.match(/\u2588/g)).toHaveLength(10); // a quarter of 40
    expect(barLine(v, 50)).toBe(' 13/52 rows | failed 0 | 5.0 req/s | ETA 8s');
  });

  it('writes a wait as seconds, minutes or hours in at most 6 characters', () => {
    expect([0, 59, 61, 3599, 3600, 7 * 3600 + 5 * 60, 100 * 3600].map(etaText)).toEqual([
      '0s',
      '59s',
      '1m01s',
      '59m59s',
      '1h00m',
      '7h05m',
      '99h+',
    ]);
    expect(['INF', 'NULL', Number.NaN, -1].map(etaText)).toEqual(['--', '--', '--', '--']);
  });
});

describe('requests a second', () => {
  const answer = (ms: number, storage = false): ClientEvent => ({
    type: 'response',
    route: storage ? 'uploadDocument' : 'initiate',
    status: 200,
    requestId: 'r',
    ms,
    ...(storage ? { storage: true as const } : {}),
  });

  it('counts requests to the service only: the PUTs to the document storage are not', () => {
    let now = 0;
    const meter = requestMeter(() => now);
    // 5 requests to the service a second for 10 s (the pace the client keeps), each with its PUT to storage
    for (let i = 0; i < 50; i++) {
      now = i * 200 + 150;
      meter.add(answer(150));
      meter.add(answer(40, true));
    }
    expect(meter.perSecond()).toBe('5.0');
    now += 5000;
    expect(meter.perSecond()).toBe('0.0');
  });

  it('dates a request when it was sent, so slow answers arriving together do not raise the figure', () => {
    let now = 0;
    const meter = requestMeter(() => now);
    // sent at 5 a second for 6 s, all answered at once at the end
    now = 6000;
    for (let i = 0; i < 30; i++) meter.add(answer(6000 - i * 200));
    expect(Number(meter.perSecond())).toBeLessThanOrEqual(5);
  });
});

describe('what the terminal says', () => {
  it('names the preflight step it is at', () => {
    expect(preflightText({ step: 'wallets' })).toMatch(/wallets and the countries/);
    expect(preflightText({ step: 'methods', corridors: 12, done: 5 })).toBe(
      'preflight: reading the payment methods of 12 corridors (5 done)...',
    );
  });

  it('answers Ctrl-C with what it is doing and how to stop at once', () => {
    expect(stoppingText(3)).toMatch(
      /^payout-batch: stopping: no new payout will start; waiting for 3 rows in flight to be answered and journalled; press Ctrl-C again to stop at once \(safe/,
    );
    expect(stoppingText(1)).toMatch(/waiting for 1 row in flight/);
    expect(stoppingText(undefined)).toMatch(/stopping before sending: no payout will start; press Ctrl-C again/);
  });
});
