// The console's files that tsc does not make (issue 37): its page and style sheet, and preact,
// preact/hooks and htm vendored from node_modules, so that the page loads nothing from outside.
// Run by the build after tsc (the root's `npm run build`, the server package's prepack). The page
// imports them by relative paths, without an import map (an inline script the console's
// Content-Security-Policy forbids), so hooks' one bare import of "preact" is pointed at the copy.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, '..', 'dist', 'console');
const require = createRequire(import.meta.url);
mkdirSync(target, { recursive: true });
for (const file of ['index.html', 'console.css']) copyFileSync(join(here, file), join(target, file));

/** The package folder of `name`, found from here as the build sees it (htm exports no package.json). */
function packageFolder(name) {
  let folder = dirname(require.resolve(name));
  while (
    !existsSync(join(folder, 'package.json')) ||
    JSON.parse(readFileSync(join(folder, 'package.json'))).name !== name
  )
    folder = dirname(folder);
  return folder;
}

/** Copies a package's file under `to`, headed by the package's name, version and license. */
function vendor(name, file, to, rewrite = (text) => text) {
  const folder = packageFolder(name);
  const { version, license } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  const header = `/* ${name} ${version}, ${license} license (third-party-licenses.txt), vendored by mms's build */\n`;
  // Without its source map, which is not vendored: the browser would ask for it in vain.
  const text = readFileSync(join(folder, file), 'utf8').replace(/\n?\/\/# sourceMappingURL=.*\s*$/, '\n');
  writeFileSync(join(target, to), header + rewrite(text));
  return `${name} ${version}\n\n${readFileSync(join(folder, 'LICENSE'), 'utf8')}`;
}

const licenses = [
  vendor('preact', 'dist/preact.mjs', 'preact.js'),
  vendor('preact', 'hooks/dist/hooks.mjs', 'preact-hooks.js', (text) => {
    const pointed = text.replace(/from\s*"preact"/g, 'from"./preact.js"');
    if (pointed === text) throw new Error('preact/hooks: its import of "preact" is not where it was');
    return pointed;
  }),
  vendor('htm', 'dist/htm.module.js', 'htm.js'),
];
writeFileSync(join(target, 'third-party-licenses.txt'), [licenses[0], licenses[2]].join('\n\n'));
