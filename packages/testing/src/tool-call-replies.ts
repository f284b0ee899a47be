/**
 * Engine replies in which a model's tool call goes wrong (issue 35), kept in
 * fixtures/tool-call-replies/, one file a case: a call left in the text in the model's own
 * syntax, empty or unparseable arguments, arguments cut short or missing a required field, two
 * calls run together, a call split over chunks in odd places; and replies that only look like a
 * call (a tool that was not offered, a call quoted in prose or a code block). Each file gives the
 * deltas the engine streamed and, where mms must ask the engine again for the input, what the
 * engine answers then; `engineStream` dresses the deltas in the engine's own chunk shape
 * (fixtures/openai-engines/README.md), so the fake engine replays them as the engine would send
 * them. The tests replay every case, and bench/tool-calls/ measures mms and its peers on them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { FakeEngineKind } from './fake-openai-engine.js';
import { claudeCodeRequests } from './claude-code-requests.js';

/** One delta of a streamed chat completion, as the engine's parser produced it. */
export interface ReplyDelta {
  content?: string;
  reasoning_content?: string;
  tool_calls?: Array<{
    index?: number;
    id?: string;
    type?: string;
    function: { name?: string; arguments?: string };
  }>;
}

export interface EngineAnswer {
  deltas: ReplyDelta[];
  /** `finish_reason` of the last choice. */
  finish: 'stop' | 'tool_calls' | 'length';
}

export interface ToolCallReply extends EngineAnswer {
  /** The file's name without `.json`. */
  name: string;
  /** Why an engine answers this way, and where that is documented or reported. */
  source: string;
  engine: FakeEngineKind;
  /** What went wrong, as the benchmark groups the cases. */
  failure:
    | 'leaked'
    | 'empty'
    | 'unparseable'
    | 'truncated'
    | 'missing-required'
    | 'run-together'
    | 'odd-chunking'
    | 'not-a-call';
  /** For a leaked call: the syntax it is written in. */
  syntax?: string;
  /** The tools the request offers, by name (TOOL_CALL_TOOLS). */
  tools: string[];
  /** What the engine answers when mms asks it again for a call's input. */
  repair?: EngineAnswer;
  expected: {
    /** The reply is an error: its `mms-error-code` (a call that could not be mended, said so). */
    error?: string;
    /** The tool_use blocks, in order: name and input. */
    calls: Array<[string, Record<string, unknown>]>;
    /** The reply's text, its text blocks joined. */
    text: string;
    stopReason: string;
    /** How the calls became blocks (mms_tool_calls_total's outcomes). */
    outcomes: Record<string, number>;
  };
}

const FOLDER = new URL('../fixtures/tool-call-replies/', import.meta.url);

export function toolCallReplies(): ToolCallReply[] {
  return readdirSync(FOLDER)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      ...(JSON.parse(readFileSync(new URL(file, FOLDER), 'utf8')) as Omit<ToolCallReply, 'name'>),
      name: file.replace(/\.json$/, ''),
    }));
}

export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** The tools the cases offer: Claude Code's Bash, Read, Write and Edit as it sends them, a weather tool and a clock. */
export const TOOL_CALL_TOOLS: readonly ToolDefinition[] = [
  ...(claudeCodeRequests().find((request) => request.name === 'write-request')!.body.tools as ToolDefinition[]).filter(
    (tool) => ['Bash', 'Read', 'Write', 'Edit'].includes(tool.name),
  ),
  {
    name: 'get_weather',
    description: 'Current weather for a city.',
    input_schema: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city'],
    },
  },
  {
    name: 'get_time',
    description: "The time now, in a time zone (the server's own by default).",
    input_schema: { type: 'object', properties: { zone: { type: 'string' } } },
  },
];

/**
 * Claude Code's recorded tools (its write request), their descriptions shortened to their names:
 * the prose is what a tiny model's context cannot hold, and no part of what a grammar holds to.
 * The embedded engine's tool-call tests and bench/tool-calls/ offer these.
 */
export function claudeCodeToolsWithoutProse(): ToolDefinition[] {
  return (claudeCodeRequests().find((request) => request.name === 'write-request')!.body.tools as ToolDefinition[])
    .filter((tool) => tool.name !== 'DeferredToolPlaceholder')
    .map((tool) => ({ name: tool.name, description: tool.name, input_schema: withoutDescriptions(tool.input_schema) }));
}

/** A schema less its `description` annotations (a property that is named `description` stays). */
function withoutDescriptions(schema: Record<string, unknown>): Record<string, unknown> {
  const kept = Object.entries(schema).filter(
    ([keyword, value]) => keyword !== 'description' || typeof value !== 'string',
  );
  return Object.fromEntries(
    kept.map(([keyword, value]) => {
      if (keyword === 'properties' && value !== null && typeof value === 'object')
        return [keyword, Object.fromEntries(Object.entries(value).map(([name, property]) => [name, nested(property)]))];
      return [keyword, nested(value)];
    }),
  );
}

