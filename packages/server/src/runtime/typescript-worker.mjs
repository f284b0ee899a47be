// The entry of every worker thread when the service runs from its TypeScript sources
// (start-worker.ts says why). Not in the compiled package: compiled, a thread starts on its
// module's .js directly. Plain JavaScript, so that it loads before tsx does.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// The repository's tsconfig whatever the working folder: its `paths` send @model-messages/* to
// their sources, as they are in the thread that started this one.
register({ tsconfig: fileURLToPath(new URL('../../../../tsconfig.json', import.meta.url)) });
// The thread's module comes last on argv (start-worker.ts); taken off, so that the module sees
// the argv it would see compiled.
await import(process.argv.pop());
