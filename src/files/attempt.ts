/** f's value, or undefined when it throws: for what may be gone or changed meanwhile, and is said elsewhere (or not at all). */
export function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}
