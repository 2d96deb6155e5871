// The layer rule of test/eslint.config.js (src/README.md "Layers"): a file of a low layer that
// imports a higher one is an error, and an import downwards is not. Linted as virtual files with
// only that rule: no type information is needed for it.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({
  cwd: new URL('..', import.meta.url).pathname,
  overrideConfigFile: 'test/eslint.config.js',
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
});

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('layers only point down', () => {
  it('refuses a low layer importing a higher one, whatever the form of the import', async () => {
    for (const code of [
      "import { runBatch } from '../engine/pipeline.ts';",
      "import type { RunResult } from '../engine/pipeline.ts';",
      "export { runBatch } from '../engine/pipeline.ts';",
    ]) {
      expect(await problems('src/client/x.ts', code)).toEqual([
        expect.stringMatching(/^no-restricted-imports: .*src\/client\/ may not import .*engine\/.*layers only point down/),
      ]);
    }
    expect(await problems('src/watch/x.ts', "import { x } from '../report/write-report.ts';")).toHaveLength(1);
    expect(await problems('src/money.ts', "import { x } from './spec/codes.ts';")).toHaveLength(1);
  });

  it('keeps the sandbox beside the layers: it imports the spec only, and only the CLI and the demo import it', async () => {
    expect(await problems('src/sandbox/x.ts', "import { x } from '../client/client.ts';")).toHaveLength(1);
    expect(await problems('src/client/x.ts', "import type { x } from '../sandbox/contract.ts';")).toHaveLength(1);
    expect(await problems('src/sandbox/x.ts', "import { x } from '../spec/codes.ts';")).toEqual([]);
    expect(await problems('src/demo/x.ts', "import { x } from '../sandbox/start-sandbox.ts';")).toEqual([]);
  });

  it('lets only src/ledger/ and src/cli/ name an implementation of the ledger', async () => {
    for (const file of ['file.ts', 'postgres.ts', 'pg-db.ts', 'schema.ts', 'import.ts']) {
      for (const from of ['src/approvals/x.ts', 'src/watch/x.ts', 'src/engine/x.ts', 'src/follow-up/x.ts'])
        expect(await problems(from, `import { x } from '../ledger/${file}';`)).toEqual([
          expect.stringMatching(/^no-restricted-imports: .*ledger\/open\.ts/),
        ]);
      expect(await problems('src/cli/x.ts', `import { x } from '../ledger/${file}';`)).toEqual([]);
      expect(await problems('src/ledger/x.ts', `import { x } from './${file}';`)).toEqual([]);
    }
    const chosen = "import { ledgerOf } from '../ledger/open.ts';\nimport type { Ledger } from '../ledger/account-ledger.ts';";
    expect(await problems('src/watch/x.ts', chosen)).toEqual([]);
  });

  it('lets a layer import the ones below it, the base files and its own folder', async () => {
    const code = [
      "import { withLock } from '../files/lock.ts';",
      "import { Dec } from '../money.ts';",
      "import { x } from './pipeline.ts';",
      "import { y } from '../client/client.ts';",
      "import { z } from 'node:fs';",
    ].join('\n');
    expect(await problems('src/engine/x.ts', code)).toEqual([]);
    expect(await problems('src/cli/commands/x.ts', "import { x } from '../../follow-up/webhook-receiver.ts';")).toEqual([]);
  });
});
