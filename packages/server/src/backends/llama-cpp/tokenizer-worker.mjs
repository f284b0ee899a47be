// The entry of a llama.cpp tokenizer worker thread (prompt-tokenizer.ts). Registers tsx itself,
// as tools/web-fetch/conversion-worker.mjs explains: on Node 20 module hooks do not reach a
// worker. Plain JavaScript, so that it loads before tsx does.
import { register } from 'tsx/esm/api';

register();
await import('./tokenizer-thread.ts');
