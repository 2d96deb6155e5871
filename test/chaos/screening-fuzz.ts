// Fuzz: sanctions screening (src/screening/README.md) end to end. A list written by this script's own writers in one
// of the four formats the tool reads, a batch of payees some of whom are parties of its entries written as people
// write them, run through every command that screens; judged by the sandbox's own records against this script's model
// of who is listed (never the tool's matcher).
//   npx tsx test/chaos/screening-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//   (`npm run build` first: every command is a process of dist/)
//
// Each scenario (fast-check, from the seed): 3 to 7 entries of a catalogue of people and firms (aliases, a name in
// Arabic script, a Cyrillic spelling, BICs of a head office or a branch, IBANs), listed as
//   OFAC SDN: sdn.csv + alt.csv + add.csv, 0x1A ends, a remark past 1,000 characters whose rest (its BIC) is in
//        sdn_comments.csv, the names in capitals sometimes, the folder or sdn.csv named;
//   UN consolidated XML (names in parts, ALIAS_NAME, NAME_ORIGINAL_SCRIPT; no identifiers);
//   OpenSanctions "simple" CSV (aliases with the other scripts, identifiers BIC;IBAN);
//   a plain CSV (name, id, bic, iban, country, programme; , ; tab |, a sep= line, a BOM, columns in any order);
// a batch of 3 to 9 rows (CSV; pain.001 .09 a third of the time, with UltmtCdtr / UltmtDbtr parties), SEPA or SWIFT:
//   DERIVED rows, a listed party written otherwise: case, diacritics dropped, added or decomposed, Cyrillic and Greek
//   letters that look Latin, 0 for o, full-width letters, word order, "FAMILY, Given", legal form changed or dropped, a
//   title, an initial for a given name, the given name and family name only, a hyphen dropped, Northstar as North Star,
//   a vowel changed, a soft hyphen or zero-width space inside a word, one letter mistyped in a long word, an alias, the
//   Cyrillic spelling, the listed original script; or its IBAN (in groups, small letters, dashes, as a SWIFT account
//   number), its BIC (small letters, spaced, a branch of a listed head office, the head office or another branch of a
//   listed branch, as intermediary); in pain.001 as the ultimate creditor or payer (by name or AnyBIC);
//   NOT PROMISED rows (counted apart, README does not promise them): an initial and the family name alone against a
//   three-word name, a legal form spelled out ("Limited Liability Company"), Petroff for Petrov (a Jr or Sr suffix:
//   promised since 2026-12-02, drawn among the derived rows);
//   INNOCENT rows: names of a pool none of which is listed, near misses among them (Ivana Petrova, Blue Lagoon Spa),
//   identifiers no list holds.
// Commands (processes): `screen --json`, then one of `run FILE`, `plan --out` + `run --plan` (the same list, or one an
// entry was added to between plan and run), a `watch DIR --once` tick (its list by full path or relative to DIR), or
// the list cut short (OFAC: sdn.csv or alt.csv at any byte or a line's end, or sdn_comments.csv missing; UN: anywhere;
// the others: empty or their header only) under screen, run or plan; `--allow-partial` or not; then `retry` of the
// results (with the list or without) and the file run again, sometimes. The sandbox in its strict or variant reading.
// Checked, by the sandbox's records (each payout's key and body, its request log):
//   (a) no payout reaches a DERIVED row (its payee, ultimate creditor or payer), by any command, rerun or retry; and
//       `screen` holds each such row `validate` accepts;
//   (b) every payout is a row of the file (its key a reference of the batch), paid to the payee the row names;
//   (c) a list that cannot be read stops the command (exit 2) before any initiate, naming the list file;
//   (d) no "unexpected error" nor stack trace;
//   (e) innocent rows held (by `screen`): false positives, a rate printed (the README: about 1 % on its labelled set);
//   (f) a batch holding a DERIVED row, run without --allow-partial (run, run --plan, watch, retry), sends nothing.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { mkdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runCli, workDir, type CliRun } from '../engine/helpers.ts';
import { pain001 } from '../input/pain001-files.ts';
import { fuzzFlags, leave, parseJson, payoutsByReference, runScenarios, serviceRecords, threw } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

/** An IBAN of `country` with its check digits computed (mod 97). */
function ibanOf(country: string, bban: string): string {
  const digits = (s: string) => [...s].map((c) => (/\d/.test(c) ? c : String(c.charCodeAt(0) - 55))).join('');
  return `${country}${String(98n - (BigInt(digits(bban + country + '00')) % 97n)).padStart(2, '0')}${bban}`;
}

/** A listed party: a person (given names, family names) or a firm (words, legal form). */
interface Party {
  id: string;
  given?: string[];
  family?: string[];
  words?: string[];
  legal?: string;
  aliases: string[];
  /** The name in its original script (listed by the UN and OpenSanctions formats). */
  script?: string;
  /** Given names and family name in Cyrillic, as a Russian payroll writes them (not listed: the README transliterates). */
  cyrillic?: string;
  bics: string[];
  ibans: string[];
  country: string;
  programme: string;
}
// prettier-ignore
const CATALOGUE: Party[] = [
  { id: '7101', given: ['Ivan', 'Sergeyevich'], family: ['PETROV'], aliases: ['Ivan PETROFF'], cyrillic: 'Иван Сергеевич Петров', bics: [], ibans: [], country: 'Russia', programme: 'RUSSIA-EO14024' },
  { id: '7102', given: ['Lucía'], family: ['GARCÍA', 'MÁRQUEZ'], aliases: ['Lucy GARCIA MARQUEZ'], bics: [], ibans: [], country: 'Venezuela', programme: 'VENEZUELA' },
  { id: '7103', given: ['Chidi', 'Emmanuel'], family: ['OKONKWO'], aliases: ['Emeka OKONKWO'], bics: [], ibans: [ibanOf('DE', '370400440532017711')], country: 'Nigeria', programme: 'SDGT' },
  { id: '7104', words: ['NORTHSTAR', 'SHIPPING'], legal: 'LLC', aliases: ['NORTH STAR MARITIME'], bics: ['NSTRDEHH'], ibans: [ibanOf('DE', '200400600123456789')], country: 'Iran', programme: 'IRAN' },
  { id: '7105', words: ['KRASNODAR', 'METALS'], legal: 'JSC', aliases: ['KRASMET HOLDINGS'], bics: ['KRMTDEBBXXX'], ibans: [], country: 'Russia', programme: 'RUSSIA-EO14024' },
  { id: '7106', given: ['Tarek', 'Samir'], family: ['AL-HADDAD'], aliases: ['Tariq Sameer HADDAD'], script: 'طارق سمير الحداد', cyrillic: 'Тарек Самир Аль-Хаддад', bics: [], ibans: [ibanOf('DE', '500105175407324931')], country: 'Syria', programme: 'SDGT' },
  { id: '7107', words: ['BLUE', 'LAGOON', 'TRADING'], legal: 'FZE', aliases: [], bics: ['BLLGDEFF123'], ibans: [], country: 'United Arab Emirates', programme: 'DPRK3' },
  { id: '7108', given: ['Yelena', 'Viktorovna'], family: ['VOLKOVA'], aliases: ['Elena VOLKOVA'], cyrillic: 'Елена Викторовна Волкова', bics: [], ibans: [], country: 'Russia', programme: 'CYBER2' },
  { id: '7109', words: ['ORIENT', 'PEARL', 'FINANCE'], legal: 'LIMITED', aliases: ['ORIENTAL PEARL'], bics: ['ORPLDEMMXXX'], ibans: [ibanOf('DE', '700202700015820400')], country: 'China', programme: 'DPRK3' },
  { id: '7110', given: ['Hans-Jürgen'], family: ['MÜLLER'], aliases: [], bics: [], ibans: [], country: 'Germany', programme: 'SDGT' },
];
/** Names no entry of the catalogue is; the near misses (a listed word or two, another party) are counted the same. */
// prettier-ignore
const INNOCENT = ['Maria Schneider', 'Chen Wei Ming', 'Olusegun Adebayo', 'Fatima Zahra Benali', 'Jonas Lindqvist', 'Priya Raman',
  'Tomasz Nowak', 'Sofia Rossi', 'Kwame Mensah', 'Acme Widgets Ltd', 'Harbour View Bakery', 'Greenfield Logistics GmbH', 'Анна Смирнова',
  '김민준', 'Ivana Petrova', 'Lucas Garcia', 'Chidi Okoro', 'Northstar Bakery', 'Krasnodar Fruit Market', 'Samir Haddadi',
  'Orient Express Finance', 'Blue Lagoon Spa', 'Hans Mueller-Lüdenscheid Bau'];
