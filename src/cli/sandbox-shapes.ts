// Which reading of the spec a local sandbox answers in: `sandbox --shapes`, $PAYOUT_SANDBOX_SHAPES.
// Type-only import: commands that never start a sandbox do not load it.
import type { SandboxShapes } from '../sandbox/contract.ts';
import { UsageError } from './command.ts';

export const SHAPES_VARIABLE = 'PAYOUT_SANDBOX_SHAPES';
const CHOICES: readonly SandboxShapes[] = ['strict', 'variant'];

/** undefined when not given; anything else exits 2 */
export function parseShapes(value: string | undefined, source: string): SandboxShapes | undefined {
  const v = value?.trim().toLowerCase();
  if (!v) return undefined;
  if ((CHOICES as readonly string[]).includes(v)) return v as SandboxShapes;
  throw new UsageError(`${source} is strict or variant (got "${value}")`);
}
