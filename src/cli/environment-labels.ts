// The environment labels (client/environment.ts) in a treasurer's words, and the environment
// `run --plan` takes from its plan.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { accountOf } from '../ledger/account-ledger.ts';
import { parsePlanFile } from '../engine/plan-file.ts';
import { CommandError, type CliIO } from './command.ts';
import { ExitCode } from './exit-codes.ts';

export const ENVIRONMENT_MEANING: Record<string, string> = {
  local: 'the sandbox embedded in the command, its state kept in the state folder (--env local); no money moves',
  sandbox: "the service's sandbox (staging) host; no money moves",
  production: 'the live service: real money moves',
  custom: 'a base URL given with --base-url or $PAYOUT_BASE_URL; not a known service environment',
};

export function environmentText(name: string, baseUrl?: string): string {
  const meaning = ENVIRONMENT_MEANING[name];
  return `${name}${meaning ? ` (${meaning})` : ''}${baseUrl ? ` ${baseUrl}` : ''}`;
}

type EnvironmentFlags = { env?: string; 'base-url'?: string };

/**
 * `run --plan`: the run talks to the plan's service whatever $PAYOUT_ENV or $PAYOUT_BASE_URL say; a
 * flag naming another is refused (exit 3): a plan is approved for one account. A `local` plan's base
 * URL names no account (its port changes). Production must still be named on the command line.
 */
export function withPlanEnvironment<A extends EnvironmentFlags & { plan?: string }>(args: A, io: CliIO): [A, CliIO] {
  const plan = args.plan ? planService(resolve(io.cwd, args.plan)) : undefined;
  if (!plan) return [args, io];
  const refuse = (given: string) =>
    new CommandError(
      `${given}, but the plan was made for ${environmentText(plan.env, plan.env === 'local' ? undefined : plan.baseUrl)}: ` +
        'run it without the flag, or make a plan for that service (payout-batch plan FILE --out PLAN). Nothing was sent',
      ExitCode.REFUSED,
    );
  const planEnv = plan.env === 'custom' ? undefined : plan.env;
  if (args.env !== undefined && args.env !== planEnv) throw refuse(`--env ${args.env}`);
  const given = args['base-url'];
  if (given !== undefined && (plan.env === 'local' || !sameAccount(given, plan.baseUrl))) throw refuse(`--base-url ${given}`);
  const env = { ...io.env, PAYOUT_ENV: undefined, PAYOUT_BASE_URL: undefined };
  return [
    { ...args, env: planEnv, 'base-url': plan.env === 'local' ? undefined : plan.baseUrl },
    { ...io, env },
  ];
}

/** The connection flags given, to repeat in a command printed (`status RESULTS`, `retry`), so it works as printed. */
export function connectionHint(args: EnvironmentFlags): string {
  const url = args['base-url'];
  return `${args.env ? ` --env ${args.env}` : ''}${url ? ` --base-url ${url}` : ''}`;
}

/** undefined when the plan cannot be read (the engine says why, exit 2) */
function planService(path: string): { env: string; baseUrl: string } | undefined {
  try {
    return parsePlanFile(readFileSync(path, 'utf8'), path);
  } catch {
    return undefined;
  }
}

function sameAccount(a: string, b: string): boolean {
  try {
    return accountOf(a) === accountOf(b);
  } catch {
    return false;
  }
}