const NEAR_MISS = new Set(INNOCENT.slice(14));
const INNOCENT_IBANS = [
  'DE89370400440532013000',
  'FR1420041010050500013M02606',
  'NL91ABNA0417164300',
  'ES9121000418450200051332',
  'BE68539007547034',
];
const INNOCENT_BICS = ['COBADEFFXXX', 'DEUTDEFF', 'BYLADEMM', 'DRESDEFF500'];

const STRUCTURES = [
  'asListed',
  'reversed',
  'ofacOrder',
  'firstLast',
  'initial',
  'legalSwap',
  'title',
  'alias',
  'cyrillic',
  'script',
  'hyphen',
  'initialOnly',
  'legalLong',
  'offEnding',
  'suffix',
] as const;
type Structure = (typeof STRUCTURES)[number];
/** Not promised by the README (counted apart, never a violation). */
const NOT_PROMISED = new Set<Structure>(['initialOnly', 'legalLong', 'offEnding']);
const SURFACE = [
  'lower',
  'upper',
  'titleCase',
  'stripDiacritics',
  'addDiacritics',
  'confusable',
  'zero',
  'invisible',
  'typo',
  'spaces',
  'greek',
  'fullwidth',
  'decomposed',
  'vowel',
  'split',
] as const;
type Surface = (typeof SURFACE)[number];
const WHERE = ['name', 'name', 'name', 'iban', 'account', 'bic', 'intermediary', 'ultimateCreditor', 'ultimateDebtor'] as const;

interface RowSpec {
  /** 0..4: innocent; else derived from the scenario's entry `entry`. */
  kind: number;
  entry: number;
  where: number;
  structure: number;
  surface: number[];
  /** Which innocent name, IBAN, BIC; how an identifier is typed. */
  pick: number;
  swift: boolean;
}
interface Scenario {
  entries: number[];
  format: 'ofac' | 'un' | 'opensanctions' | 'plain';
  list: { caps: boolean; folder: boolean; longRemark: boolean; delimiter: number; sep: boolean; bom: boolean; order: number };
  rows: RowSpec[];
  pain: boolean;
  command: 'run' | 'plan' | 'planChanged' | 'watch' | 'cut';
  cut: { at: number; which: number; under: number };
  allowPartial: boolean;
  retry: number;
  rerun: boolean;
  variant: boolean;
}

const nat = (n: number) => fc.nat({ max: n });
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  entries: fc.uniqueArray(nat(CATALOGUE.length - 1), { minLength: 3, maxLength: 7 }),
  format: fc.constantFrom('ofac', 'un', 'opensanctions', 'plain'),
  list: fc.record({
    caps: fc.boolean(),
    folder: fc.boolean(),
    longRemark: fc.boolean(),
    delimiter: nat(3),
    sep: fc.boolean(),
    bom: fc.boolean(),
    order: nat(5),
  }),
  rows: fc.array(
    fc.record({
      kind: nat(9),
      entry: nat(20),
      where: nat(WHERE.length - 1),
      structure: nat(STRUCTURES.length - 1),
      surface: fc.array(nat(SURFACE.length - 1), { maxLength: 2 }),
      pick: nat(100),
      swift: fc.boolean(),
    }),
    { minLength: 3, maxLength: 9 },
  ),
  pain: fc.constantFrom(false, false, true),
  command: fc.constantFrom('run', 'run', 'plan', 'planChanged', 'watch', 'cut'),
  cut: fc.record({ at: fc.double({ min: 0.05, max: 0.999, noNaN: true }), which: nat(2), under: nat(2) }),
  allowPartial: fc.constantFrom(true, true, false),
  retry: nat(2),
  rerun: fc.boolean(),
  variant: fc.boolean(),
});

// ---- the lists, by this script's own writers ----

const personName = (p: Party) => [...p.given!, ...p.family!].join(' ');
const firmName = (p: Party) => [...p.words!, p.legal!].join(' ');
const primary = (p: Party) => (p.words ? firmName(p) : personName(p));
/** What a format lists of a party: its names (to derive from) and identifiers. */
function listed(p: Party, format: Scenario['format']) {
  const names = format === 'plain' ? [primary(p)] : [primary(p), ...p.aliases];
  const script = (format === 'un' || format === 'opensanctions') && p.script ? [p.script] : [];
  const ids = format === 'un' ? { bics: [], ibans: [] } : format === 'plain' ? { bics: p.bics.slice(0, 1), ibans: p.ibans.slice(0, 1) } : p;
  return { names, script, bics: ids.bics, ibans: ids.ibans };
}
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const q = (s: string) => `"${s}"`;

