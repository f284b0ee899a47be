/**
 * Calls a model left in its reply's text (issue 35, backends/openai-compatible/leaked-calls/):
 * each syntax's parser reads its calls, and the reader holds text back only while it may still
 * be a call, so that prose, code blocks and calls of tools that were not offered stay text,
 * whatever pieces the text arrives in.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LeakedCallReader } from '../src/backends/openai-compatible/leaked-calls/leaked-call-reader.js';
import { TEXT_CALL_SYNTAXES } from '../src/backends/openai-compatible/leaked-calls/text-call-syntaxes.js';
import type { OfferedTool } from '../src/backends/call/model-call.js';

function tool(name: string, properties: Record<string, unknown>, required: string[] = []): OfferedTool {
  return {
    name,
    description: name,
    inputSchema: { type: 'object', properties, required },
    strict: false,
    server: false,
    where: 'tools.0.input_schema',
  };
}

const TOOLS = [
  tool('Bash', { command: { type: 'string' }, timeout: { type: 'number' } }, ['command']),
  tool('Read', { file_path: { type: 'string' }, limit: { type: 'integer' } }, ['file_path']),
  tool('Edit', { file_path: { type: 'string' }, replace_all: { type: 'boolean' }, edits: { type: 'array' } }),
];

interface Read {
  text: string;
  calls: Array<[string, Record<string, unknown>]>;
}

/** The reply read in `pieces`: the text that went out (streamed and at the end), and the calls. */
function read(pieces: readonly string[]): Read & { streamed: string } {
  const reader = new LeakedCallReader(TEXT_CALL_SYNTAXES, TOOLS);
  let streamed = '';
  for (const piece of pieces) streamed += reader.push(piece);
  const end = reader.end();
  return {
    text: streamed + end.text,
    streamed,
    calls: end.calls.map((call) => [call.tool.name, call.input]),
  };
}

/** Every way of cutting `text` in two, and in characters one by one. */
function chunkings(text: string): string[][] {
  const cuts = Array.from({ length: text.length + 1 }, (_, at) => [text.slice(0, at), text.slice(at)]);
  return [[text], [...text], ...cuts];
}

const RECOVERED: Array<{ syntax: string; text: string; calls: Read['calls']; before?: string }> = [
  {
    syntax: 'Hermes / Qwen <tool_call>',
    text: 'Let me look.\n<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>',
    calls: [['Bash', { command: 'ls' }]],
    before: 'Let me look.\n',
  },
  {
    syntax: 'Hermes, two calls run together in one tag, and a closing tag lost at the end',
    text: '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n{"name": "Read", "arguments": "{\\"file_path\\": \\"a\\"}"}',
    calls: [
      ['Bash', { command: 'ls' }],
      ['Read', { file_path: 'a' }],
    ],
  },
  {
    syntax: "Qwen3-Coder's <function=...> with a parameter tag each, read by the schema's types",
    text: '<tool_call>\n<function=Bash>\n<parameter=command>\nls -la\n</parameter>\n<parameter=timeout>\n30\n</parameter>\n</function>\n</tool_call>',
    calls: [['Bash', { command: 'ls -la', timeout: 30 }]],
  },
  {
    syntax: 'Qwen3-Coder, unwrapped, a boolean and JSON parameter',
    text: '<function=Edit>\n<parameter=replace_all>\ntrue\n</parameter>\n<parameter=edits>\n[{"a": 1}]\n</parameter>\n</function>',
    calls: [['Edit', { replace_all: true, edits: [{ a: 1 }] }]],
  },
  {
    syntax: "Llama 3.1's <function=NAME>{json}</function>",
    text: '<function=Read>{"file_path": "/etc/hosts"}</function>',
    calls: [['Read', { file_path: '/etc/hosts' }]],
  },
  {
    syntax: 'Llama 3 <|python_tag|> JSON, two calls separated by ;',
    text: '<|python_tag|>{"name": "Bash", "parameters": {"command": "pwd"}}; {"name": "Read", "parameters": {"file_path": "x"}}',
    calls: [
      ['Bash', { command: 'pwd' }],
      ['Read', { file_path: 'x' }],
    ],
  },
  {
    syntax: 'Llama 3 bare JSON at the start of a line, after some words',
    text: 'Checking.\n{"name": "Bash", "parameters": {"command": "date"}}',
    calls: [['Bash', { command: 'date' }]],
    before: 'Checking.\n',
  },
  {
    syntax: 'Llama 3.2 {"type": "function", ...}',
    text: '{"type": "function", "name": "Read", "parameters": {"file_path": "b"}}',
    calls: [['Read', { file_path: 'b' }]],
  },
  {
    syntax: 'Mistral [TOOL_CALLS] array',
    text: '[TOOL_CALLS][{"name": "Bash", "arguments": {"command": "ls"}}, {"name": "Read", "arguments": {"file_path": "c"}}]',
    calls: [
      ['Bash', { command: 'ls' }],
      ['Read', { file_path: 'c' }],
    ],
  },
  {
    syntax: 'Mistral v11 [TOOL_CALLS]NAME[ARGS], twice',
    text: '[TOOL_CALLS]Bash[ARGS]{"command": "ls"}[TOOL_CALLS]Read[CALL_ID]a1B2c3D4e[ARGS]{"file_path": "d"}',
    calls: [
      ['Bash', { command: 'ls' }],
      ['Read', { file_path: 'd' }],
    ],
  },
  {
    syntax: 'Mistral with its special token dropped by the engine: a bare array',
    text: '[{"name": "Bash", "arguments": {"command": "uname"}}]',
    calls: [['Bash', { command: 'uname' }]],
  },
  {
    syntax: 'gpt-oss harmony, whole',
    text: '<|channel|>commentary to=functions.Bash <|constrain|>json<|message|>{"command": "ls"}<|call|>',
    calls: [['Bash', { command: 'ls' }]],
  },
  {
    syntax: 'gpt-oss harmony, special tokens dropped',
    text: 'commentary to=functions.Read json{"file_path": "e"}',
    calls: [['Read', { file_path: 'e' }]],
  },
];

