// Shared by the bench and chaos scripts: a child process run to its end, and their flags.
// Flags through node's own parseArgs (strict: an unknown flag is an
// error naming it). Numbers and MIN-MAX ranges are checked here once.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

export function readFlags(argv: string[], numbers: string[], booleans: string[] = [], ranges: string[] = []) {
  const options = Object.fromEntries([
    ...[...numbers, ...ranges].map((n) => [n, { type: 'string' as const }]),
    ...booleans.map((n) => [n, { type: 'boolean' as const }]),
  ]);
  const usage = [...numbers.map((n) => `--${n} N`), ...ranges.map((n) => `--${n} MIN-MAX`), ...booleans.map((n) => `--${n}`)].join(' ');
  const said = `flags: ${usage} (the script's header says what each does, and names any other)`;
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(said);
    process.exit(0);
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as typeof values;
  } catch (e) {
    // (an unknown flag or a missing value: said in a line, not as a stack trace)
    console.error(`${(e as Error).message}\n${said}`);
    process.exit(2);
  }
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

/** Runs `node ...args` to its end: exit code, output and wall time in ms. */
export function spawnChild(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - t0 }));
  });
}