/** Writes the list into `dir`; the path to give --sanctions-list and the files it is made of. */
async function writeList(dir: string, parties: Party[], sc: Scenario): Promise<{ path: string; files: string[] }> {
  await mkdir(dir, { recursive: true });
  const o = sc.list;
  if (sc.format === 'ofac') {
    const name = (n: string) => (o.caps ? n.toUpperCase() : n);
    const crlf = (lines: string[]) => lines.map((l) => `${l}\r\n`).join('') + '\x1a';
    const comments: string[] = [];
    const sdn = parties.map((p) => {
      let remarks = [
        // (a quote OFAC does not double, read whole: README "Lists")
        ...(o.order % 2 ? [`a.k.a. "${p.aliases[0] ?? p.id}"`] : []),
        ...p.bics.map((b) => `SWIFT/BIC ${b}`),
        ...p.ibans.map((i) => `IBAN ${i}`),
        'Synthetic entry of a fuzz.',
      ].join('; ');
      if (o.longRemark && (p.bics.length || p.ibans.length)) {
        // the identifiers past the 1,000 characters OFAC keeps in sdn.csv: their rest in sdn_comments.csv
        remarks = 'Additional Sanctions Information - Subject to Secondary Sanctions; '.repeat(15) + remarks;
        comments.push(`${p.id},${q(remarks.slice(1000))}`);
        remarks = remarks.slice(0, 1000);
      }
      const listedName = p.words ? firmName(p) : `${p.family!.join(' ')}, ${p.given!.join(' ')}`;
      return [p.id, q(listedName), q(p.words ? '-0- ' : 'individual'), q(p.programme), ...Array(7).fill(q('-0- ')), q(remarks)].join(',');
    });
    let n = 0;
    const alt = parties.flatMap((p) => p.aliases.map((a) => `${p.id},${++n},"aka",${q(a)},"-0- "`));
    const add = parties.map((p) => `${p.id},${++n},"-0- ","-0- ",${q(p.country)},"-0- "`);
    const files = [join(dir, name('sdn.csv')), join(dir, name('alt.csv')), join(dir, name('add.csv'))];
    await writeFile(files[0]!, crlf(sdn));
    await writeFile(files[1]!, crlf(alt));
    await writeFile(files[2]!, crlf(add));
    if (comments.length) {
      files.push(join(dir, name('sdn_comments.csv')));
      await writeFile(files[3]!, crlf(comments));
    }
    return { path: o.folder ? dir : files[0]!, files };
  }
  if (sc.format === 'un') {
    const person = (p: Party) =>
      `<INDIVIDUAL><DATAID>${p.id}</DATAID><FIRST_NAME>${xml(p.given![0]!)}</FIRST_NAME>` +
      (p.given!.length > 1 ? `<SECOND_NAME>${xml(p.given!.slice(1).join(' '))}</SECOND_NAME>` : '') +
      `<THIRD_NAME>${xml(p.family!.join(' '))}</THIRD_NAME><UN_LIST_TYPE>${p.programme}</UN_LIST_TYPE><REFERENCE_NUMBER>QDi.${p.id}</REFERENCE_NUMBER>` +
      (p.script ? `<NAME_ORIGINAL_SCRIPT>${xml(p.script)}</NAME_ORIGINAL_SCRIPT>` : '') +
      `<NATIONALITY><VALUE>${xml(p.country)}</VALUE></NATIONALITY>` +
      p.aliases
        .map(
          (a) =>
            `<INDIVIDUAL_ALIAS><QUALITY>Good</QUALITY><ALIAS_NAME>${o.order % 2 ? `<![CDATA[${a}]]>` : xml(a)}</ALIAS_NAME></INDIVIDUAL_ALIAS>`,
        )
        .join('') +
      '<INDIVIDUAL_ALIAS><QUALITY/><ALIAS_NAME/></INDIVIDUAL_ALIAS><!-- an empty alias, as the UN writes one -->' +
      `</INDIVIDUAL>`;
    const firm = (p: Party) =>
      `<ENTITY><DATAID>${p.id}</DATAID><FIRST_NAME>${xml(firmName(p))}</FIRST_NAME><UN_LIST_TYPE>${p.programme}</UN_LIST_TYPE>` +
      `<REFERENCE_NUMBER>QDe.${p.id}</REFERENCE_NUMBER>` +
      p.aliases.map((a) => `<ENTITY_ALIAS><QUALITY>a.k.a.</QUALITY><ALIAS_NAME>${xml(a)}</ALIAS_NAME></ENTITY_ALIAS>`).join('') +
      `<ENTITY_ADDRESS><COUNTRY>${xml(p.country)}</COUNTRY></ENTITY_ADDRESS></ENTITY>`;
    const path = join(dir, 'consolidated.xml');
    await writeFile(
      path,
      `<?xml version="1.0" encoding="UTF-8"?>\n<CONSOLIDATED_LIST dateGenerated="2026-11-30T08:00:00.000Z">\n<INDIVIDUALS>\n` +
        parties
          .filter((p) => !p.words)
          .map(person)
          .join('\n') +
        `\n</INDIVIDUALS>\n<ENTITIES>\n${parties
          .filter((p) => p.words)
          .map(firm)
          .join('\n')}\n</ENTITIES>\n</CONSOLIDATED_LIST>\n`,
    );
    return { path, files: [path] };
  }
  if (sc.format === 'opensanctions') {
    const header =
      'id,schema,name,aliases,birth_date,countries,addresses,identifiers,sanctions,phones,emails,program_ids,dataset,first_seen,last_seen,last_change'.split(
        ',',
      );
    const rows = parties.map((p) => [
      `NK-${p.id}`,
      p.words ? 'Company' : 'Person',
      primary(p),
      [...p.aliases, ...(p.script ? [p.script] : [])].join(';'),
      '',
      'xx',
      '',
      [...p.bics, ...p.ibans].join(';'),
      'Sanctioned by a fuzz',
      '',
      '',
      '',
      'Fuzz Sanctions',
      '2024-01-01T00:00:00',
      '2026-11-30T00:00:00',
      '2026-11-29T10:00:00',
    ]);
    const path = join(dir, 'targets.simple.csv');
    await writeFile(path, (o.bom ? '\ufeff' : '') + stringify([header, ...rows], { quoted: true }));
    return { path, files: [path] };
  }
  const columns = ['name', 'id', 'bic', 'iban', 'country', 'programme'];
  const order = [...columns].sort(
    (a, b) => (((columns.indexOf(a) + 1) * (o.order + 3)) % 7) - (((columns.indexOf(b) + 1) * (o.order + 3)) % 7),
  );
  const delimiter = [',', ';', '\t', '|'][o.delimiter]!;
  const cell = (p: Party, c: string) =>
    ({ name: primary(p), id: `P-${p.id}`, bic: p.bics[0] ?? '', iban: p.ibans[0] ?? '', country: p.country, programme: p.programme })[c]!;
  const path = join(dir, 'own-list.csv');
  await writeFile(
    path,
    (o.bom && !o.sep ? '\ufeff' : '') +
      (o.sep ? `sep=${delimiter}\r\n` : '') +
      stringify([order, ...parties.map((p) => order.map((c) => cell(p, c)))], { delimiter, record_delimiter: 'windows' }),
  );
  return { path, files: [path] };
}

