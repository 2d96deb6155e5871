// A run sends a reference only while its reservation holds it (guard). A file ledger's reservation
// removed under a run (by hand, or another host's cleanup), or a reference it never reserved, stops
// the send before its `initiating` line is written: nothing more is sent, and the run says why.
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileLedger } from '../../src/ledger/file.ts';
import { tempDirs } from '../engine/helpers.ts';

const dirs = tempDirs('pb-reservation-');
afterAll(() => dirs.remove());
const A = 'a'.repeat(64);

describe("a file ledger's reservation", () => {
  it('removed under the run: guard refuses every reference, nothing is written; a reference never reserved is refused too', async () => {
    const ledger = new FileLedger('http://127.0.0.1:2', join(await dirs.make(), 'ledger'));
    const reservation = await ledger.reserve({ batchId: A, file: '/f/a.csv', command: 'run', fresh: ['R1', 'R2'] });
    const written: string[] = [];
    await reservation.guard('R1', () => written.push('R1'));
    await expect(reservation.guard('R9', () => written.push('R9'))).rejects.toThrow(
      /^reference R9 is not in this run's reservation: not sent$/,
    );
    const file = readdirSync(ledger.dir).find((f) => f.endsWith('.reserve.json'))!;
    unlinkSync(join(ledger.dir, file));
    await expect(reservation.guard('R2', () => written.push('R2'))).rejects.toMatchObject({
      name: 'ReservationLost',
      message: `the reservation of this batch in ${ledger.dir} was removed: nothing more is sent; run again to continue`,
    });
    expect(written).toEqual(['R1']);
    await reservation.release();
  });
});
