import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PUBLISHED_SCHEMAS, renderSchema } from './published-schemas.js';

for (const entry of PUBLISHED_SCHEMAS) {
  mkdirSync(dirname(entry.path), { recursive: true });
  writeFileSync(entry.path, renderSchema(entry));
  console.log(`wrote ${entry.path}`);
}