describe('a call in a known syntax, naming an offered tool with input that parses, is read as that call', () => {
  for (const { syntax, text, calls, before = '' } of RECOVERED) {
    test(syntax, () => {
      for (const pieces of chunkings(text)) {
        const result = read(pieces);
        assert.deepEqual(result.calls, calls, JSON.stringify(pieces));
        assert.equal(result.text, before, JSON.stringify(pieces));
      }
    });
  }

  test('the text before a call goes out as it comes; only the call is held', () => {
    const result = read([
      'Let me look',
      ' at it.\n<tool',
      '_call>\n{"name": "Bash", "arguments": {"command": "ls"}}',
      '</tool_call>',
    ]);
    assert.equal(result.streamed, 'Let me look at it.\n');
    assert.equal(result.text, 'Let me look at it.\n');
    assert.deepEqual(result.calls, [['Bash', { command: 'ls' }]]);
  });
});

const STAYS_TEXT: Array<{ why: string; text: string }> = [
  {
    why: 'a tool that was not offered',
    text: '<tool_call>\n{"name": "rm_everything", "arguments": {"path": "/"}}\n</tool_call>',
  },
  {
    why: 'a call quoted inside prose',
    text: 'To run a command, write <tool_call>{"name": "Bash", "arguments": {"command": "ls"}}</tool_call> and the tool runs it.',
  },
  {
    why: 'a call quoted on its own line, then explained',
    text: 'Here is the format:\n<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>\nThat calls Bash.',
  },
  {
    why: 'a call inside a code block the user asked for',
    text: 'Sure:\n```json\n{"name": "Bash", "parameters": {"command": "ls"}}\n```',
  },
  {
    why: 'a code block that ends the reply, holding a tag call',
    text: '```\n<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>\n```',
  },
  { why: 'JSON that is an answer, not a call', text: '{"name": "Bash", "version": 5}' },
  { why: 'JSON whose first key is no call field', text: '{"result": {"name": "Bash", "parameters": {}}}' },
  {
    why: 'input that does not parse',
    text: '<tool_call>\n{"name": "Bash", "arguments": {"command": ls}}\n</tool_call>',
  },
  { why: 'prose that only mentions the markers', text: 'The tags are <tool_call> and </tool_call>; nothing else.' },
];

describe('what merely looks like a call stays text, whole and in order', () => {
  for (const { why, text } of STAYS_TEXT) {
    test(why, () => {
      for (const pieces of chunkings(text)) {
        const result = read(pieces);
        assert.deepEqual(result.calls, [], JSON.stringify(pieces));
        assert.equal(result.text, text, JSON.stringify(pieces));
      }
    });
  }

  test('text is held back only while it may still be a call', () => {
    const reader = new LeakedCallReader(TEXT_CALL_SYNTAXES, TOOLS);
    assert.equal(reader.push('Hello <tool'), 'Hello ');
    assert.equal(reader.push('box> world'), '<toolbox> world');
    assert.equal(reader.push('\n{"na'), '\n');
    assert.equal(reader.push('me": "Bashful"'), '{"name": "Bashful"');
  });
});