// ---- the payees ----

const CONFUSABLE: Record<string, string> = {
  a: 'а',
  e: 'е',
  o: 'о',
  c: 'с',
  p: 'р',
  x: 'х',
  y: 'у',
  A: 'А',
  E: 'Е',
  O: 'О',
  K: 'К',
  M: 'М',
  H: 'Н',
  T: 'Т',
  P: 'Р',
  C: 'С',
  B: 'В',
  i: 'і',
};
const GREEK: Record<string, string> = {
  A: 'Α',
  B: 'Β',
  E: 'Ε',
  H: 'Η',
  I: 'Ι',
  K: 'Κ',
  M: 'Μ',
  N: 'Ν',
  O: 'Ο',
  P: 'Ρ',
  T: 'Τ',
  X: 'Χ',
  Y: 'Υ',
  Z: 'Ζ',
  o: 'ο',
};
const ACCENT: Record<string, string> = { a: 'á', e: 'é', i: 'í', o: 'ö', u: 'ü', n: 'ñ', A: 'Á', E: 'É', O: 'Ö', U: 'Ü' };
const LEGAL = ['Ltd', 'GmbH', 'S.A.', 'Limited', 'LLC', 'Inc.', 'Corp', 'PLC', ''];
const TITLES = ['Mr', 'Dr', 'Mrs', 'Mr.', 'Dr.'];
const words = (s: string) => s.split(/\s+/).filter(Boolean);
const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase();

