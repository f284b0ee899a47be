/**
 * No backend reads the wire request (issue 15): every engine is told what the one model call
 * says (packages/server/src/backends/call/), so no decision about what the model sees is made in
 * a backend's own folder. The import graph is checked here, as errors-doc.test.ts keeps the
 * errors table and its document in step: a backend that imports a request type, the request
 * schema's helpers, or the call builder that reads them fails this test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const BACKENDS = 'packages/server/src/backends';
/** The call's own folder builds the call from the request; it is the one place that may. */
const CALL_FOLDER = join(BACKENDS, 'call');
/** Files of the call folder that read the wire request; a backend imports only the call's types and tools. */
const REQUEST_READERS = [
  'build-model-call',
  'conversation',
  'output-target',
  'tool-table',
  'server-results',
  'cache-hint',
];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The names the request schema exports (request-schema.ts), and the rule helpers that read requests. */
function requestNames(): Set<string> {
  const schema = readFileSync('packages/protocol/src/request-schema.ts', 'utf8');
  const names = [...schema.matchAll(/^export (?:const|type|function) (\w+)/gm)].map((match) => match[1]!);
  return new Set([...names, 'isCustomTool', 'requestThinks', 'parseMessageRequest', 'parseCountTokensRequest']);
}

/** Every import of a file: the module and the names it takes. */
function importsOf(source: string): Array<{ from: string; names: string[] }> {
  return [...source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)].map((match) => ({
    from: match[2]!,
    names: match[1]!
      .split(',')
      .map((name) =>
        name
          .replace(/^\s*type\s+/, '')
          .split(/\s+as\s+/)[0]!
          .trim(),
      )
      .filter(Boolean),
  }));
}

test('no backend imports a wire request type or reads the request', () => {
  const forbidden = requestNames();
  const problems: string[] = [];
  const files = sourceFiles(BACKENDS).filter((file) => !file.startsWith(CALL_FOLDER));
  assert.ok(files.length > 40, `only ${files.length} backend files found`);
  for (const file of files) {
    for (const { from, names } of importsOf(readFileSync(file, 'utf8'))) {
      if (from === '@model-messages/protocol') {
        for (const name of names)
          if (forbidden.has(name)) problems.push(`${file} imports ${name} from @model-messages/protocol`);
      }
      if (REQUEST_READERS.some((module) => from.endsWith(`/call/${module}.js`))) {
        problems.push(`${file} imports ${names.join(', ')} from ${from}, which reads the request`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('the check itself sees an import of a request type', () => {
  const source =
    "import { isCustomTool, type MessageRequest } from '@model-messages/protocol';\nimport { conversationTurns } from '../call/conversation.js';";
  const imports = importsOf(source);
  assert.deepEqual(imports, [
    { from: '@model-messages/protocol', names: ['isCustomTool', 'MessageRequest'] },
    { from: '../call/conversation.js', names: ['conversationTurns'] },
  ]);
  assert.ok(requestNames().has('MessageRequest'));
  assert.equal(relative('.', CALL_FOLDER), 'packages/server/src/backends/call');
});
