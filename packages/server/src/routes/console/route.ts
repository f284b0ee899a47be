/**
 * `/console`: the operator's console (issue 37), a page the service serves itself from the files
 * the build puts in the server package's `dist/console/` (packages/server/console/: its sources,
 * and preact and htm vendored beside them), so that nothing is loaded from outside. The page and
 * its files need no key, as they hold no data: the page asks for an admin key, keeps it in the
 * tab's memory, and reads the service through the admin endpoints (routes/admin/). A strict
 * Content-Security-Policy keeps it to its own files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ServiceError } from '@model-messages/protocol';
import type { Router, TextReply } from '../../http/router.js';

/** The built console, from this file as a source (src/routes/console/) or compiled (dist/routes/console/). */
const CONSOLE_FOLDER = new URL('../../../dist/console/', import.meta.url);

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** The page's own files only: a name, one dot, a known kind; no folder, so no path leaves the console's. */
const FILE_NAME = /^[a-z0-9-]+\.(html|js|css)$/;

const HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

export function registerConsoleRoutes(router: Router): void {
  const files = new Map<string, TextReply>();
  // The folder is listed once, at the first console request: a name it lacks is a 404 without a
  // read of the disk, so requests for files that do not exist (the path needs no key) cost nothing.
  let listed: ReadonlySet<string> | undefined;
  const file = (name: string): TextReply => {
    const known = files.get(name);
    if (known !== undefined) return known;
    listed ??= consoleFiles();
    if (!listed.has(name)) {
      throw new ServiceError(
        'not_found',
        name === 'index.html' && listed.size === 0
          ? 'the console is not built: run npm run build'
          : `/console/${name} is not a file of the console`,
      );
    }
    const text = readFileSync(new URL(name, CONSOLE_FOLDER), 'utf8');
    const reply = { text, contentType: CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)]!, headers: HEADERS };
    files.set(name, reply);
    return reply;
  };
  router.get('/console', async () => file('index.html'));
  router.get('/console/:file', async (context) => file(context.params.file!));
}

/** The page's files in the built folder; none when it is not built. */
function consoleFiles(): ReadonlySet<string> {
  try {
    return new Set(readdirSync(CONSOLE_FOLDER).filter((name) => FILE_NAME.test(name)));
  } catch {
    return new Set();
  }
}
