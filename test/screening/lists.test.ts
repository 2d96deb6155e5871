import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readList } from '../../src/screening/sanctions-lists.ts';
import { loadScreener, ScreeningError } from '../../src/screening/screening.ts';

const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));
const sha256 = (...files: string[]) => {
  const h = createHash('sha256');
  for (const f of files) h.update(readFileSync(f));
  return h.digest('hex');
};
const tmp = () => mkdtempSync(join(tmpdir(), 'pb-lists-'));
const refusal = async (path: string) => {
  const e: unknown = await readList(path).catch((err: unknown) => err);
  expect(e).toBeInstanceOf(ScreeningError);
  return e as ScreeningError;
};

describe('OFAC SDN CSV (sdn.csv with alt.csv and add.csv, no header)', () => {
  const dir = fixture('labelled');
  it('reads entries, aliases, programmes, BIC and IBAN remarks and countries, from sdn.csv or its folder', async () => {
    for (const path of [dir, join(dir, 'sdn.csv')]) {
      const { info, entries } = await readList(path);
      expect(info).toMatchObject({ path, format: 'ofac-sdn', entries: 32, dateFrom: 'mtime' });
      expect(info.digest).toBe(sha256(join(dir, 'sdn.csv'), join(dir, 'alt.csv'), join(dir, 'add.csv')));
      expect(info.date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/); // (the modification time, to the second)
      const bank = entries.find((e) => e.id === '119')!;
      expect(bank).toMatchObject({
        name: 'EASTERN HORIZON BANK',
        programme: 'IRAN',
        bics: ['EHBKAEAD'],
        ibans: ['AE070331234567890123456'],
      });
      expect(bank.countries).toEqual(['United Arab Emirates']);
      expect(entries.find((e) => e.id === '101')!.aliases).toEqual(['AL RASHEED, Muhammad Yousef', 'ABU YUSUF AL-IRAQI']);
      expect(entries.find((e) => e.id === '106')!.name).toBe('MÜLLER, Hans-Jürgen');
      expect(entries.some((e) => e.name.includes('\x1a'))).toBe(false);
    }
  });

  it('refuses an sdn.csv without its alt.csv: the aliases would be missing silently', async () => {
    const d = tmp();
    copyFileSync(join(dir, 'sdn.csv'), join(d, 'sdn.csv'));
    const e = await refusal(d);
    expect(e.code).toBe('LIST_UNREADABLE');
    expect(e.message).toContain('alt.csv');
  });

  it('refuses an sdn.csv named without "sdn" (ofac.csv, cons_prim.csv): it would be read as its own alt.csv', async () => {
    const d = tmp();
    for (const [from, to] of [
      ['sdn.csv', 'ofac.csv'],
      ['alt.csv', 'alt.csv'],
    ])
      copyFileSync(join(dir, from!), join(d, to!));
    const e = await refusal(join(d, 'ofac.csv'));
    expect(e.code).toBe('LIST_UNREADABLE');
    expect(e.message).toContain('name it sdn.csv');
  });

  // OFAC ends sdn.csv, alt.csv and add.csv with 0x1A after their last line: a download cut short lacks it.
  it.each(['sdn.csv', 'alt.csv', 'add.csv'])('refuses %s cut short at the end of a line: the entries lost would pass', async (name) => {
    const d = tmp();
    for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) copyFileSync(join(dir, f), join(d, f));
    const whole = readFileSync(join(d, name));
    writeFileSync(join(d, name), whole.subarray(0, whole.lastIndexOf(0x0a, whole.length - 3) + 1));
    const e = await refusal(d);
    expect(e.code).toBe('LIST_UNREADABLE');
    expect(e.message).toContain(`${name}: OFAC's end-of-file mark (0x1A after the last line) is missing`);
  });

  it('reads an OFAC file whose end mark is followed by blank lines', async () => {
    const d = tmp();
    for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) copyFileSync(join(dir, f), join(d, f));
    writeFileSync(join(d, 'sdn.csv'), readFileSync(join(d, 'sdn.csv'), 'utf8') + '\r\n'.repeat(5));
    expect((await readList(d)).info.entries).toBe(32);
  });

  it('refuses an OFAC line that does not start with an entry number: a damaged entry would be lost silently', async () => {
    const d = tmp();
    for (const f of ['sdn.csv', 'alt.csv']) copyFileSync(join(dir, f), join(d, f));
    const lines = readFileSync(join(d, 'sdn.csv'), 'utf8').split('\n');
    lines[3] = lines[3]!.replace(/^\d+/, 'x');
    writeFileSync(join(d, 'sdn.csv'), lines.join('\n'));
    const e = await refusal(d);
    expect(e.code).toBe('LIST_FORMAT');
    expect(e.message).toMatch(/sdn\.csv: row 4 does not start with an entry number/);
  });

  it('is as old as its oldest file: an alt.csv left from an older download ages the list', async () => {
    const d = tmp();
    for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) copyFileSync(join(dir, f), join(d, f));
    const old = new Date('2026-01-02T03:04:05Z');
    utimesSync(join(d, 'alt.csv'), old, old);
    expect((await readList(d)).info.date).toBe('2026-01-02T03:04:05Z');
  });

  it('reads without add.csv (countries only)', async () => {
    const d = tmp();
    for (const f of ['sdn.csv', 'alt.csv']) copyFileSync(join(dir, f), join(d, f));
    const { info, entries } = await readList(d);
    expect(info.entries).toBe(32);
    expect(info.digest).toBe(sha256(join(d, 'sdn.csv'), join(d, 'alt.csv')));
    expect(entries.find((e) => e.id === '119')!.countries).toEqual([]);
  });

  // OFAC cuts a remark at 1,000 characters and publishes the rest in sdn_comments.csv (its "spillover").
  const cut = (remark: string) => {
    const d = tmp();
    const [head, rest] = [remark.slice(0, 1000), remark.slice(1000)];
    writeFileSync(join(d, 'sdn.csv'), `7001,"NORTHERN BANK","-0- ","RUSSIA-EO14024",${'"-0- ",'.repeat(7)}"${head}"\r\n\x1a`);
    writeFileSync(join(d, 'alt.csv'), '7001,1,"aka","NB","-0- "\r\n\x1a');
    return { d, rest };
  };
  const remark = `${'Linked To: SOME HOLDING COMPANY; '.repeat(30)}SWIFT/BIC NRTHRUMM; alt. SWIFT/BIC NRTHRUMMXXX; IBAN RU0204452560000000000000012.`;

  it('reads the rest of a remark cut at 1,000 characters from sdn_comments.csv: its BICs and IBANs are listed too', async () => {
    const { d, rest } = cut(remark);
    writeFileSync(join(d, 'sdn_comments.csv'), `7001,"${rest}"\r\n`);
    const { info, entries } = await readList(d);
    expect(entries[0]).toMatchObject({ bics: ['NRTHRUMM', 'NRTHRUMMXXX'], ibans: ['RU0204452560000000000000012'] });
    expect(info.digest).toBe(sha256(...['sdn.csv', 'alt.csv', 'sdn_comments.csv'].map((f) => join(d, f))));
  });

  // OFAC does not double a quote inside a quoted field (sdn_comments.csv, 2020: a.k.a. "blackjack1987").
  it('reads a field with quotes inside it as OFAC writes them, whole: its aliases and BICs are listed', async () => {
    const { d } = cut('Linked To: SOME HOLDING COMPANY; '.repeat(31));
    writeFileSync(join(d, 'alt.csv'), '7001,1,"aka","NORTHERN "NB" BANK","-0- "\r\n\x1a');
    const rest = 'hone Number 8613314257947; a.k.a. "blackjack1987"; a.k.a. "khaleesi"; SWIFT/BIC LZRSKPPY; Linked To: LAZARUS GROUP.';
    writeFileSync(join(d, 'sdn_comments.csv'), `7001,"${rest}"\r\n`);
    const { entries } = await readList(d);
    expect(entries[0]).toMatchObject({ name: 'NORTHERN BANK', aliases: ['NORTHERN "NB" BANK'], bics: ['LZRSKPPY'] });
  });

  it('refuses a line where a quote inside a field ends it at a comma: the rest of the field would be lost', async () => {
    const { d } = cut(remark);
    writeFileSync(join(d, 'sdn_comments.csv'), '7001,"a.k.a. "NB", SWIFT/BIC LZRSKPPY."\r\n');
    const e = await refusal(d);
    expect(e.code).toBe('LIST_FORMAT');
    expect(e.message).toMatch(/sdn_comments\.csv: row 1 has 3 fields/);
  });

  it("refuses an sdn_comments.csv cut short: a cut remark's rest, and its BICs, would be missing silently", async () => {
    const { d, rest } = cut(remark);
    const line = readFileSync(join(d, 'sdn.csv'), 'utf8').replace('\r\n\x1a', '');
    writeFileSync(join(d, 'sdn.csv'), `${line}\r\n${line.replace('7001', '7002')}\r\n\x1a`);
    writeFileSync(join(d, 'sdn_comments.csv'), `7001,"${rest}"\r\n`); // (7002's line lost)
    const e = await refusal(d);
    expect(e.code).toBe('LIST_UNREADABLE');
    expect(e.message).toContain('entry 7002 is cut at 1,000 characters and its rest is not in sdn_comments.csv');
  });

  it('refuses a remark cut at 1,000 characters without sdn_comments.csv: its BICs would be missing silently', async () => {
    const e = await refusal(cut(remark).d);
    expect(e.code).toBe('LIST_UNREADABLE');
    expect(e.message).toContain('sdn_comments.csv');
  });

  it("finds its files in any case, as OFAC's Sanctions List Service names them (SDN.CSV, ALT.CSV, ADD.CSV, SDN_COMMENTS.CSV)", async () => {
    const d = tmp();
    for (const f of ['sdn.csv', 'alt.csv', 'add.csv']) copyFileSync(join(dir, f), join(d, f.toUpperCase()));
    for (const path of [d, join(d, 'SDN.CSV')]) {
      const { info, entries } = await readList(path);
      expect(info).toMatchObject({ entries: 32, digest: sha256(...['SDN.CSV', 'ALT.CSV', 'ADD.CSV'].map((f) => join(d, f))) });
      expect(entries.find((e) => e.id === '101')!.aliases).toHaveLength(2);
      expect(entries.find((e) => e.id === '119')!.countries).toEqual(['United Arab Emirates']);
    }
    const cutRemark = cut(remark);
    for (const f of ['sdn.csv', 'alt.csv']) renameSync(join(cutRemark.d, f), join(cutRemark.d, f.toUpperCase()));
    writeFileSync(join(cutRemark.d, 'SDN_COMMENTS.CSV'), `7001,"${cutRemark.rest}"\r\n`);
    expect((await readList(cutRemark.d)).entries[0]).toMatchObject({ bics: ['NRTHRUMM', 'NRTHRUMMXXX'] });
  });

  it('refuses an SDN.CSV without its ALT.CSV, or beside two of them (alt.csv and ALT.CSV), naming them', async () => {
    const d = tmp();
    copyFileSync(join(dir, 'sdn.csv'), join(d, 'SDN.CSV'));
    const missing = await refusal(join(d, 'SDN.CSV'));
    expect(missing).toMatchObject({ code: 'LIST_UNREADABLE', message: expect.stringContaining('no alt.csv (in any case)') as unknown });
    for (const f of ['alt.csv', 'ALT.CSV']) copyFileSync(join(dir, 'alt.csv'), join(d, f));
    expect((await refusal(d)).message).toContain('ALT.CSV and alt.csv are both there');
  });
});

