/**
 * The package's entry loads no engine or converter it may not need: node-llama-cpp (0.9 s of CPU
 * to import, 1.7 s through the tests' loader) loads with the first llama-cpp model, linkedom in
 * the HTML conversion thread. Every test file and every `mms serve` of another engine paid
 * node-llama-cpp while one module imported it statically for a function it also imported lazily.
 * The static import graph from src/index.ts is walked here, as layering.test.ts walks
 * the backends': a static import of either anywhere in it fails this test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const LAZY = ['node-llama-cpp', 'linkedom', '@mozilla/readability', 'turndown', 'pyodide'];

/** Specifiers of a module's static imports and re-exports, type-only ones left out. */
function staticImports(source: string): string[] {
  const pattern = /^(?:import|export)\s+(?!type\s)(?:[^;'"]*?\sfrom\s+)?'([^']+)';/gms;
  return [...source.matchAll(pattern)].map((match) => match[1]!);
}

function sourceOf(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('@model-messages/')) return join('packages', specifier.split('/')[1]!, 'src/index.ts');
  if (!specifier.startsWith('.')) return undefined;
  const path = join(dirname(from), specifier);
  return [path.replace(/\.js$/, '.ts'), path].find((candidate) => existsSync(candidate));
}

test('the static import graph of @model-messages/server reaches neither node-llama-cpp nor the HTML converters', () => {
  const seen = new Set<string>();
  const found: string[] = [];
  const pending = ['packages/server/src/index.ts'];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of staticImports(readFileSync(file, 'utf8'))) {
      if (LAZY.some((name) => specifier === name || specifier.startsWith(`${name}/`)))
        found.push(`${relative('.', file)} imports ${specifier}`);
      const next = sourceOf(file, specifier);
      if (next !== undefined) pending.push(next);
    }
  }
  assert.ok(seen.size > 100, `walked only ${seen.size} files: the import pattern no longer matches`);
  assert.deepEqual(found, []);
});
