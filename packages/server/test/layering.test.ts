/**
 * The server's folders stand in layers, and a folder imports only folders below it (issue 33),
 * type-only and dynamic imports included: no import runs back up, so no loop of folders and no
 * circle of files can form. The import graph is read from the sources (scripts/import-graph.ts;
 * `npm run imports` prints it), as errors-doc.test.ts keeps the errors table and its document in
 * step. It replaces issue 15's list of the call folder's files that read the request: the call
 * builder is its own folder now, above the backends.
 *
 * The layers, lowest first. What each holds is in docs/architecture.md; where a new folder goes is
 * in docs/extending.md.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  folderOf,
  importCircles,
  importGraph,
  importSpecifiers,
  localEdges,
  type ImportGraph,
} from '../../../scripts/import-graph.js';

const SERVER = 'packages/server/src';

const LAYERS: ReadonlyArray<readonly string[]> = [
  // The floor: small shared helpers and the server tools' descriptors; nothing of ours but the protocol.
  ['support', 'tool-kinds', 'json-schema', 'runtime'],
  ['streaming', 'grammar'],
  ['signing'],
  // The engines: they see the model call, never the wire request, the turn loop or the edge.
  ['backends'],
  ['admission', 'call-builder'],
  ['config'],
  ['models'],
  ['keys'],
  ['limits'],
  ['observability'],
  ['http'],
  ['agent'],
  ['tools'],
  ['routes'],
  // app.ts and index.ts.
  ['.'],
  ['cli'],
];

/** Folders that import nothing of ours but the protocol. */
const FLOOR = ['support', 'tool-kinds'];

const layerOf = new Map(LAYERS.flatMap((folders, layer) => folders.map((folder) => [folder, layer] as const)));

const server = importGraph(SERVER);

/** Imports from a folder to one at its own layer or above. */
function importsUpward(graph: ImportGraph): string[] {
  return localEdges(graph)
    .filter(({ from, to }) => folderOf(from) !== folderOf(to))
    .filter(({ from, to }) => layerOf.get(folderOf(from))! <= layerOf.get(folderOf(to))!)
    .map(({ from, to }) => `${from} imports ${to}`);
}

describe('the server stands in layers', () => {
  test('every folder of the server has its layer', () => {
    const folders = new Set([...server.keys()].map(folderOf));
    assert.deepEqual([...folders].filter((folder) => !layerOf.has(folder)).sort(), []);
    assert.deepEqual(
      [...layerOf.keys()].filter((folder) => !folders.has(folder)),
      [],
      'a layer names a folder that is gone',
    );
  });

  test('a folder imports only the folders of the layers below it', () => {
    assert.deepEqual(importsUpward(server), []);
  });

  test('the backends import nothing of the call builder, routes, turn loop, tools, edge, observability, keys or limits', () => {
    const above = ['call-builder', 'routes', 'agent', 'tools', 'http', 'observability', 'keys', 'limits'];
    for (const folder of above) assert.ok(layerOf.get(folder)! > layerOf.get('backends')!, folder);
    const found = localEdges(server).filter(
      ({ from, to }) => folderOf(from) === 'backends' && above.includes(folderOf(to)),
    );
    assert.deepEqual(found, []);
  });

  test('the floor imports nothing of ours but the protocol, and the tool descriptors nothing else at all', () => {
    const problems: string[] = [];
    for (const [file, targets] of server) {
      const folder = folderOf(file);
      if (!FLOOR.includes(folder)) continue;
      for (const target of targets) {
        const ours = target.local ? folderOf(target.module) !== folder : target.module.startsWith('@model-messages/');
        if (ours && target.module !== '@model-messages/protocol') problems.push(`${file} imports ${target.module}`);
        // Descriptors are pure (no I/O): not even a Node module.
        if (folder === 'tool-kinds' && !target.local && target.module !== '@model-messages/protocol')
          problems.push(`${file} imports ${target.module}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('no package has an import circle, type-only imports included', () => {
    for (const name of ['protocol', 'server', 'client'])
      assert.deepEqual(importCircles(importGraph(`packages/${name}/src`)), [], name);
  });
});

/**
 * The names the request schema exports (request-schema.ts, and content-block-schema.ts for the
 * messages' blocks), and the rule helpers that read requests. Not `Effort`: a level's name,
 * which the model call carries as it is (model-call.ts).
 */
function requestNames(): Set<string> {
  const names = ['request-schema.ts', 'content-block-schema.ts'].flatMap((file) =>
    [...readFileSync(`packages/protocol/src/${file}`, 'utf8').matchAll(/^export (?:const|type|function) (\w+)/gm)].map(
      (match) => match[1]!,
    ),
  );
  // Both files hold wire names: a list that misses one would let a backend import it unseen.
  for (const name of ['messageRequest', 'ContentBlockParam', 'contentBlockParam', 'ToolParam'])
    assert.ok(names.includes(name), `${name} is not among the request names read`);
  const helpers = ['isCustomTool', 'requestThinks', 'parseMessageRequest', 'parseCountTokensRequest'];
  return new Set([...names, ...helpers].filter((name) => name !== 'Effort'));
}

/** The names a source takes from the protocol package. */
function protocolNames(source: string): string[] {
  return [...source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'@model-messages\/protocol'/g)].flatMap(
    (match) =>
      match[1]!
        .split(',')
        .map((name) =>
          name
            .replace(/^\s*type\s+/, '')
            .split(/\s+as\s+/)[0]!
            .trim(),
        )
        .filter(Boolean),
  );
}

test('no backend imports a wire request type (issue 15): each is told what the model call says', () => {
  const forbidden = requestNames();
  const files = [...server.keys()].filter((file) => folderOf(file) === 'backends');
  assert.ok(files.length > 40, `only ${files.length} backend files found`);
  const problems = files.flatMap((file) =>
    protocolNames(readFileSync(`${SERVER}/${file}`, 'utf8'))
      .filter((name) => forbidden.has(name))
      .map((name) => `${file} imports ${name} from @model-messages/protocol`),
  );
  assert.deepEqual(problems, []);
});

describe('the checks see what they check', () => {
  test('type-only, multi-line, re-exported and dynamic imports are read; a comment quoting one is not', () => {
    const source = [
      "import type { Backend } from '../backends/backend.js';",
      'import {',
      '  ContextBudget,',
      "} from './context-budget.js';",
      "export * from './stream-part.js';",
      "const { LoadedModel } = await import('./loaded-model.js');",
      "/** An example: import { x } from '../routes/route.js'; */",
      "// import { y } from '../http/router.js';",
    ].join('\n');
    assert.deepEqual(importSpecifiers(source), [
      '../backends/backend.js',
      './context-budget.js',
      './stream-part.js',
      './loaded-model.js',
    ]);
  });

  test('an import from a backend to the turn loop is seen running up', () => {
    const graph: ImportGraph = new Map([
      ['backends/scripted/scripted-backend.ts', [{ module: 'agent/run-turn.ts', local: true }]],
      ['agent/run-turn.ts', [{ module: 'backends/backend.ts', local: true }]],
    ]);
    assert.deepEqual(importsUpward(graph), ['backends/scripted/scripted-backend.ts imports agent/run-turn.ts']);
  });

  test('a request type taken from the protocol is seen', () => {
    assert.deepEqual(protocolNames("import { isCustomTool, type MessageRequest } from '@model-messages/protocol';"), [
      'isCustomTool',
      'MessageRequest',
    ]);
    assert.ok(requestNames().has('MessageRequest'));
  });
});
