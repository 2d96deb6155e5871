// Flags of the bench and chaos scripts, through node's own parseArgs (strict: an unknown flag is an
// error naming it). Numbers and MIN-MAX ranges are checked here once.
import { parseArgs } from 'node:util';

export function readFlags(argv: string[], numbers: string[], booleans: string[] = [], ranges: string[] = []) {
  const options = Object.fromEntries([
    ...[...numbers, ...ranges].map((n) => [n, { type: 'string' as const }]),
    ...booleans.map((n) => [n, { type: 'boolean' as const }]),
  ]);
  const values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  const num = (name: string): number | undefined => {
    const v = values[name];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`--${name} takes a number, not "${String(v)}"`);
    return n;
  };
  const range = (name: string): [number, number] | undefined => {
    const v = values[name];
    if (v === undefined) return undefined;
    const m = /^(\d+)-(\d+)$/.exec(String(v));
    if (!m) throw new Error(`--${name} MIN-MAX, in ms`);
    return [Number(m[1]), Number(m[2])];
  };
  const flag = (name: string): boolean | undefined => (values[name] === undefined ? undefined : values[name] === true);
  return { num, range, flag };
}