/** A listed name written as `structure`, then `surface` (undefined: the structure does not apply to the party). */
function derive(p: Party, l: ReturnType<typeof listed>, structure: Structure, surface: Surface[], pick: number): string | undefined {
  const person = !p.words;
  const given = p.given ?? [];
  const family = (p.family ?? []).map(cap);
  let out: string[];
  switch (structure) {
    case 'asListed':
      out = words(l.names[0]!);
      break;
    case 'reversed':
      out = person ? [...family, ...given] : [...p.words!].reverse().concat(p.legal!);
      break;
    case 'ofacOrder':
      if (!person) return undefined;
      out = [`${family.join(' ')},`, ...given];
      break;
    case 'firstLast':
      if (!person || given.length < 2) return undefined;
      out = [given[0]!, ...family];
      break;
    case 'initial': {
      // an initial for a given name, the other words whole: two of them at least when the listed name has three or more
      // (a hyphenated name is two words to the README: Hans-Jürgen, hans jurgen)
      const gw = given.flatMap((g) => g.split('-'));
      if (!person || gw.length + family.length < 2) return undefined;
      const at = gw.length > 1 && pick % 2 ? 1 : 0;
      out = [...gw.slice(0, at), `${gw[at]!.charAt(0)}.`, ...gw.slice(at + 1), ...family];
      break;
    }
    case 'initialOnly': {
      const gw = given.flatMap((g) => g.split('-'));
      if (!person || gw.length + family.flatMap((f) => f.split('-')).length < 3) return undefined;
      out = [`${gw[0]!.charAt(0)}.`, ...family];
      break;
    }
    case 'legalSwap':
      if (person) return undefined;
      out = [...p.words!, ...words(LEGAL[pick % LEGAL.length]!)];
      break;
    case 'legalLong':
      if (person || !['LLC', 'JSC'].includes(p.legal!)) return undefined;
      out = [...p.words!, ...(p.legal === 'LLC' ? ['Limited', 'Liability', 'Company'] : ['Joint', 'Stock', 'Company'])];
      break;
    case 'offEnding':
      // the older transliteration of -ov, -ev (Petroff): neither the same sound nor within one edit
      if (!person || !/[oe]v$/i.test(family.at(-1)!)) return undefined;
      out = [...given, ...family.slice(0, -1), family.at(-1)!.replace(/v$/i, 'ff')];
      break;
    case 'suffix':
      // a generational suffix, dropped as titles are (src/screening/README.md)
      if (!person) return undefined;
      out = [...given.slice(0, 1), ...family, ['Jr', 'Sr.', 'II'][pick % 3]!];
      break;
    case 'title':
      if (!person) return undefined;
      out = [TITLES[pick % TITLES.length]!, ...given, ...family];
      break;
    case 'alias':
      if (l.names.length < 2) return undefined;
      out = words(l.names[1 + (pick % (l.names.length - 1))]!);
      break;
    case 'cyrillic': {
      if (!p.cyrillic) return undefined;
      const c = words(p.cyrillic);
      // whole, or the first given name and the family name
      return pick % 2 ? `${c[0]} ${c.at(-1)}` : p.cyrillic;
    }
    case 'script':
      return l.script[0];
    case 'hyphen': {
      const all = l.names[0]!;
      if (!all.includes('-')) return undefined;
      out = words(all.replace(/-/g, pick % 2 ? ' ' : ''));
      break;
    }
  }
  let s = out.join(' ');
  // (case changes only Latin letters: a look-alike put in before, Greek Η or Cyrillic Н for H, made small would be η or
  // н, which look like no Latin letter; seed 3112675 drew "ηans-jürgen μüllεr")
  const latin = (f: (t: string) => string) => s.replace(/\p{Script=Latin}+/gu, f);
  for (const op of surface) {
    switch (op) {
      case 'lower':
        s = latin((t) => t.toLowerCase());
        break;
      case 'upper':
        s = latin((t) => t.toUpperCase());
        break;
      case 'titleCase':
        s = s
          .split(' ')
          .map((w) => (/^[\p{Script=Latin}\P{L}]+$/u.test(w) ? cap(w) : w))
          .join(' ');
        break;
      case 'stripDiacritics':
        s = s.normalize('NFD').replace(/\p{M}/gu, '');
        break;
      case 'addDiacritics':
        s = s.replace(/[aeiounAEOU]/, (c) => ACCENT[c]!);
        break;
      case 'confusable': {
        let k = 0;
        s = s.replace(/[aeocpxyAEOKMHTPCBi]/g, (c) => (k++ % 2 === pick % 2 ? CONFUSABLE[c]! : c));
        break;
      }
      case 'zero':
        s = s.replace(/o/i, '0');
        break;
      case 'invisible':
        s = s.replace(/(\p{L}{3})(\p{L}{2})/u, `$1${pick % 2 ? '\u00ad' : '\u200b'}$2`);
        break;
      case 'typo': {
        // one letter mistyped in the longest word of 6 letters or more (a letter: the hyphen of AL-HADDAD made a letter
        // is a hyphen dropped and a letter added, which the README does not promise; seed 3112675)
        const ws = s.split(' ');
        const at = ws.reduce((b, w, i) => (w.length > (ws[b]?.length ?? 0) ? i : b), 0);
        const w = ws[at]!;
        const letters = [...w].flatMap((c, i) => (i >= 2 && i < w.length - 1 && /\p{L}/u.test(c) ? [i] : []));
        if (w.length < 6 || !letters.length) break;
        const i = letters[pick % letters.length]!;
        ws[at] = w.slice(0, i) + (w[i] === 'x' ? 'z' : 'x') + w.slice(i + 1);
        s = ws.join(' ');
        break;
      }
      case 'greek':
        s = s.replace(/[ABEHIKMNOPTXYZo]/g, (c) => GREEK[c]!);
        break;
      case 'fullwidth':
        s = s.replace(/[A-Za-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
        break;
      case 'decomposed':
        s = s.normalize('NFD');
        break;
      case 'vowel': {
        // one vowel of a word of five letters or more another (Mohammed, Muhammad): the same sound
        const ws = s.split(' ');
        const at = ws.findIndex((w) => /^\p{L}{5,}$/u.test(w) && /[aeiou]/i.test(w.slice(1)));
        if (at < 0) break;
        ws[at] = ws[at]!.replace(/(?<=.)[aeiou]/i, (c) => ('aeiou'.includes(c) ? (c === 'a' ? 'o' : 'a') : c === 'A' ? 'O' : 'A'));
        s = ws.join(' ');
        break;
      }
      case 'split':
        // a compound written as two words at its own boundary (Northstar, North Star); a space at any other point is a
        // typo the README does not promise (seed 5: ALHA DDAD)
        s = s.replace(/(north)(star)/i, '$1 $2');
        break;
      case 'spaces':
        s = `  ${s.replace(/ /g, '  ')} `;
        break;
    }
  }
  return s;
}

interface Row {
  reference: string;
  method: 'SEPA' | 'SWIFT';
  name: string;
  iban?: string;
  accountNumber?: string;
  swiftCode?: string;
  intermediarySwift?: string;
  amount: string;
  ultimateCreditor?: { name?: string; bic?: string };
  ultimateDebtor?: { name?: string; bic?: string };
  /** Whom of the list it is (entry id), how, and whether the README promises it; none: innocent. */
  derived?: { entry: string; how: string; promised: boolean; list: 'first' | 'added' };
}

const spacedIban = (s: string) => s.replace(/(.{4})/g, '$1 ').trim();

function drawRows(sc: Scenario, parties: Party[], n: number): { rows: Row[]; notes: string[] } {
  const notes: string[] = [];
  const rows = sc.rows.map((r, i): Row => {
    const reference = `SF${n}-${String(i + 1).padStart(2, '0')}`;
    const amount = `${100 + i}.${String(10 + ((n * 7 + i) % 89)).padStart(2, '0')}`;
    const innocentName = INNOCENT[(r.pick + i * 5) % INNOCENT.length]!;
    const base: Row = r.swift
      ? { reference, amount, method: 'SWIFT', name: innocentName, accountNumber: '5407324931', swiftCode: INNOCENT_BICS[r.pick % 4] }
      : { reference, amount, method: 'SEPA', name: innocentName, iban: INNOCENT_IBANS[r.pick % 5] };
    if (r.kind < 4) return base;
    const p = parties[r.entry % parties.length]!;
    const l = listed(p, sc.format);
    let where = WHERE[r.where]!;
    if ((where === 'ultimateCreditor' || where === 'ultimateDebtor') && !sc.pain) where = 'name';
    if ((where === 'iban' || where === 'account') && !l.ibans.length) where = 'name';
    if ((where === 'bic' || where === 'intermediary') && !l.bics.length) where = 'name';
    const derived = (how: string, promised = true) => ({ entry: p.id, how, promised, list: 'first' as const });
    if (where === 'iban' || where === 'account') {
      const v = l.ibans[0]!;
      const typed = [v, spacedIban(v), spacedIban(v).toLowerCase(), v.toLowerCase(), spacedIban(v).replace(/ /g, '-')][r.pick % 5]!;
      const row: Row =
        where === 'iban'
          ? { ...base, method: 'SEPA', iban: typed, swiftCode: undefined, accountNumber: undefined }
          : { ...base, method: 'SWIFT', iban: undefined, accountNumber: v, swiftCode: INNOCENT_BICS[r.pick % 4] };
      return { ...row, derived: derived(`${where} ${JSON.stringify(where === 'iban' ? typed : v)}`) };
    }
    if (where === 'bic' || where === 'intermediary') {
      const v = l.bics[0]!;
      const head = v.length === 8 || v.endsWith('XXX');
      const bank8 = v.slice(0, 8);
      const typed = head
        ? [bank8, `${bank8}XXX`, `${bank8}123`, bank8.toLowerCase(), `${bank8.slice(0, 4)} ${bank8.slice(4)}`][r.pick % 5]!
        : [v, bank8, `${bank8}456`, v.toLowerCase()][r.pick % 4]!;
      const row: Row = { ...base, method: 'SWIFT', iban: undefined, accountNumber: '5407324931', swiftCode: INNOCENT_BICS[r.pick % 4] };
      if (where === 'bic') row.swiftCode = typed;
      else row.intermediarySwift = typed;
      return { ...row, derived: derived(`${where} ${JSON.stringify(typed)} (listed ${v})`) };
    }
    const structure = STRUCTURES[r.structure]!;
    const surface = r.surface.map((s) => SURFACE[s]!);
    const asParty = (where === 'ultimateCreditor' || where === 'ultimateDebtor') && r.pick % 3 === 0 && l.bics.length;
    if (asParty) {
      const party = { bic: l.bics[0]!, ...(r.pick % 2 ? { name: innocentName } : {}) };
      return { ...base, [where]: party, derived: derived(`${where} AnyBIC ${l.bics[0]}`) };
    }
    const direct = derive(p, l, structure, surface, r.pick);
    const used: Structure = direct === undefined ? 'asListed' : structure;
    const name = direct ?? derive(p, l, 'asListed', surface, r.pick) ?? l.names[0]!;
    const how = `${where} ${JSON.stringify(name)} (${used}${surface.length ? ` + ${surface.join(' + ')}` : ''})`;
    const promised = !NOT_PROMISED.has(used);
    if (where === 'name') return { ...base, name, derived: derived(how, promised) };
    return { ...base, [where]: { name }, derived: derived(how, promised) };
  });
  for (const r of rows)
    notes.push(
      `${r.reference} ${r.method} ${JSON.stringify(r.name)} ${r.iban ?? r.accountNumber ?? ''} ${r.swiftCode ?? ''}${r.intermediarySwift ? ` via ${r.intermediarySwift}` : ''}` +
        `${r.ultimateCreditor ? ` UltmtCdtr ${JSON.stringify(r.ultimateCreditor)}` : ''}${r.ultimateDebtor ? ` UltmtDbtr ${JSON.stringify(r.ultimateDebtor)}` : ''}` +
        (r.derived ? ` DERIVED from ${r.derived.entry}: ${r.derived.how}${r.derived.promised ? '' : ' (not promised)'}` : ' innocent'),
    );
  return { rows, notes };
}

const COLUMNS =
  'reference,sourceAmount,sourceCurrency,destinationCurrency,destinationCountryCode,method,accountName,accountCurrency,iban,accountNumber,swiftCode,bankName,beneficiaryCountry,intermediarySwift,narration,documents,withdrawal'.split(
    ',',
  );
const COUNTRY: Record<string, string> = { DE: 'DEU', FR: 'FRA', NL: 'NLD', ES: 'ESP', BE: 'BEL' };
function cells(r: Row): Record<string, string> {
  const sepa = r.method === 'SEPA';
  return {
    reference: r.reference,
    sourceAmount: r.amount,
    sourceCurrency: sepa ? 'EUR' : 'GBP',
    destinationCurrency: 'EUR',
    destinationCountryCode: sepa ? COUNTRY[r.iban!.replace(/\s/g, '').slice(0, 2).toUpperCase()]! : 'DEU',
    method: r.method,
    accountName: r.name,
    accountCurrency: 'EUR',
    iban: r.iban ?? '',
    accountNumber: r.accountNumber ?? '',
    swiftCode: r.swiftCode ?? '',
    bankName: sepa ? '' : 'Bank AG',
    beneficiaryCountry: sepa ? '' : 'DEU',
    intermediarySwift: r.intermediarySwift ?? '',
    narration: 'Invoice settlement',
    documents: '',
    withdrawal: 'false',
  };
}

async function writeBatch(dir: string, rows: Row[], pain: boolean): Promise<string> {
  if (!pain) {
    const path = join(dir, 'batch.csv');
    await writeFile(path, stringify([COLUMNS, ...rows.map((r) => COLUMNS.map((c) => cells(r)[c]!))]));
    return path;
  }
  let doc = pain001(rows.map(cells), 'pain.001.001.09');
  const party = (tag: string, p: { name?: string; bic?: string }) =>
    `<${tag}>${p.name ? `<Nm>${xml(p.name)}</Nm>` : ''}<PstlAdr><TwnNm>Zug</TwnNm><Ctry>CH</Ctry></PstlAdr>` +
    `${p.bic ? `<Id><OrgId><AnyBIC>${p.bic}</AnyBIC></OrgId></Id>` : ''}</${tag}>`;
  doc = doc
    .split('<CdtTrfTxInf>')
    .map((chunk) => {
      const r = rows.find((x) => chunk.includes(`<EndToEndId>${x.reference}</EndToEndId>`));
      if (!r) return chunk;
      // (UltmtDbtr before CdtrAgt, or Cdtr: ISO 20022's order)
      if (r.ultimateDebtor) chunk = chunk.replace(/<(CdtrAgt|Cdtr)>/, (m) => `${party('UltmtDbtr', r.ultimateDebtor!)}${m}`);
      // (pain001-files.ts writes no intermediary: IntrmyAgt1 after UltmtDbtr, before CdtrAgt)
      if (r.intermediarySwift)
        chunk = chunk.replace(
          '<CdtrAgt>',
          `<IntrmyAgt1><FinInstnId><BICFI>${r.intermediarySwift}</BICFI></FinInstnId></IntrmyAgt1><CdtrAgt>`,
        );
      if (r.ultimateCreditor) chunk = chunk.replace('</CdtrAcct>', `</CdtrAcct>${party('UltmtCdtr', r.ultimateCreditor)}`);
      return chunk;
    })
    .join('<CdtTrfTxInf>');
  const path = join(dir, 'batch.xml');
  await writeFile(path, doc);
  return path;
}

/** A row's CdtTrfTxInf in the pain.001 (pain001-files.ts: a block per method and debit currency, in the rows' order). */
function xpathOf(rows: Row[], r: Row): string {
  const block = (x: Row) => `${x.method}/${cells(x).sourceCurrency}`;
  const blocks = [...new Set(rows.map(block))];
  const within = rows.filter((x) => block(x) === block(r));
  return `/Document/CstmrCdtTrfInitn/PmtInf[${blocks.indexOf(block(r)) + 1}]/CdtTrfTxInf[${within.indexOf(r) + 1}]`;
}

// ---- the commands and the judge ----

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
const ident = (s: string | undefined) => (s ?? '').replace(/[\s-]/g, '').toUpperCase();

/** What a scenario counts, and the campaign sums. */
const noCounts = () => ({
  rows: 0,
  derived: 0,
  notPromised: 0,
  notPromisedMissed: 0,
  innocent: 0,
  falsePositives: 0,
  nearMisses: 0,
  nearMissesHeld: 0,
  commands: 0,
  payouts: 0,
  cutRefused: 0,
  invalid: 0,
});
type Outcome = { violations: string[]; notes: string[] } & ReturnType<typeof noCounts>;
/** Innocent names held (false positives), with how often. */
const HELD_INNOCENT = new Map<string, number>();

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], ...noCounts() };
  const dir = await workDir('pb-screening-fuzz-');
  const sb = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    randomSeed: SEED + n,
    shapes: sc.variant ? 'variant' : 'strict',
  });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), PAYOUT_BATCH_RATE: '500', HOME: join(dir, 'home') });
  try {
    await fund(sb);
    const parties = sc.entries.map((e) => CATALOGUE[e]!);
    const list = await writeList(join(dir, 'list'), parties, sc);
    out.notes.push(`list ${sc.format} ${list.path} (${parties.map((p) => p.id).join(', ')})`);
    const { rows, notes } = drawRows(sc, parties, n);
    out.notes.push(...notes);
    const file = await writeBatch(dir, rows, sc.pain);
    out.rows = rows.length;
    /** Rows a command under the first list (or, `added`, the changed one) must hold. */
    const promisedRows = (added = false) => rows.filter((r) => r.derived?.promised && (added || r.derived.list === 'first'));
    const base = ['--base-url', sb.url];
    const partial = sc.allowPartial ? ['--allow-partial'] : [];

    /** A command as a process; its initiates (the sandbox's log) and whether it may send a row a DERIVED row stops. */
    const cmd = async (
      what: string,
      args: string[],
      o: { cwd?: string; wholeIfHeld?: boolean; added?: boolean } = {},
    ): Promise<CliRun & { initiates: number }> => {
      out.commands++;
      const before = sb.requestLog().filter((e) => e.route === 'initiate').length;
      const r = await runCli(args, { cwd: o.cwd ?? dir, env, timeoutMs: 120_000 });
      const initiates = sb.requestLog().filter((e) => e.route === 'initiate').length - before;
      out.notes.push(`${what}: exit ${r.code}, ${initiates} initiates: ${(r.stderr.trim().split('\n').at(-1) ?? '').slice(0, 300)}`);
      if (STACK.test(r.stderr + r.stdout)) out.violations.push(`(d) ${what}: ${(r.stderr + r.stdout).slice(0, 800)}`);
      if (o.wholeIfHeld && !sc.allowPartial && promisedRows(o.added).length && initiates)
        out.violations.push(`(f) ${what}: without --allow-partial, a batch holding a listed party sent ${initiates} initiates`);
      return { ...r, initiates };
    };

    // screen: every DERIVED row held; innocent ones held counted
    const s = await cmd('screen', ['screen', file, '--sanctions-list', list.path, '--json']);
    // a row validate refuses is never screened nor sent (an invisible character: INVALID_TEXT): no hold owed
    const v = await cmd('validate', ['validate', file, '--json']);
    const invalid = new Set(
      ((parseJson(v.stdout)?.problems ?? []) as { severity: string; row: number; column?: string }[])
        .filter((p) => p.severity === 'error')
        .flatMap((p) => rows.filter((r) => (sc.pain ? p.column?.startsWith(xpathOf(rows, r)) : p.row === rows.indexOf(r) + 2))),
    );
    const held = new Set(((parseJson(s.stdout)?.held ?? []) as { reference: string }[]).map((h) => h.reference));
    if (sc.command !== 'cut') {
      if (!parseJson(s.stdout)) out.violations.push(`(a) screen printed no JSON: ${s.stderr.slice(0, 400)}`);
      for (const r of rows) {
        if (invalid.has(r)) {
          out.invalid++;
          out.notes.push(`${r.reference}: refused by validate`);
        } else if (!r.derived) {
          out.innocent++;
          if (held.has(r.reference)) out.falsePositives++;
          if (NEAR_MISS.has(r.name)) {
            out.nearMisses++;
            if (held.has(r.reference)) out.nearMissesHeld++;
          }
          if (held.has(r.reference)) {
            out.notes.push(`${r.reference} ${JSON.stringify(r.name)}: held, a false positive`);
            HELD_INNOCENT.set(r.name, (HELD_INNOCENT.get(r.name) ?? 0) + 1);
          }
        } else if (!r.derived.promised) {
          out.notPromised++;
          if (!held.has(r.reference)) {
            out.notPromisedMissed++;
            out.notes.push(`${r.reference}: not held (not promised): ${r.derived.how}`);
          }
        } else {
          out.derived++;
          if (!held.has(r.reference))
            out.violations.push(`(a) screen: ${r.reference} not held: DERIVED from ${r.derived.entry}: ${r.derived.how}`);
        }
      }
    }

    let results: string | undefined;
    /** The payouts made under the list an entry was added to (`planChanged`): the added entry binds them only. */
    const underAdded = new Set<string>();
    const resultsOf = (r: CliRun) => {
      const p = parseJson(r.stdout)?.results;
      if (typeof p === 'string') results = p;
    };
    switch (sc.command) {
      case 'run':
        resultsOf(
          await cmd('run', ['run', file, '--sanctions-list', list.path, ...base, ...partial, '--yes', '--json'], { wholeIfHeld: true }),
        );
        break;
      case 'plan':
      case 'planChanged': {
        const plan = join(dir, 'batch.plan.json');
        await cmd('plan', ['plan', file, '--sanctions-list', list.path, ...base, ...partial, '--out', plan]);
        let runList = list.path;
        if (sc.command === 'planChanged') {
          // an entry added between plan and run: an innocent row's payee (by name), or another of the catalogue
          const target = rows.find((r) => !r.derived && !NEAR_MISS.has(r.name) && !/\p{Script=Hangul}|\p{Script=Cyrillic}/u.test(r.name));
          const added: Party = target
            ? { id: '7199', words: words(target.name), legal: 'LTD', aliases: [], bics: [], ibans: [], country: 'Iran', programme: 'IRAN' }
            : CATALOGUE.find((p) => !parties.includes(p))!;
          if (target)
            target.derived = {
              entry: added.id,
              how: `name ${JSON.stringify(target.name)} (an entry added between plan and run)`,
              promised: true,
              list: 'added',
            };
          const changed = await writeList(join(dir, 'list2'), [...parties, added], sc);
          runList = changed.path;
          out.notes.push(`the list changed between plan and run: entry ${added.id} ${primary(added)} added (${runList})`);
        }
        const before = new Set(sb.snapshot().payouts.map((p) => String(p.id)));
        const r = await cmd('run --plan', ['run', '--plan', plan, '--sanctions-list', runList, ...base, ...partial, '--yes', '--json'], {
          wholeIfHeld: true,
          added: true,
        });
        for (const p of sb.snapshot().payouts) if (!before.has(String(p.id))) underAdded.add(String(p.id));
        resultsOf(r);
        if (sc.command === 'planChanged' && r.initiates) out.notes.push(`run --plan against a changed list sent ${r.initiates} initiates`);
        break;
      }
      case 'watch': {
        const w = join(dir, 'watch');
        await mkdir(join(w, 'inbox'), { recursive: true });
        // the list named relative to DIR (watch/config.ts), or by its full path
        const rel = sc.list.order % 3 === 0 ? relative(w, (await writeList(join(w, 'lists'), parties, sc)).path) : undefined;
        const config = {
          ...{ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, rate: 500 },
          ...{ sanctionsLists: [rel ?? list.path], allowPartial: sc.allowPartial },
        };
        if (rel) out.notes.push(`watch: sanctionsLists ${JSON.stringify(config.sanctionsLists)} (relative to ${w})`);
        await writeFile(join(w, 'payout-batch.json'), JSON.stringify(config));
        await writeFile(join(w, 'inbox', sc.pain ? 'batch.xml' : 'batch.csv'), await readFile(file));
        await cmd('watch --once', ['watch', w, '--once'], { wholeIfHeld: true });
        break;
      }
      case 'cut': {
        const cut = await cutList(list, sc);
        out.notes.push(`list cut: ${cut.how}`);
        const under = (['screen', 'run', 'plan'] as const)[sc.cut.under]!;
        const args =
          under === 'screen'
            ? ['screen', file, '--sanctions-list', list.path]
            : under === 'plan'
              ? ['plan', file, '--sanctions-list', list.path, ...base, ...partial, '--out', join(dir, 'cut.plan.json')]
              : ['run', file, '--sanctions-list', list.path, ...base, ...partial, '--yes'];
        const r = await cmd(`${under} (list cut)`, args);
        const names = [list.path, ...list.files];
        if (r.initiates) out.violations.push(`(c) ${under} against a list cut short sent ${r.initiates} initiates`);
        if (r.code !== 2) out.violations.push(`(c) ${under} against a list cut short: exit ${r.code}, not 2`);
        else out.cutRefused++;
        if (!names.some((f) => (r.stderr + r.stdout).includes(f)))
          out.violations.push(`(c) ${under} against a list cut short does not name the list file: ${(r.stderr + r.stdout).slice(0, 400)}`);
        break;
      }
    }
    if (results && sc.retry) {
      const withList = sc.retry === 1 ? ['--sanctions-list', list.path] : [];
      await cmd(`retry${withList.length ? '' : ' (no list)'}`, ['retry', results, ...withList, ...base, ...partial, '--yes'], {
        wholeIfHeld: true,
      });
    }
    if (sc.rerun && sc.command !== 'cut')
      await cmd('run again', ['run', file, '--sanctions-list', list.path, ...base, ...partial, '--yes'], { wholeIfHeld: true });

    judge(sb, rows, out, underAdded);
  } catch (e) {
    out.violations.push(threw('d', e));
  } finally {
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;
}

