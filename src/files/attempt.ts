/** f's value, or undefined when it throws: for what may be gone or changed meanwhile, and is said elsewhere (or not at all). */
export function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/**
 * f's value, or undefined when what it reads does not exist (ENOENT, or one of `missing`); any other error is thrown
 * as `refusal` makes it (by default, as it came): read as missing, a folder or file that is there would be taken as nothing there.
 */
export function unlessMissing<T>(
  f: () => T,
  refusal: (code: string, e: unknown) => unknown = (_, e) => e,
  missing = ['ENOENT'],
): T | undefined {
  try {
    return f();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    if (missing.includes(code)) return undefined;
    throw refusal(code, e);
  }
}
