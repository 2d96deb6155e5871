// Which reading of the spec a local sandbox answers in (src/sandbox/shapes.ts): `--shapes` of
// `payout-batch sandbox`, and $PAYOUT_SANDBOX_SHAPES for it and for the sandbox embedded by
// `--env local`. Read here, in the CLI layer: the core never reads process.env.
// Type-only import: commands that never start a sandbox do not load it.
import type { SandboxShapes } from '../sandbox/contract.ts';
import { UsageError } from './command.ts';

export const SHAPES_VARIABLE = 'PAYOUT_SANDBOX_SHAPES';
const CHOICES: readonly SandboxShapes[] = ['strict', 'variant'];

/** The reading named by a flag or variable (`source` names it in the message); undefined when not given. Else exit 2. */
export function parseShapes(value: string | undefined, source: string): SandboxShapes | undefined {
  const v = value?.trim().toLowerCase();
  if (!v) return undefined;
  if ((CHOICES as readonly string[]).includes(v)) return v as SandboxShapes;
  throw new UsageError(`${source} is strict or variant (got "${value}")`);
}