describe('UN consolidated list XML', () => {
  it('reads individuals and entities with aliases, the reference number as id, and dateGenerated as the date', async () => {
    const path = fixture('un-consolidated.xml');
    const { info, entries } = await readList(path);
    expect(info).toMatchObject({ format: 'un-xml', entries: 3, date: '2026-11-20', dateFrom: 'file', digest: sha256(path) });
    expect(entries[0]).toMatchObject({
      id: 'QDi.901',
      name: 'TAREK SAMIR AL-HADDAD',
      programme: 'Al-Qaida',
      aliases: ['طارق سمير الحداد', 'Tariq Sameer Haddad', 'Abu Samir'],
      countries: ['Syrian Arab Republic', 'Syrian Arab Republic'],
    });
    expect(entries[1]).toMatchObject({ id: 'KPi.902', name: 'PAK SONG HUI', aliases: [] });
    expect(entries[2]).toMatchObject({ id: 'KPe.903', name: 'CORAL BAY MARINE SERVICES & SUPPLY', aliases: ['Coral Bay Shipping'] });
  });

  it("takes dateGenerated's UTC day, never a later day its offset writes", async () => {
    const d = tmp();
    const xml = readFileSync(fixture('un-consolidated.xml'), 'utf8');
    // 05:00 at +14:00 on the 21st is 15:00 UTC on the 20th: dated the 21st, the list would pass a max age 15 h too long
    writeFileSync(join(d, 'ahead.xml'), xml.replace('2026-11-20T09:15:02.113Z', '2026-11-21T05:00:00+14:00'));
    expect((await readList(join(d, 'ahead.xml'))).info.date).toBe('2026-11-20');
  });

  it('refuses a DTD (no entity is ever expanded) and malformed XML', async () => {
    const d = tmp();
    const xml = readFileSync(fixture('un-consolidated.xml'), 'utf8');
    writeFileSync(join(d, 'dtd.xml'), xml.replace('<CONSOLIDATED_LIST', '<!DOCTYPE x [<!ENTITY a "aaaa">]>\n<CONSOLIDATED_LIST'));
    expect((await refusal(join(d, 'dtd.xml'))).code).toBe('LIST_FORMAT');
    writeFileSync(join(d, 'torn.xml'), xml.slice(0, xml.indexOf('</INDIVIDUALS>')) + '</ENTITY>');
    expect((await refusal(join(d, 'torn.xml'))).code).toBe('LIST_FORMAT');
    // (cut short at an element's end: the list's closing tags are missing)
    writeFileSync(join(d, 'cut.xml'), xml.slice(0, xml.indexOf('  <ENTITIES>')));
    expect((await refusal(join(d, 'cut.xml'))).code).toBe('LIST_FORMAT');
  });
});

