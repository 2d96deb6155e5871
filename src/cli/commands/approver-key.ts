// `payout-batch approver-key new --as NAME`: an approver's Ed25519 key pair; the private key (0600) is never printed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, str } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { newKeyPair } from '../../approvals/approvals-file.ts';
import { personName } from './approve.ts';
import { shellWord } from '../../text.ts';

const builder = (y: Argv) =>
  y
    .positional('action', { type: 'string', choices: ['new'] as const, demandOption: true, describe: '`new`: make a key pair' })
    .option('as', { type: 'string', demandOption: true, describe: "The approver's name, as the approvers list will name them" })
    .option('out', str('The folder to write the two files into (default: the current folder)'));

const slug = (name: string) =>
  name
    .trim()
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '_');

export default defineCommand(builder, async (args, io) => {
  const name = personName(args.as);
  const dir = resolve(io.cwd, args.out ?? '.');
  const k = newKeyPair();
  const keyPath = join(dir, `${slug(name)}.approver-key.pem`);
  const pubPath = join(dir, `${slug(name)}.approver.pub.json`);
  const entry = JSON.stringify({ name, publicKey: k.publicKey });
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // 'wx': an existing key is never overwritten (its approvals would no longer be anyone's).
    writeFileSync(keyPath, k.privatePem, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CommandError(
      code === 'EEXIST'
        ? `${keyPath} exists: a key is never overwritten; remove it first, or choose another --out folder`
        : `cannot write ${keyPath}: ${code ?? (e as Error).message}`,
      ExitCode.UNUSABLE_INPUT,
    );
  }
  writeFileSync(pubPath, entry + '\n');
  io.stdout.write(
    `Approver key of ${name}, fingerprint ${k.fingerprint}\n` +
      `  private key: ${keyPath} (readable by you only: keep it, never share or send it)\n` +
      `  public key:  ${pubPath}\n` +
      `Give the public key file to whoever keeps the approvers list, who adds it with ` +
      `\`payout-batch approvers add ${shellWord(pubPath)} --out approvers.json\`; its entry is:\n  ${entry}\n` +
      `Approve a plan with \`payout-batch approve PLAN --as ${shellWord(name)} --key-file ${shellWord(keyPath)}\`.\n`,
  );
  return ExitCode.OK;
});
