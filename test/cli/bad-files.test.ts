// Every file the tool reads other than a batch file in CSV or Excel (those are
// test/input/bad-input-campaign.e2e.test.ts's), broken as a user or a disk breaks it: empty, truncated,
// not JSON or XML, JSON of the wrong shape or types, a folder, binary garbage, a huge line, another
// tool's file of the same extension. Each command given one, by main() in this process against the
// local sandbox, exits with its documented code and says on one short line the file, what is wrong
// and what would be valid: never a stack trace, never `unexpected error` (main.ts's fallback for an
// error no layer typed), never a silent skip (a broken file read as an empty one).
// Left out: `policy set --approvers` (it writes the host's policy, /etc/payout-batch: its list is read
// by the reader `approve` and `run` use), `listen --secret-file` and `sandbox --seed` but for what is
// refused before they listen, the API key file of a line of megabytes (src/client/'s).
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

const dirs = tempDirs('pb-bad-files-');
let scene: string;
const envOf = (dir: string, extra: Record<string, string> = {}) =>
  cleanEnv({ PAYOUT_ENV: 'local', PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), ...extra });

// What every case starts from, copied: a plan and its approvers, a paid batch and its results.
beforeAll(async () => {
  scene = await dirs.make();
  const cli = async (...args: string[]) => {
    const r = await runMain(args, { cwd: scene, env: envOf(scene) });
    if (r.code !== 0) throw new Error(`${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  };
  await writeBatch(scene, 'payroll.csv', { rows: 2, currencies: ['GBP'], prefix: 'BADF' });
  await writeBatch(scene, 'paid.csv', { rows: 2, currencies: ['GBP'], prefix: 'BADFPAID' });
  cpSync(join(ROOT, 'samples/payroll-2025-01-pain001-v03.xml'), join(scene, 'pain.xml'));
  cpSync(join(ROOT, 'samples/sanctions/sdn.csv'), join(scene, 'sdn.csv'));
  cpSync(join(ROOT, 'samples/documents/invoice-uk-c1.pdf'), join(scene, 'invoice.pdf'));
  writeFileSync(join(scene, 'webhook.secret'), 'whsec_bad_files_0123456789', { mode: 0o600 });
  await cli('approver-key', 'new', '--as', 'Alice');
  await cli('approver-key', 'new', '--as', 'Bob');
  await cli('approvers', 'add', 'Alice.approver.pub.json', 'Bob.approver.pub.json', '--out', 'approvers.json');
  await cli('plan', 'payroll.csv', '--out', 'payroll.plan.json');
  await cli('run', 'paid.csv', '--yes');
});
afterAll(() => dirs.remove());

const FOLDER = Symbol('a folder');
type Content = string | Buffer | typeof FOLDER;
const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
const MB8 = 'x'.repeat(8 * 1024 * 1024);
const otherJson = JSON.stringify({ name: 'left-pad', version: '1.3.0', dependencies: {} });
const otherCsv = 'date,description,amount\n2025-01-01,coffee,3.50\n';

interface Case {
  what: string;
  /** The broken file, in the case's copy of the scene. */
  file: string;
  content: Content | (() => Content);
  /** FILE: the broken file's name. */
  argv: string[];
  exit: number;
  env?: Record<string, string>;
  /** What is wrong and what would be valid: the message matches it. */
  says: RegExp;
}

const JSON_BREAKS: [string, Content][] = [
  ['empty', ''],
  ['truncated', '{"version": 1, "rows": [{"ref'],
  ['not JSON', 'this is not json\n'],
  ['binary garbage', garbage],
  ['a folder', FOLDER],
  ["another tool's JSON", otherJson],
  ['an array of numbers', '[1, 2, 3]'],
  ['null', 'null'],
  ['a line of 8 MB', `{"note": "${MB8}"`],
];
const jsonCases = (target: string, file: string, argv: string[], says: RegExp, exit = 2): Case[] =>
  JSON_BREAKS.map(([how, content]) => ({ what: `${target}: ${how}`, file, content, argv, exit, says }));

const approve = (plan: string, key = 'Alice.approver-key.pem', approvers = 'approvers.json') =>
  ['approve', plan, '--as', 'Alice', '--key-file', key, '--approvers', approvers, '--yes'] as const;
const runPlan = (approvers: string) => [
  'run',
  '--plan',
  'payroll.plan.json',
  '--require-approvals',
  '1',
  '--approvers',
  approvers,
  '--yes',
];
const PLAN = /is not a plan file|cannot read the (plan|file) .*EISDIR/;
const APPROVALS =
  /is (empty|not JSON): the approvals file is a JSON array|is not an approvals file \(.*\): a JSON array of the signatures `payout-batch approve` adds|cannot read the approvals file .*EISDIR/;
const APPROVERS = /is (empty|not JSON|not an approvers list).*approvers add|cannot read the approvers list .*EISDIR/;

const CASES: Case[] = [
  ...jsonCases('run --plan', 'broken.plan.json', ['run', '--plan', 'FILE', '--yes'], PLAN),
  ...jsonCases('approve PLAN', 'broken.plan.json', [...approve('FILE')], PLAN),
  ...jsonCases('report PLAN', 'broken.plan.json', ['report', 'FILE'], PLAN),
  // (a run refuses, exit 3, what its approvals gate cannot read: the file's name and what is wrong said)
  ...jsonCases('approvals beside a plan, run --plan', 'payroll.plan.json.approvals.json', runPlan('approvers.json'), APPROVALS, 3),
  ...jsonCases('approvals beside a plan, approve', 'payroll.plan.json.approvals.json', [...approve('payroll.plan.json')], APPROVALS),
  ...jsonCases('--approvers of run --plan', 'broken-approvers.json', runPlan('FILE'), APPROVERS, 3),
  ...jsonCases('--approvers of approve', 'broken-approvers.json', [...approve('payroll.plan.json', undefined, 'FILE')], APPROVERS),
  ...jsonCases('approvers add PUBLIC-KEY', 'broken.approver.pub.json', ['approvers', 'add', 'FILE', '--out', 'new.json'], APPROVERS),
  ...jsonCases('approvers add --out LIST', 'broken-list.json', ['approvers', 'add', 'Alice.approver.pub.json', '--out', 'FILE'], APPROVERS),
  ...jsonCases(
    'policy apply PROPOSAL',
    'broken-proposal.json',
    ['policy', 'apply', 'FILE'],
    /is not a policy proposal of `payout-batch policy set\|remove`|cannot read the proposal .*EISDIR/,
  ),
  ...jsonCases(
    "a watch's payout-batch.json",
    'w/payout-batch.json',
    ['watch', 'w', '--once'],
    /not JSON|cannot read the configuration \(EISDIR\); see README "watch"|environment: Invalid option: expected one of|top level\): Invalid input: expected object/,
  ),
  ...jsonCases(
    'sandbox --seed',
    'broken-seed.json',
    ['sandbox', '--seed', 'FILE', '--port', '0'],
    /bad seed file .*(is not valid JSON|cannot be read \(EISDIR\)|businesses: |expected object)/,
  ),
  // (a clearance that cannot be read is never taken as none)
  ...jsonCases(
    'a clearance in --clearances-dir',
    'clearances/BADF-0001.clearance.json',
    ['screen', 'payroll.csv', '--sanctions-list', 'sdn.csv'],
    /(is not a clearance of `payout-batch screen --clear`|cannot read the clearance .*EISDIR): move it out of/,
  ),
  {
    what: '--clearances-dir: a file',
    file: 'not-a-folder',
    content: 'x',
    argv: ['screen', 'payroll.csv', '--sanctions-list', 'sdn.csv', '--clearances-dir', 'FILE'],
    exit: 2,
    says: /cannot read the clearances folder .* \(ENOTDIR\)/,
  },
];

// The approver's private key: approve --key-file, plan --approver-key.
for (const [how, content] of [
  ['empty', ''],
  ['not PEM', 'hello\n'],
  ['a PEM cut short', '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI'],
  ['binary garbage', garbage],
  ['a folder', FOLDER],
  ['an RSA key', generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
] as [string, Content][]) {
  const says =
    /is not a private key in PEM \(make one with `payout-batch approver-key new|holds a rsa key, not Ed25519|cannot read the key file .*EISDIR/;
  CASES.push(
    { what: `approve --key-file: ${how}`, file: 'broken.pem', content, argv: [...approve('payroll.plan.json', 'FILE')], exit: 2, says },
    {
      what: `plan --approver-key: ${how}`,
      file: 'broken.pem',
      content,
      argv: ['plan', 'payroll.csv', '--out', 'p2.plan.json', '--as', 'Alice', '--approver-key', 'FILE'],
      exit: 2,
      says,
    },
  );
}

// The API key file: --key-file, $PAYOUT_API_KEY_FILE.
for (const [how, content] of [
  ['empty', ''],
  ['binary garbage', garbage],
  ['a folder', FOLDER],
  ["another tool's file", 'export AWS_ACCESS_KEY_ID=AKIA0000\n'],
] as [string, Content][]) {
  const says = /no key in the file|line 1: unknown setting \(expected key=|cannot read key file .*EISDIR/;
  CASES.push(
    { what: `account --key-file: ${how}`, file: 'broken.key', content, argv: ['account', '--key-file', 'FILE'], exit: 2, says },
    {
      what: `$PAYOUT_API_KEY_FILE: ${how}`,
      file: 'broken.key',
      content,
      argv: ['account'],
      env: { PAYOUT_API_KEY_FILE: 'FILE' },
      exit: 2,
      says,
    },
  );
}

for (const [how, content] of [
  ['empty', ''],
  ['a folder', FOLDER],
] as [string, Content][])
  CASES.push({
    what: `listen --secret-file: ${how}`,
    file: 'broken.secret',
    content,
    argv: ['listen', '--secret-file', 'FILE', '--port', '0'],
    exit: 2,
    says: /--secret-file .*(the file holds no secret|cannot read it \(EISDIR\))/,
  });

// Results files given to retry, status, reconcile, attach and report.
const paidResults = () => readFileSync(join(scene, 'paid.results.csv'), 'utf8');
for (const [cmd, argv] of [
  ['retry', ['retry', 'FILE', '--yes']],
  ['status', ['status', 'FILE']],
  ['reconcile', ['reconcile', 'FILE']],
  ['attach --results', ['attach', 'BADFPAID-0001', 'invoice.pdf', '--results', 'FILE']],
  ['report', ['report', 'FILE']],
  // (refused before listening: not at the first delivery)
  ['listen --results', ['listen', '--secret-file', 'webhook.secret', '--port', '0', '--results', 'FILE']],
] as [string, string[]][])
  for (const [how, content, says] of [
    ['empty', () => '', /the file is empty \(0 bytes\)/],
    // (a run writes a row for every row of its batch: a header alone is a file cut short)
    ['its header only', () => paidResults().split('\n')[0]! + '\n', /the header row and no row: not the results of a run/],
    [
      'cut short in a quoted cell',
      () => `${paidResults().split('\n')[0]}\nBADFPAID-0001,10.00,"GBP`,
      /cannot read the CSV at line 2: the parsing is finished with an opening quote/,
    ],
    ['binary garbage', () => garbage, /not a CSV or Excel file \(it holds binary data\)/],
    ['a folder', () => FOLDER, /is a folder, not a results file|cannot read the file \(EISDIR\)/],
    // (report reads a batch file too: there a batch file is no error)
    ...(cmd === 'report'
      ? []
      : [['a batch file', () => readFileSync(join(scene, 'payroll.csv')), /it looks like a batch file, not the results/]]),
    [
      "another tool's CSV",
      () => otherCsv,
      cmd === 'report'
        ? /missing required columns reference/
        : /not a results file: its header row \(row 1\) has none of the result columns/,
    ],
    // (refused at 1 MB, as a batch file's record is: never read whole into memory)
    ['a line of 8 MB', () => `reference,status\n${MB8}\n`, /row 2: a record longer than 1 MB: is a quote missing\?/],
  ] as [string, () => Content, RegExp][])
    CASES.push({ what: `${cmd} RESULTS: ${how}`, file: 'broken.results.csv', content, argv, exit: 2, says });

// Sanctions lists.
const LIST =
  /not a sanctions list this tool reads \(OFAC SDN CSV, UN consolidated XML, OpenSanctions simple CSV, or a CSV with a "name" column\)/;
for (const [how, file, content, says] of [
  ['empty', 'broken-list.csv', '', LIST],
  ['binary garbage', 'broken-list.csv', garbage, LIST],
  ['a folder without sdn.csv', 'broken-list', FOLDER, /a folder without sdn\.csv: name a list file, or OFAC's folder/],
  ["another tool's CSV", 'broken-list.csv', otherCsv, LIST],
  ['a line of 8 MB', 'broken-list.csv', `${MB8}\n`, LIST],
  ['JSON', 'broken-list.csv', otherJson, LIST],
  ['empty XML', 'broken-list.xml', '', LIST],
  ['not XML', 'broken-list.xml', 'not xml at all', LIST],
  ['XML cut short', 'broken-list.xml', '<?xml version="1.0"?><sdnList><sdnEntry><uid>1</uid>', LIST],
  ["another tool's XML", 'broken-list.xml', '<html><body>hello</body></html>', LIST],
] as [string, string, Content, RegExp][])
  CASES.push({
    what: `screen --sanctions-list: ${how}`,
    file,
    content,
    argv: ['screen', 'payroll.csv', '--sanctions-list', 'FILE'],
    exit: 2,
    says,
  });

// pain.001 batch files: the message names the element's path.
const pain = () => readFileSync(join(scene, 'pain.xml'), 'utf8');
for (const [how, content, exit, says] of [
  ['empty', () => '', 2, /the file is empty \(0 bytes\)\. \[EMPTY_FILE\]/],
  ['cut short', () => pain().slice(0, pain().length / 2), 2, /not well-formed XML: \d+:\d+: unclosed tag: \w+ \[MALFORMED_XML\]/],
  ['not XML', () => 'hello, world\n', 2, /named \.xml but not an XML document in UTF-8/],
  ['binary garbage', () => garbage, 2, /not a CSV, Excel or pain\.001 file \(it holds binary data\)/],
  [
    "another tool's XML",
    () => '<html><body>hello</body></html>',
    2,
    /not a pain\.001\.001\.03 or pain\.001\.001\.09 payment initiation \(its root is html/,
  ],
  [
    'a camt.053',
    () =>
      pain()
        .replace(/pain\.001\.001\.03/, 'camt.053.001.02')
        .replace(/CstmrCdtTrfInitn/g, 'BkToCstmrStmt'),
    2,
    /its root is Document in "urn:iso:std:iso:20022:tech:xsd:camt\.053\.001\.02"/,
  ],
  [
    'no transactions',
    () => pain().replace(/<CdtTrfTxInf>[\s\S]*<\/CdtTrfTxInf>/g, ''),
    2,
    /control totals of \/Document\/CstmrCdtTrfInitn\/PmtInf\[1\] do not match: NbOfTxs says 10, the transactions are 0/,
  ],
  [
    'an amount not a number',
    () => pain().replace(/(<InstdAmt[^>]*>)[^<]+/, '$1abc'),
    2,
    /\/Document\/CstmrCdtTrfInitn\/PmtInf\[1\]\/CdtTrfTxInf\[1\]\/Amt\/InstdAmt "abc", not an xs:decimal/,
  ],
  // (a row's problem, exit 1, on stdout: its value shown by its start, on a line a terminal shows)
  [
    'a name of 8 MB',
    () => pain().replace(/(<Cdtr>\s*<Nm>)[^<]*/, `$1${MB8}`),
    1,
    /\/PmtInf\[1\]\/CdtTrfTxInf\[1\]\/Cdtr\/Nm: error TOO_LONG: the account name has 8388608 characters; at most 140 are allowed \(value "x{100}…"\)/,
  ],
] as [string, () => Content, number, RegExp][])
  CASES.push({ what: `validate PAIN.001: ${how}`, file: 'broken.xml', content, argv: ['validate', 'FILE'], exit, says });

// A plan, or any JSON, given where a batch goes (`run PLAN` for `run --plan PLAN`).
for (const argv of [
  ['run', 'FILE', '--yes'],
  ['validate', 'FILE'],
  ['plan', 'FILE'],
  ['screen', 'FILE', '--sanctions-list', 'sdn.csv'],
])
  CASES.push({
    what: `${argv[0]} BATCH: a plan file`,
    file: 'given.plan.json',
    content: () => readFileSync(join(scene, 'payroll.plan.json')),
    argv,
    exit: 2,
    says: /: a JSON file, not a CSV, Excel or pain\.001 batch; a plan runs with `run --plan .*given\.plan\.json`/,
  });

CASES.push(
  {
    what: 'validate PAIN.001 --documents: a file',
    file: 'not-a-folder',
    content: 'x',
    argv: ['validate', 'pain.xml', '--documents', 'FILE'],
    exit: 2,
    says: /--documents .*: cannot read the folder \(ENOTDIR\)\. \[UNREADABLE\]/,
  },
  // (a folder where a file is written: refused before anything is sent, never after)
  {
    what: 'run --results: a folder where the results go',
    file: 'out.results.csv',
    content: FOLDER,
    argv: ['run', 'payroll.csv', '--yes', '--results', 'FILE'],
    exit: 2,
    says: /: a folder has that name, not a results file\. Nothing was sent; write this run's results apart: --results /,
  },
  {
    what: 'plan --out: a folder where the plan goes',
    file: 'p.plan.json',
    content: FOLDER,
    argv: ['plan', 'payroll.csv', '--out', 'FILE'],
    exit: 2,
    says: /--out .*: cannot write the plan file \(EISDIR\): name another file/,
  },
  {
    what: 'reconcile --statement: a folder where the statement goes',
    file: 'st.xml',
    content: FOLDER,
    argv: ['reconcile', 'paid.results.csv', '--statement', 'FILE'],
    exit: 2,
    says: /cannot read .* \(EISDIR\): not replaced: it may not be a camt\.053 file/,
  },
);
for (const [how, content, says] of [
  ['empty', '', /is not a PDF, JPEG or PNG \(by its content, whatever its name\)/],
  ['a folder', FOLDER, /is not a file/],
  ['binary garbage', garbage, /is not a PDF, JPEG or PNG \(by its content, whatever its name\)/],
] as [string, Content, RegExp][])
  CASES.push({
    what: `attach DOCUMENT: ${how}`,
    file: 'broken.pdf',
    content,
    argv: ['attach', 'BADFPAID-0001', 'FILE', '--results', 'paid.results.csv'],
    exit: 2,
    says,
  });

describe('every file the tool reads, broken: its name, what is wrong and what would be valid', () => {
  it.each(CASES.map((c) => [c.what, c] as const))('%s', async (_, c) => {
    const dir = await dirs.make();
    cpSync(scene, dir, { recursive: true });
    const path = join(dir, c.file);
    mkdirSync(join(path, '..'), { recursive: true });
    const content = typeof c.content === 'function' ? c.content() : c.content;
    if (content === FOLDER) mkdirSync(path);
    else writeFileSync(path, content);
    const env = Object.fromEntries(Object.entries(c.env ?? {}).map(([k, v]) => [k, v === 'FILE' ? path : v]));
    const r = await runMain(
      c.argv.map((a) => (a === 'FILE' ? c.file : a)),
      { cwd: dir, env: envOf(dir, env) },
    );
    const all = r.stdout + r.stderr;
    expect(all).not.toMatch(/^\s+at .+/m);
    expect(r.stderr).not.toContain('unexpected error');
    expect(r.code, all).toBe(c.exit);
    // one line naming the file (a row's problem: on stdout), no line of megabytes
    const line = (c.exit === 1 ? r.stdout : r.stderr).split('\n').find((l) => c.says.test(l));
    expect(line, all.slice(0, 2000)).toBeDefined();
    expect(line).toContain(c.file.split('/').pop());
    expect(Math.max(...all.split('\n').map((l) => l.length))).toBeLessThan(2000);
  });
});
