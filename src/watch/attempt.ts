/** f's value, or undefined when it throws: for what a watch may find gone or changed meanwhile, and says so elsewhere. */
export function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}
