// ESLint for src/ and test/ (npm run lint; part of npm test). Kept under test/ so the top level
// stays as agreed. Type-aware: the rules that catch a promise left floating or passed where a
// callback's result is ignored are the ones that lose money silently in a batch run.
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers of src/ (src/README.md "Layers"), bottom up: a folder may import the base files
// (src/*.ts) and the folders listed before its own, never one after it. The base files import no
// folder. Each folder is named once, here.
const SPEC = 'spec';
const LAYERS = [
  SPEC, // the spec's words: codes, schemas, status order
  'files', // the lock, the atomic write, the per-path queue
  'input', // reading CSV and Excel
  'validation', // rows checked offline
  'screening', // payees against sanctions lists
  'client', // the service's HTTP client
  'journal', // the append-only journal
  'ledger', // what an account has sent: one interface, a file and a PostgreSQL implementation
  'results', // the results file
  'engine', // run, retry, plan
  'approvals', // signed plans
  'signals', // pings, metrics and alerts of a job nobody watches
  'follow-up', // after a batch: status, reconcile, attach, listen
  'watch', // the watch folder
  'report', // HTML reports
  'demo', // npm run demo
  'cli', // the commands
];
// Folders beside the layers: they import only `imports` (and the base files), and only `importedBy` import them.
const BESIDE = { sandbox: { imports: [SPEC], importedBy: ['demo', 'cli'] } };

const FOLDERS = [...LAYERS, ...Object.keys(BESIDE)];
const mayImport = (folder) =>
  BESIDE[folder]?.imports ?? [...LAYERS.slice(0, LAYERS.indexOf(folder)), ...FOLDERS.filter((f) => BESIDE[f]?.importedBy.includes(folder))];

// Which ledger a command holds is known in src/ledger/ and chosen in src/cli/ only (issue 38): every
// other folder imports the interface (account-ledger.ts) and the choice (open.ts), never an implementation.
const KNOW_THE_LEDGER = ['ledger', 'cli'];

/** One config per folder (and one for the base files): no-restricted-imports of every folder it may not import. */
const layerRules = [undefined, ...FOLDERS].flatMap((folder) => {
  const allowed = folder ? mayImport(folder) : [];
  const banned = FOLDERS.filter((f) => f !== folder && !allowed.includes(f));
  const who = folder ? `src/${folder}/` : 'the base files of src/';
  const list = banned.map((f) => `${f}/`);
  const what = allowed.length
    ? `may not import ${list.slice(0, -1).join(', ')}${list.length > 1 ? ' or ' : ''}${list.at(-1)}`
    : `import${folder ? 's' : ''} no folder of src/`;
  const patterns = [
    ...(banned.length
      ? [{ regex: `^(?:\\.{1,2}/)+(?:${banned.join('|')})/`, message: `${who} ${what}: layers only point down (src/README.md "Layers").` }]
      : []),
    ...(allowed.includes('ledger') && !KNOW_THE_LEDGER.includes(folder)
      ? [
          {
            regex: '^(?:\\.{1,2}/)+ledger/(?!(?:open|account-ledger)\\.ts$)',
            message: `${who} does not know which ledger it holds: import ledger/open.ts (the choice) or ledger/account-ledger.ts (the interface).`,
          },
        ]
      : []),
  ];
  if (!patterns.length) return [];
  return [
    { files: [folder ? `src/${folder}/**/*.{ts,js}` : 'src/*.{ts,js}'], rules: { 'no-restricted-imports': ['error', { patterns }] } },
  ];
});

// What is paid, planned, signed or written must not depend on the host's locale or time zone (hosts in
// Los Angeles, Tallinn and UTC verify each other's plans): no order by LANG, no date in the host's zone.
const LOCAL_TIME = ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds'].flatMap((f) => [`get${f}`, `set${f}`]);
const hostFree = {
  files: ['src/**/*.ts'],
  rules: {
    'no-restricted-properties': [
      'error',
      { property: 'localeCompare', message: "orders by the host's LANG: use byText (src/text.ts), code-unit order." },
      ...[...LOCAL_TIME, 'getTimezoneOffset', 'toLocaleDateString', 'toLocaleTimeString'].map((property) => ({
        property,
        message: "the host's time zone: use the getUTC* methods, or name the zone (Intl.DateTimeFormat's timeZone).",
      })),
    ],
    'no-restricted-syntax': [
      'error',
      { selector: "NewExpression[callee.name='Date'][arguments.length>1]", message: "a date in the host's time zone: use Date.UTC(...)." },
      {
        selector: 'CallExpression[callee.property.name=/^toLocale/][arguments.length=0]',
        message: "the host's locale: name one (toLocaleString('en-US')).",
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: fileURLToPath(new globalThis.URL('..', import.meta.url)) },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // An async function without await is how an interface that returns a promise is met.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests read JSON the CLI printed and bodies the sandbox answered: `any` is their daily bread.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  hostFree,
  ...layerRules,
);
