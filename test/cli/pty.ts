// The CLI on a pseudo-terminal, as a person runs it: `script` (util-linux) gives it a real pty for
// stdin, stdout and stderr, sized with stty, and the test answers a [y/N] question through it.
// `screenLines` replays what was written the way a terminal of that width shows it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../engine/helpers.ts';

export interface TerminalRun {
  code: number | null;
  /** Everything written to the terminal, escape sequences included. */
  output: string;
  /** The output up to the moment the question appeared (all of it when none did). */
  atQuestion: string;
}

/** Runs `payout-batch ...args` (of `bin`) on a `cols`×`rows` pty; `answer` is typed when "[y/N]" appears (a function: once it gives it). */
export function onTerminal(
  args: string[],
  o: {
    env: Record<string, string>;
    cwd?: string;
    cols?: number;
    rows?: number;
    answer?: string | (() => Promise<string>);
    timeoutMs?: number;
    bin?: string;
  },
): Promise<TerminalRun> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const cols = o.cols ?? 120;
  const rows = o.rows ?? 40;
  const cmd = `stty rows ${rows} cols ${cols}; exec ${[process.execPath, o.bin ?? join(ROOT, 'dist/bin.js'), ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
    cwd: o.cwd,
    env: { TERM: 'xterm', ...o.env, COLUMNS: String(cols), LINES: String(rows) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let atQuestion: string | undefined;
  let failed: Error | undefined;
  const onData = (d: Buffer) => {
    output += d.toString('utf8');
    if (atQuestion === undefined && output.includes('[y/N]')) {
      atQuestion = output;
      const { answer } = o;
      if (typeof answer === 'string') child.stdin.write(answer);
      else if (answer)
        answer().then(
          (a) => child.stdin.write(a),
          (e: Error) => {
            failed = e;
            child.kill('SIGKILL');
          },
        );
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exit within the time allowed; the terminal showed:\n${output}`));
    }, o.timeoutMs ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failed) reject(failed);
      else resolve({ code, output, atQuestion: atQuestion ?? output });
    });
  });
}

/**
 * The lines a terminal `cols` wide shows for `text`: long lines wrap, "\r" returns to the first
 * column, the erase sequences (ESC[K, ESC[J) clear the rest of the line and ESC[nG moves to column
 * n; other escape sequences (colours, cursor on/off) draw nothing.
 */
export function screenLines(text: string, cols: number): string[] {
  const lines: string[] = [];
  let line: string[] = [];
  let col = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\x1b') {
      const m = /^\[([\d;?]*)([A-Za-z])/.exec(text.slice(i + 1));
      if (m) {
        if (m[2] === 'K' || m[2] === 'J') line.length = col;
        if (m[2] === 'G') col = Math.max(0, Number(m[1] || 1) - 1);
        i += m[0].length;
      }
    } else if (ch === '\r') col = 0;
    else if (ch === '\n') {
      lines.push(shown(line));
      line = [];
      col = 0;
    } else {
      if (col === cols) {
        lines.push(shown(line));
        line = [];
        col = 0;
      }
      line[col++] = ch;
    }
  }
  lines.push(shown(line));
  return lines;
}
const shown = (line: string[]) =>
  Array.from(line, (c) => c ?? ' ')
    .join('')
    .trimEnd();
