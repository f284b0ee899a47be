import { readFileSync } from 'node:fs';

/** This package's version, from its package.json: two folders up from src/cli/ and from dist/cli/ alike. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