/** (a), (b): each payout by the key that made it, against the rows. */
function judge(sb: LocalSandbox, rows: Row[], out: Outcome, underAdded: Set<string>) {
  const { byRef, strays } = payoutsByReference(
    serviceRecords(sb),
    rows.map((r) => r.reference),
  );
  for (const p of strays) out.violations.push(`(b) payout ${p.id} under key ${p.made?.key} of no row: ${JSON.stringify(p.made?.body)}`);
  for (const r of rows) {
    const ps = byRef.get(r.reference) ?? [];
    out.payouts += ps.length;
    if (ps.length > 1) out.violations.push(`(b) ${r.reference} has ${ps.length} payouts`);
    for (const p of ps) {
      if (r.derived?.promised && (r.derived.list === 'first' || underAdded.has(p.id)))
        out.violations.push(`(a) ${r.reference} paid (payout ${p.id}): DERIVED from ${r.derived.entry}: ${r.derived.how}`);
      const b = (p.made?.body.beneficiary ?? {}) as Record<string, string | undefined>;
      const diff = [
        b.accountName !== r.name.trim() && `accountName ${JSON.stringify(b.accountName)} for ${JSON.stringify(r.name.trim())}`,
        ident(b.iban) !== ident(r.iban) && `iban ${b.iban} for ${r.iban}`,
        ident(b.accountNumber) !== ident(r.accountNumber) && `accountNumber ${b.accountNumber} for ${r.accountNumber}`,
        ident(b.swiftCode) !== ident(r.swiftCode) && `swiftCode ${b.swiftCode} for ${r.swiftCode}`,
        String(p.made?.body.sourceAmount) !== String(Number(r.amount)) && `amount ${String(p.made?.body.sourceAmount)} for ${r.amount}`,
      ].filter(Boolean);
      if (diff.length) out.violations.push(`(b) ${r.reference} paid (payout ${p.id}) ${diff.join('; ')}`);
    }
  }
}

