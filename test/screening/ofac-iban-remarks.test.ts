import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readList } from '../../src/screening/sanctions-lists.ts';

const q = (s: string) => `"${s}"`;
/** An OFAC folder of one entry whose remark is `remark`. */
function ofacWith(remark: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'pb-ofac-iban-'));
  const row = [7001, q('VOSTOK TRADE BANK'), q('-0- '), q('RUSSIA-EO14024'), ...Array<string>(7).fill(q('-0- ')), q(remark)];
  writeFileSync(join(dir, 'sdn.csv'), `${row.join(',')}\r\n\x1a`);
  writeFileSync(join(dir, 'alt.csv'), `7001,8001,${q('aka')},${q('VTB VOSTOK')},-0- \r\n\x1a`);
  return dir;
}

describe("an OFAC remark's IBAN written in groups of four", () => {
  it('is listed whole however long (Russia, 33 characters: 41 with its spaces)', async () => {
    const iban = 'RU02 0445 2560 0407 0281 0412 3456 7890 1';
    for (const remark of [`SWIFT/BIC VOSTRUMM; IBAN ${iban}; Website www.example.ru.`, `IBAN ${iban} (Russia).`])
      expect((await readList(ofacWith(remark))).entries[0]!.ibans, remark).toEqual([iban.replace(/ /g, '')]);
  });
});