describe('OpenSanctions "simple" CSV', () => {
  it('reads names, aliases, BIC and IBAN identifiers, and the latest last_change as the date', async () => {
    const path = fixture('opensanctions-simple.csv');
    const { info, entries } = await readList(path);
    expect(info).toMatchObject({ format: 'opensanctions', entries: 3, date: '2026-11-18', dateFrom: 'file', digest: sha256(path) });
    expect(entries[0]).toMatchObject({ id: 'NK-synth1', aliases: ['Morozova Elena', 'Елена Морозова'], countries: ['ru'] });
    expect(entries[1]).toMatchObject({
      bics: ['APBKRUMM'],
      ibans: ['RU0204452560000000000000012'],
      programme: 'Synthetic Sanctions List;Another Synthetic List',
    });
    expect(entries[2]).toMatchObject({ bics: [], ibans: [] }); // an IMO number is neither
  });
});

describe("the business's own list (a CSV with a name column)", () => {
  it('reads id, name and identifiers', async () => {
    const { info, entries } = await readList(fixture('own-list.csv'));
    expect(info).toMatchObject({ format: 'plain', entries: 3, dateFrom: 'mtime' });
    expect(entries[1]).toMatchObject({ id: 'OWN-2', name: 'Harold Finch', ibans: ['GB33BUKB20201555555555'], countries: ['GB'] });
    expect(entries[2]).toMatchObject({ id: 'OWN-3', accounts: ['99887766'] });
  });

  it('reads a row of an account, IBAN or BIC without a name: the identifier is listed all the same', async () => {
    const d = tmp();
    writeFileSync(
      join(d, 'own.csv'),
      'id,name,bic,iban,account\nW1,John Smith,,,\nW2,,,,99887766\nW3,,,GB33BUKB20201555555555,\nW4,,SOMEBANKXXX,,\n,,,,\n',
    );
    const s = await loadScreener([join(d, 'own.csv')]);
    expect(s.lists[0]!.entries).toBe(4);
    const payee = { reference: 'R1', row: 2, name: 'Jane Doe' };
    expect(s.screen({ ...payee, accountNumber: '99887766' })).toMatchObject([{ entryId: 'W2', on: 'account', band: 'hit' }]);
    expect(s.screen({ ...payee, iban: 'GB33BUKB20201555555555' })).toMatchObject([{ entryId: 'W3', on: 'iban', band: 'hit' }]);
    expect(s.screen({ ...payee, bic: 'SOMEBANK' })).toMatchObject([{ entryId: 'W4', on: 'bic', band: 'hit' }]);
  });

  it('names a row without an id by its row number as a spreadsheet shows it: blank rows counted, a cell of two lines one row', async () => {
    const d = tmp();
    writeFileSync(join(d, 'names.csv'), 'Name,Programme\nAlpha Beta,"SDGT\nsince 2001"\n\nGamma Delta,\n  \nEpsilon Zeta,\n');
    expect((await readList(join(d, 'names.csv'))).entries.map((e) => e.id)).toEqual(['row 2', 'row 4', 'row 6']);
  });

  it('reads one saved by Excel with a "sep=;" first line, its rows numbered as the spreadsheet shows them (no sep line)', async () => {
    const d = tmp();
    const table = 'name;iban;country\r\nSmith, John;;GB\r\nHarold Finch;GB33BUKB20201555555555;GB\r\n';
    writeFileSync(join(d, 'own.csv'), `sep=;\r\n${table}`);
    writeFileSync(join(d, 'no-sep.csv'), table); // (the delimiter found as a batch's is)
    for (const file of ['own.csv', 'no-sep.csv']) {
      const { info, entries } = await readList(join(d, file));
      expect(info, file).toMatchObject({ format: 'plain', entries: 2 });
      expect(entries, file).toMatchObject([
        { id: 'row 2', name: 'Smith, John', countries: ['GB'] },
        { id: 'row 3', name: 'Harold Finch', ibans: ['GB33BUKB20201555555555'] },
      ]);
    }
  });

  it('reads one whose lines end in CR alone (an old Mac), one entry a line, rows numbered as a spreadsheet shows them', async () => {
    const d = tmp();
    writeFileSync(join(d, 'own.csv'), 'id,name,country\rOWN-1,Quickfix Refunds Ltd,GB\r\r,Harold Finch,GB\r');
    const { info, entries } = await readList(join(d, 'own.csv'));
    expect(info).toMatchObject({ format: 'plain', entries: 2 });
    expect(entries).toMatchObject([
      { id: 'OWN-1', name: 'Quickfix Refunds Ltd', countries: ['GB'] },
      { id: 'row 4', name: 'Harold Finch', countries: ['GB'] },
    ]);
  });
});