/** Cuts the list short as a download cut off would: OFAC past a point of sdn.csv or alt.csv (no 0x1A), or its sdn_comments.csv gone; UN past a point; the CSVs empty or their header only. */
async function cutList(list: { path: string; files: string[] }, sc: Scenario): Promise<{ how: string }> {
  const size = async (f: string) => (await readFile(f)).length;
  if (sc.format === 'ofac') {
    if (sc.cut.which === 2 && list.files[3]) {
      await rm(list.files[3]);
      return { how: `${list.files[3]} removed (a remark cut at 1,000 characters)` };
    }
    const f = list.files[sc.cut.which === 1 ? 1 : 0]!;
    const bytes = await readFile(f);
    let len = Math.min(Math.floor(bytes.length * sc.cut.at), bytes.length - 1);
    // half the time at a line's end, as a download cut between two chunks may be: only the missing 0x1A tells
    if (sc.cut.at < 0.5) len = bytes.lastIndexOf('\n', len) + 1 || bytes.indexOf('\n') + 1;
    await truncate(f, len);
    return { how: `${f} cut to ${len} bytes` };
  }
  if (sc.format === 'un') {
    const f = list.files[0]!;
    const len = Math.min(Math.floor((await size(f)) * sc.cut.at), (await size(f)) - 30);
    await truncate(f, len);
    return { how: `${f} cut to ${len} bytes` };
  }
  const f = list.files[0]!;
  const text = await readFile(f, 'utf8');
  const header = sc.cut.which
    ? text.slice(0, text.search(/\r?\n/) + 1 + (text.startsWith('sep=') ? text.slice(text.indexOf('\n') + 1).search(/\r?\n/) + 1 : 0))
    : '';
  await writeFile(f, header);
  return { how: `${f} ${header ? 'cut to its header' : 'empty'}` };
}

