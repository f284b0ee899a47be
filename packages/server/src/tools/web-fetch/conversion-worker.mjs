// The entry of a conversion worker thread (html-converter.ts). The sources are TypeScript run
// through tsx, and on Node 20 module hooks do not reach a worker: those that bin/mms.js
// registers with tsx's register() stay in the main thread ("Unknown file extension .ts" in the
// worker), and `node --import tsx` (the tests) would reach it only through inherited execArgv.
// So the worker is started with an empty execArgv and registers tsx itself, and loads the same
// way however the service was started. Plain JavaScript, so that it loads before tsx does.
import { register } from 'tsx/esm/api';

register();
await import('./conversion-thread.ts');
