/**
 * A headless Chromium for the console's browser tests (issue 37): the system's package (Debian's
 * `chromium`; `.ci/run` installs it where missing), driven by puppeteer-core, which brings no
 * browser of its own. Where none is installed the browser tests skip, saying why
 * (`chromiumMissing`), as the Redis tests do. CHROMIUM_PATH names another binary.
 */
import { spawnSync } from 'node:child_process';
import type { Browser } from 'puppeteer-core';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome'];

function chromiumPath(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given) return given;
  for (const name of CANDIDATES) {
    const found = spawnSync('which', [name], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim() !== '') return found.stdout.trim();
  }
  return undefined;
}

/** Why the browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  if (chromiumPath() !== undefined) return undefined;
  return 'no Chromium is installed (apt-get install chromium; .ci/run installs it), nor named by CHROMIUM_PATH';
}

/** A headless Chromium; close it when done. puppeteer-core is loaded only here. */
export async function launchChromium(): Promise<Browser> {
  const { default: puppeteer } = await import('puppeteer-core');
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // As root in a container Chromium's own sandbox cannot start; the pages are the console's own.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    defaultViewport: { width: 1360, height: 860 },
  });
}
