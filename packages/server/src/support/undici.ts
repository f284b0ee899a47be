/**
 * undici, the HTTP client of the backends in front of other servers and of the web tools,
 * loaded at its first use rather than with the modules that use it: it costs about a tenth of
 * a second or more to load, which a service that sends no request of its own (the scripted
 * backend, no web tools called yet) should not pay at every start. It is CommonJS, so a require
 * loads it synchronously where it is first needed. Its types come from `import type`.
 */
import { createRequire } from 'node:module';

type Undici = typeof import('undici');

let loaded: Undici | undefined;

export function undici(): Undici {
  loaded ??= createRequire(import.meta.url)('undici') as Undici;
  return loaded;
}