function nested(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nested);
  return value !== null && typeof value === 'object' ? withoutDescriptions(value as Record<string, unknown>) : value;
}

export function toolsNamed(names: readonly string[]): ToolDefinition[] {
  return names.map((name) => {
    const tool = TOOL_CALL_TOOLS.find((candidate) => candidate.name === name);
    if (!tool) throw new Error(`no tool named ${name} among TOOL_CALL_TOOLS`);
    return tool;
  });
}

/** The answer's deltas as `engine` streams them: its chunk shape, the finish, and usage. */
export function engineStream(engine: FakeEngineKind, answer: EngineAnswer): unknown[] {
  const chunks: unknown[] = [chunk(engine, firstDelta(engine), null)];
  for (const delta of answer.deltas) chunks.push(chunk(engine, shapedDelta(engine, delta), null));
  chunks.push(chunk(engine, shapedDelta(engine, { content: '' }), answer.finish));
  chunks.push({ ...frame(engine), choices: [], usage: usageOf(answer) });
  return chunks;
}

/** The answer's usage: a fixed prompt, and a token a delta. */
function usageOf(answer: EngineAnswer): Record<string, number> {
  const completion = Math.max(1, answer.deltas.length);
  return { prompt_tokens: 120, completion_tokens: completion, total_tokens: 120 + completion };
}

function frame(engine: FakeEngineKind): Record<string, unknown> {
  const frame: Record<string, unknown> = {
    id: `chatcmpl-${engine}`,
    object: 'chat.completion.chunk',
    created: 1760000000,
    model: 'served-model',
  };
  if (engine === 'ollama') frame.system_fingerprint = 'fp_ollama';
  return frame;
}

function chunk(engine: FakeEngineKind, delta: Record<string, unknown>, finish: string | null): unknown {
  const choice: Record<string, unknown> = { index: 0, delta, logprobs: null, finish_reason: finish };
  if (engine === 'vllm' && finish !== null) choice.stop_reason = null;
  if (engine === 'sglang') choice.matched_stop = finish === null ? null : 151645;
  const shaped: Record<string, unknown> = { ...frame(engine), choices: [choice] };
  // SGLang and generic servers send every field, null when unset.
  if (engine === 'sglang' || engine === 'generic') shaped.usage = null;
  return shaped;
}

/** The first chunk, which only says who speaks. */
function firstDelta(engine: FakeEngineKind): Record<string, unknown> {
  if (engine === 'llama.cpp') return { role: 'assistant', content: null };
  return shapedDelta(engine, { content: '' }, true);
}

function shapedDelta(engine: FakeEngineKind, delta: ReplyDelta, first = false): Record<string, unknown> {
  switch (engine) {
    case 'sglang':
      return {
        ...(first ? { role: 'assistant' } : { role: null }),
        content: delta.content ?? null,
        reasoning_content: delta.reasoning_content ?? null,
        tool_calls: delta.tool_calls ?? null,
      };
    case 'ollama':
      // Every delta repeats the role and the content; reasoning travels in `reasoning`.
      return {
        role: 'assistant',
        content: delta.content ?? '',
        ...(delta.reasoning_content ? { reasoning: delta.reasoning_content } : {}),
        ...(delta.tool_calls ? { tool_calls: delta.tool_calls } : {}),
      };
    default:
      return { ...(first ? { role: 'assistant' } : {}), ...delta };
  }
}

/**
 * The answer as one `chat.completion`, for a client that asks the engine without streaming:
 * the content joined, each call's name and arguments joined by index, as the engine's parser
 * would have returned them whole.
 */
export function engineCompletion(engine: FakeEngineKind, answer: EngineAnswer): unknown {
  const calls: Array<{ id?: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  let content = '';
  for (const delta of answer.deltas) {
    content += delta.content ?? '';
    for (const call of delta.tool_calls ?? []) {
      const index = call.index ?? calls.length - 1;
      calls[index] ??= { type: 'function', function: { name: '', arguments: '' } };
      calls[index].id ??= call.id;
      calls[index].function.name += call.function.name ?? '';
      calls[index].function.arguments += call.function.arguments ?? '';
    }
  }
  const message = {
    role: 'assistant',
    content: content === '' && calls.length > 0 ? null : content,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
  const { object: _object, ...rest } = frame(engine);
  return {
    ...rest,
    object: 'chat.completion',
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finish }],
    usage: usageOf(answer),
  };
}
