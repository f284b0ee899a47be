// The entry of a JSON parse worker thread (json-body-parser.ts). Registers tsx itself, as
// tools/web-fetch/conversion-worker.mjs explains: on Node 20 module hooks do not reach a worker.
// Plain JavaScript, so that it loads before tsx does.
import { register } from 'tsx/esm/api';

register();
await import('./json-parse-thread.ts');