/** Credits every wallet far beyond any batch: a refusal is then screening's, not the balance's. */
async function fund(sb: LocalSandbox): Promise<void> {
  for (const w of sb.snapshot().wallets as { walletId: string }[])
    await fetch(`${sb.url}/_sandbox/wallets/${w.walletId}/credit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '900000000' }),
    });
}

if (!existsSync(join(import.meta.dirname, '../../dist/bin.js')))
  throw new Error('npm run build first: the commands are processes of dist/');
const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = noCounts();
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
const t = totals;
const pct = (a: number, b: number) => (b ? ((100 * a) / b).toFixed(1) : '0.0');
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${t.rows} rows (${t.derived} derived as promised, ${t.notPromised} not promised: ` +
    `${t.notPromisedMissed} not held; ${t.invalid} refused by validate), ${t.commands} commands, ${t.payouts} payouts, ${t.cutRefused} cut lists refused; ` +
    `false positives ${t.falsePositives} of ${t.innocent} innocent (${pct(t.falsePositives, t.innocent)} %; near misses ${t.nearMissesHeld} of ${t.nearMisses}, ` +
    `others ${t.falsePositives - t.nearMissesHeld} of ${t.innocent - t.nearMisses}); ${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
if (HELD_INNOCENT.size) console.log(`innocent payees held: ${[...HELD_INNOCENT].map(([n, k]) => `${n} ${k}`).join(', ')}`);
process.exitCode = failures ? 1 : 0;
