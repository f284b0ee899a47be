/**
 * The server tools' descriptors (issue 33: tool-kinds/server-tool-kinds.ts lists them): one per
 * result block the protocol knows and per server tool the request schema takes, each name and type
 * claimed once, each run by its own runner (tools/service-tools.ts reads the list), and each
 * result read back to the model as what its tool did.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseMessageRequest,
  SERVER_TOOL_RESULT_TYPES,
  toolParam,
  type ServerToolResultBlock,
} from '@model-messages/protocol';
import { z } from 'zod';
import { Signer } from '../src/signing/signer.js';
import { SERVER_TOOL_KINDS, serverToolKind, serverToolKindOfType } from '../src/tool-kinds/server-tool-kinds.js';
import { ServiceTools } from '../src/tools/service-tools.js';

describe('server tool kinds', () => {
  test("every result block of the protocol is one listed tool's, and every listed tool's block is the protocol's", () => {
    // The two tool searches share one result block (issue 34).
    const resultTypes = new Set(SERVER_TOOL_KINDS.map((kind) => kind.resultType));
    assert.deepEqual([...resultTypes].sort(), [...SERVER_TOOL_RESULT_TYPES].sort());
  });

  test('every server tool the request schema takes is a listed tool, by each of its types and its name', () => {
    const serverTools = toolParam.options.flatMap(({ shape }) => {
      const name = shape.name;
      return shape.type instanceof z.ZodEnum && name instanceof z.ZodLiteral
        ? shape.type.options.map((type) => ({ type: String(type), name: String(name.value) }))
        : [];
    });
    assert.equal(serverTools.length, SERVER_TOOL_KINDS.flatMap((kind) => kind.types).length);
    for (const { type, name } of serverTools) {
      assert.equal(serverToolKindOfType(type)?.name, name, type);
      assert.equal(serverToolKind(name)?.types.includes(type), true, name);
    }
  });

  test('a name or a type is claimed by one tool only', () => {
    const names = SERVER_TOOL_KINDS.map((kind) => kind.name);
    const types = SERVER_TOOL_KINDS.flatMap((kind) => kind.types);
    assert.equal(new Set(names).size, names.length);
    assert.equal(new Set(types).size, types.length);
  });

  test('each listed tool is run by its own runner, which answers in its result block', async () => {
    const request = parseMessageRequest({ model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'q' }] });
    const webFetch = {
      allowNetworks: [],
      maxBytes: 50_000,
      timeoutMs: 1_000,
      maxRedirects: 0,
      conversionTimeoutMs: 1_000,
    };
    const tools = new ServiceTools({ webFetch }, new Signer(Buffer.alloc(32, 3)));
    try {
      for (const kind of SERVER_TOOL_KINDS) {
        // An empty input: every tool refuses it before doing anything, in its own block.
        const result = await tools.run(
          { type: 'server_tool_use', id: `srvtoolu_${kind.name}`, name: kind.name, input: {} },
          {
            request,
            turnSoFar: [],
            resultCharacters: 10_000,
            signal: new AbortController().signal,
            callServerTool: () => Promise.reject(new Error('no nested calls here')),
          },
        );
        const content = result.content as Record<string, unknown>;
        assert.deepEqual([result.type, result.tool_use_id], [kind.resultType, `srvtoolu_${kind.name}`]);
        assert.deepEqual([content.type, content.error_code], [`${kind.resultType}_error`, 'invalid_tool_input']);
        // Tool search says why in its error's `error_message` (issue 34); the others have no such field.
        assert.deepEqual(
          Object.keys(content).sort(),
          kind.resultType === 'tool_search_tool_result'
            ? ['error_code', 'error_message', 'type']
            : ['error_code', 'type'],
        );
      }
    } finally {
      await tools.close();
    }
  });

  test('an error result reads to the model as what failed, and costs the context its JSON', () => {
    for (const kind of SERVER_TOOL_KINDS) {
      const error: ServerToolResultBlock['content'] = { type: `${kind.resultType}_error`, error_code: 'unavailable' };
      assert.match(kind.resultText(error), /^[A-Z][a-z]+ [a-z]+ failed: unavailable\.$/, kind.name);
      assert.equal(kind.resultCharacters(error), JSON.stringify(error).length, kind.name);
    }
  });

  test('what the model is told of each tool is an object schema of the public input', () => {
    for (const kind of SERVER_TOOL_KINDS) {
      assert.equal(kind.offer.inputSchema.type, 'object', kind.name);
      assert.ok(kind.offer.description.length > 20, kind.name);
    }
  });
});
