/** node-llama-cpp response chunks -> stream parts: thought segments, text, forced tool input. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LlamaChatResponseChunk } from 'node-llama-cpp';
import { ResponseEmitter } from '../src/backends/llama-cpp/response-emitter.js';
import type { OfferedTool } from '../src/backends/call/model-call.js';
import type { StreamPart } from '../src/streaming/stream-part.js';

const RECORD_TOOL: OfferedTool = {
  name: 'record',
  description: 'Record it.',
  inputSchema: { type: 'object' },
  strict: false,
  server: false,
  where: 'tools.0.input_schema',
};

function textChunk(text: string, tokens = 1): LlamaChatResponseChunk {
  return {
    type: undefined,
    segmentType: undefined,
    text,
    tokens: Array.from({ length: tokens }, (_, index) => index),
  } as unknown as LlamaChatResponseChunk;
}

function thoughtChunk(text: string): LlamaChatResponseChunk {
  return { type: 'segment', segmentType: 'thought', text, tokens: [1] } as unknown as LlamaChatResponseChunk;
}

test('thought segments become a thinking block before the text block, left for the step reader to sign', () => {
  const parts: StreamPart[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'text' });
  [thoughtChunk('Let me'), thoughtChunk(' think.'), textChunk('Answer', 2)].forEach((chunk) => emitter.chunk(chunk));
  emitter.close();
  assert.deepEqual(
    parts.map((part) =>
      part.type === 'block-start'
        ? `start:${part.block.type}`
        : part.type === 'block-delta'
          ? part.delta.type
          : part.type,
    ),
    ['start:thinking', 'thinking_delta', 'thinking_delta', 'block-stop', 'start:text', 'text_delta', 'block-stop'],
  );
  assert.equal(emitter.outputTokens, 4);
});

test('a forced tool streams its input as input_json_delta of one tool_use block', () => {
  const parts: StreamPart[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'tool', tool: RECORD_TOOL });
  [textChunk('{"a"'), textChunk(':1}')].forEach((chunk) => emitter.chunk(chunk));
  emitter.close();
  const start = parts[0];
  assert.ok(start?.type === 'block-start' && start.block.type === 'tool_use' && start.block.name === 'record');
  const json = parts
    .flatMap((part) =>
      part.type === 'block-delta' && part.delta.type === 'input_json_delta' ? [part.delta.partial_json] : [],
    )
    .join('');
  assert.equal(json, '{"a":1}');
});

test('a forced tool with no output still has its block', () => {
  const parts: StreamPart[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'tool', tool: RECORD_TOOL });
  emitter.ensureMainBlock();
  emitter.close();
  assert.deepEqual(
    parts.map((part) => part.type),
    ['block-start', 'block-stop'],
  );
});

test("whitespace between a thought and a call (Qwen's `</think>\\n\\n<tool_call>`) opens no text block; before text it is kept", () => {
  const parts: StreamPart[] = [];
  const emitter = new ResponseEmitter((part) => parts.push(part), { kind: 'text' });
  [thoughtChunk('Look it up.'), textChunk('\n\n')].forEach((chunk) => emitter.chunk(chunk));
  emitter.toolCall(RECORD_TOOL, '{"a":1}');
  assert.deepEqual(
    parts.filter((part) => part.type === 'block-start').map((part) => part.type === 'block-start' && part.block.type),
    ['thinking', 'tool_use'],
  );
  const spoken: StreamPart[] = [];
  const second = new ResponseEmitter((part) => spoken.push(part), { kind: 'text' });
  [thoughtChunk('Say it.'), textChunk('\n\n'), textChunk('Hello')].forEach((chunk) => second.chunk(chunk));
  second.close();
  assert.deepEqual(
    spoken.flatMap((part) =>
      part.type === 'block-delta' && part.delta.type === 'text_delta' ? [part.delta.text] : [],
    ),
    ['\n\nHello'],
  );
});
