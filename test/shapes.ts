// Which reading of the spec the end-to-end tests' sandboxes answer in (src/sandbox/shapes.ts): the
// `variant` project of test/vitest.config.ts sets PB_SANDBOX_SHAPES=variant, so the same tests run
// against the other plausible shapes of everything the spec marks "not shown". A test that passes
// only because the sandbox and the client share one reading fails there.
import type { SandboxShapes } from '../src/sandbox/contract.ts';

export const TEST_SHAPES: SandboxShapes = process.env.PB_SANDBOX_SHAPES === 'variant' ? 'variant' : 'strict';

/**
 * A test's own read of a sandbox answer, in either reading: the object inside a `{statusCode,
 * message, data}` envelope, or the body itself. (Not the client's parser: the tests check the
 * client against the sandbox, so they must not read the sandbox through it.)
 */
export function bare<T>(body: unknown): T {
  const b = body as { data?: unknown; statusCode?: unknown; id?: unknown };
  return (
    b && typeof b === 'object' && 'statusCode' in b && b.data && typeof b.data === 'object' && !Array.isArray(b.data) ? b.data : b
  ) as T;
}
