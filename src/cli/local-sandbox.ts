// `--env local`: the embedded sandbox, its state in <state>/local-sandbox.json (0600) between commands, one at a time
// (local-sandbox.lock; another waits up to a minute), written after every request that may change it: a kill leaves it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { acquireLock, LockBusy } from '../files/lock.ts';
import { readJsonFile, writeFileAtomicSync } from '../files/atomic.ts';
import { SandboxStateSchema, startSandbox, type LocalSandbox, type SandboxShapes } from '../sandbox/start-sandbox.ts';
import { RATE_LIMIT_PER_SECOND } from '../spec/codes.ts';
import { CommandError, saying, UsageError } from './command.ts';
import { ExitCode } from './exit-codes.ts';

const AUTO_ADVANCE_VARIABLE = 'PAYOUT_SANDBOX_AUTO_ADVANCE';

/** "PROCESSING_MS,SUCCESSFUL_MS" or one number for both. */
export function autoAdvanceFlag(value: string, source = '--auto-advance'): { toProcessingMs: number; toSuccessfulMs: number } {
  const nums = value.split(',').map(Number);
  if (nums.length > 2 || nums.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new UsageError(`${source} takes MS or PROCESSING_MS,SUCCESSFUL_MS, e.g. 2000,5000 (got "${value}")`);
  }
  return { toProcessingMs: nums[0]!, toSuccessfulMs: nums[1] ?? nums[0]! };
}

/** The local sandbox of a state folder, from its saved state; close() saves it and releases the lock. */
export async function startLocalSandbox(
  stateRoot: string,
  /** rate: the client's pace: the sandbox's limit is raised to it, never below the spec's 5. */
  o: { shapes?: SandboxShapes; rate?: number; vars: NodeJS.ProcessEnv },
): Promise<LocalSandbox & { account: string }> {
  const advance = o.vars[AUTO_ADVANCE_VARIABLE]?.trim();
  const autoAdvance = advance ? autoAdvanceFlag(advance, `$${AUTO_ADVANCE_VARIABLE}`) : false;
  mkdirSync(stateRoot, { recursive: true, mode: 0o700 });
  const path = join(stateRoot, 'local-sandbox.json');
  const lock = await saying(
    () => acquireLock(`${path.slice(0, -'.json'.length)}.lock`, { waitMs: 60_000, purpose: 'local sandbox' }),
    LockBusy,
    (e) =>
      new CommandError(`the local sandbox of ${stateRoot} is in use: ${e.message}; try again when it ends`, ExitCode.SERVICE_UNAVAILABLE),
  );
  try {
    // (torn: refused as a wrongly shaped one; started afresh, the payouts of earlier runs would be forgotten)
    const saved = readJsonFile(path, null);
    const parsed = saved === undefined ? undefined : SandboxStateSchema.safeParse(saved);
    if (parsed && !parsed.success)
      throw new CommandError(`${path} is torn or not the state of a local sandbox of this version: move it away to start afresh`);
    // (requests arrive only once startSandbox has returned: `sandbox` is set by then)
    const save = () => writeFileAtomicSync(path, JSON.stringify(sandbox.snapshot()), { mode: 0o600 });
    const sandbox: LocalSandbox = await startSandbox({
      shapes: o.shapes,
      autoAdvance,
      rateLimitPerSecond: Math.max(RATE_LIMIT_PER_SECOND, Math.ceil(o.rate ?? 0)),
      ...(parsed ? { state: parsed.data } : {}),
      onRequest: (e) => {
        if (e.method !== 'GET') save();
      },
    });
    save();
    return {
      ...sandbox,
      // its address changes at every start, so no URL names its ledger
      account: 'local',
      close: async () => {
        try {
          await sandbox.close();
          save();
        } finally {
          lock.release();
        }
      },
    };
  } catch (e) {
    lock.release();
    throw e;
  }
}