describe('a list that cannot be used is an error, never an empty list', () => {
  it.each([
    ['a missing file', (d: string) => join(d, 'nope.csv'), 'LIST_UNREADABLE'],
    ['a folder without sdn.csv', (d: string) => d, 'LIST_UNREADABLE'],
    [
      'a CSV without a name column',
      (d: string) => (writeFileSync(join(d, 'x.csv'), 'reference,amount\nA,1\n'), join(d, 'x.csv')),
      'LIST_FORMAT',
    ],
    [
      'an XML that is not the consolidated list',
      (d: string) => (writeFileSync(join(d, 'x.xml'), '<?xml version="1.0"?><sdnList/>'), join(d, 'x.xml')),
      'LIST_FORMAT',
    ],
    ['an empty file', (d: string) => (writeFileSync(join(d, 'x.csv'), ''), join(d, 'x.csv')), 'LIST_FORMAT'],
    ['a list with a header and no entry', (d: string) => (writeFileSync(join(d, 'x.csv'), 'name,id\n'), join(d, 'x.csv')), 'LIST_EMPTY'],
  ])('%s', async (_what, make, code) => {
    expect((await refusal(make(tmp()))).code).toBe(code);
  });

  it("refuses a CSV that is not UTF-8 (Excel's Windows-1252): its accented names would match nobody", async () => {
    const d = tmp();
    writeFileSync(
      join(d, 'own.csv'),
      Buffer.from('id,name,programme\nW1,John Smith,"SDGT\nsince 2001"\nW2,Fran\xe7ois L\xe9v\xeaque,\n', 'latin1'),
    );
    const e = await refusal(join(d, 'own.csv'));
    expect(e.code).toBe('LIST_FORMAT');
    expect(e.message).toMatch(/own\.csv: row 3 is not UTF-8 text/);
  });

  it('loadScreener refuses the whole set when one list is unusable', async () => {
    await expect(loadScreener([fixture('own-list.csv'), join(tmp(), 'missing.csv')])).rejects.toMatchObject({ code: 'LIST_UNREADABLE' });
  });
});
