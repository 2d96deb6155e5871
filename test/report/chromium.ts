// Debian's Chromium for the browser test (test/report/browser.e2e.test.ts), driven by
// playwright-core: a test tool's own browser download does not work on these machines, the
// distribution's package does. CI installs it before `npm test` (.ci/run); a run elsewhere installs
// it here when it can (as root, with apt-get), else fails saying how: never a silent skip.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const INSTALL = 'apt-get update && apt-get install -y --no-install-recommends chromium';

/** The Debian package's browser, installed with apt-get when absent (root only). Its path. */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const how = `the browser test needs Debian's chromium at ${CHROMIUM}: install it as root with \`${INSTALL}\``;
  if (process.getuid?.() !== 0) throw new Error(`${how} (this test runs as uid ${process.getuid?.()}, so it cannot)`);
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  } catch (e) {
    throw new Error(`${how}; installing it here failed: ${(e as Error).message}`);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`${how}; apt-get installed chromium but ${CHROMIUM} is still missing`);
  return CHROMIUM;
}

/**
 * Headless Chromium with a fresh, empty profile: Playwright makes one in the temporary folder for
 * each launch and removes it on close (it refuses a --user-data-dir among the args). The
 * background-networking flags keep the browser itself from reaching for Google's hosts at start
 * (refused on a closed network, and noise in a test that asserts no request leaves the page);
 * --no-sandbox because CI runs as root.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
