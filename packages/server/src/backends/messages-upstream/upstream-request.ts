/**
 * The model call -> the body sent to the upstream. Server tools run in this service, never in the
 * upstream (docs/decisions/0007-messages-upstream-and-fallback.md): the upstream sees them as
 * custom tools of the same name (the tool table's), the turn's server tool calls as tool_use
 * blocks, and their results as tool_result blocks of readable text in a user turn, so that it
 * only ever answers one step. Pure: no I/O.
 */
import type {
  AssistantPart,
  CacheHint,
  DocumentPart,
  ImagePart,
  ModelCall,
  ModelPrompt,
  OfferedTool,
  TextPart,
  ThinkingSetting,
  ToolResultPart,
  Turn,
  UserPart,
} from '../call/model-call.js';
import { innerSignature } from '../../signing/thinking-signature.js';

/** A content block or message of the upstream's wire: this contract's own shapes. */
type WireBlock = Record<string, unknown>;
interface WireMessage {
  role: 'user' | 'assistant' | 'system';
  content: WireBlock[];
}

/** Names of the server tools a call offers: an upstream tool_use of one of these is a server call. */
export function serverToolNames(call: Pick<ModelPrompt, 'tools'>): ReadonlySet<string> {
  return new Set(call.tools.filter((tool) => tool.server).map((tool) => tool.name));
}

/** The body of `POST /v1/messages/count_tokens` upstream. */
export function upstreamCountBody(prompt: ModelPrompt, model: string): Record<string, unknown> {
  return {
    model,
    messages: upstreamMessages(prompt.turns),
    ...promptFields(prompt),
    thinking: upstreamThinking(prompt.thinking),
  };
}

/** The body of one step's `POST /v1/messages` upstream: always streamed, budget what is left. */
export function upstreamMessageBody(call: ModelCall, model: string): Record<string, unknown> {
  const { sampling } = call;
  return {
    model,
    max_tokens: call.outputBudget,
    stream: true,
    messages: upstreamMessages(call.turns),
    ...promptFields(call),
    thinking: upstreamThinking(thinkingWithin(call.thinking, call.outputBudget)),
    stop_sequences: sampling.stopSequences.length > 0 ? sampling.stopSequences : undefined,
    temperature: sampling.temperature,
    top_p: sampling.topP,
    top_k: sampling.topK,
    metadata: call.passOn.metadata,
    service_tier: call.passOn.serviceTier,
  };
}

function promptFields(prompt: ModelPrompt): Record<string, unknown> {
  return {
    system: prompt.system.length > 0 ? prompt.system.map(textBlock) : undefined,
    tools: prompt.tools.length > 0 ? prompt.tools.map(upstreamTool) : undefined,
    tool_choice: toolChoice(prompt),
    output_config: outputConfig(prompt),
  };
}

/**
 * Effort goes on as it was asked. `thinking.display` does not: the upstream is asked for the
 * whole thinking, and the turn loop omits it for the client as for every backend, so that the
 * text survives in our signature should the conversation move to another engine.
 */
function outputConfig(prompt: ModelPrompt): WireBlock | undefined {
  const output = prompt.output;
  const format =
    output.kind === 'answer' && output.format ? { type: 'json_schema', schema: output.format.schema } : undefined;
  const effort = prompt.thinking.effort;
  if (!format && !effort) return undefined;
  return { ...(format ? { format } : {}), ...(effort ? { effort } : {}) };
}

function upstreamTool(tool: OfferedTool): WireBlock {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
    ...(tool.strict ? { strict: true } : {}),
    ...cacheControl(tool.cache),
  };
}

function toolChoice(prompt: ModelPrompt): WireBlock | undefined {
  if (prompt.tools.length === 0) return undefined;
  const single = prompt.singleCall ? { disable_parallel_tool_use: true } : {};
  const output = prompt.output;
  if (output.kind === 'tool') return { type: 'tool', name: output.tool.name, ...single };
  if (output.kind === 'any-tool') return { type: 'any', ...single };
  return output.toolsAllowed ? { type: 'auto', ...single } : { type: 'none' };
}

function upstreamThinking(thinking: ThinkingSetting): WireBlock | undefined {
  switch (thinking.requested) {
    case undefined:
      return undefined;
    case 'enabled':
      return thinking.budgetTokens === undefined
        ? undefined
        : { type: 'enabled', budget_tokens: thinking.budgetTokens };
    default:
      return { type: thinking.requested };
  }
}

/**
 * A later step of a turn has less budget than the request's max_tokens; a thinking budget must
 * stay below it, or the upstream refuses the step. Below the smallest thinking budget (1024),
 * thinking is left to the upstream's default for the model.
 */
function thinkingWithin(thinking: ThinkingSetting, outputBudget: number): ThinkingSetting {
  if (thinking.requested !== 'enabled' || thinking.budgetTokens === undefined || thinking.budgetTokens < outputBudget)
    return thinking;
  if (outputBudget > 1024) return { ...thinking, budgetTokens: outputBudget - 1 };
  return { ...thinking, requested: undefined, budgetTokens: undefined };
}

/**
 * The turns, with every server tool call and result turned into a client tool round trip. Two
 * messages of one role in a row (a split turn's results before the next user turn) are joined.
 */
export function upstreamMessages(turns: readonly Turn[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const turn of turns) {
    const messages =
      turn.role === 'user'
        ? [{ role: 'user' as const, content: turn.parts.map(userBlock) }]
        : turn.role === 'system'
          ? [{ role: 'system' as const, content: turn.parts.map(textBlock) }]
          : splitAssistantTurn(turn.parts);
    for (const message of messages) {
      const last = out.at(-1);
      if (last?.role === message.role) last.content.push(...message.content);
      else out.push(message);
    }
  }
  return out;
}

/**
 * One assistant turn with server results -> assistant and user turns. Each run of server results
 * ends an assistant segment and becomes a user turn of tool_result blocks. A tool call whose result
 * is not in that run (a client tool_use, answered by the client's next turn; or a server call
 * answered later) moves on to the next segment, so that every tool_use upstream is answered in the
 * turn right after it.
 */
function splitAssistantTurn(parts: readonly AssistantPart[]): WireMessage[] {
  const out: WireMessage[] = [];
  let segment: AssistantPart[] = [];
  let results: ToolResultPart[] = [];
  const flush = () => {
    const answered = new Set(results.map((result) => result.callId));
    const unanswered = segment.filter((part) => part.type === 'tool-call' && !answered.has(part.id));
    const kept = segment.filter((part) => !unanswered.includes(part));
    if (kept.length > 0) out.push({ role: 'assistant', content: kept.map(assistantBlock) });
    out.push({ role: 'user', content: results.map(toolResultBlock) });
    segment = unanswered;
    results = [];
  };
  for (const part of parts) {
    if (part.type === 'tool-result') {
      results.push(part);
      continue;
    }
    // Thinking with no signature of the upstream's inside ours came from another engine of this
    // service (a conversation that moved here after a fallback): the upstream could not verify it.
    if (part.type === 'thinking' && innerSignature(part.signature) === '') continue;
    if (results.length > 0) flush();
    segment.push(part);
  }
  if (results.length > 0) flush();
  if (segment.length > 0) out.push({ role: 'assistant', content: segment.map(assistantBlock) });
  return out;
}

function assistantBlock(part: AssistantPart): WireBlock {
  switch (part.type) {
    case 'text':
      return textBlock(part);
    case 'thinking':
      // The upstream's own signature, which this service's wraps (signing/thinking-signature.ts).
      return { type: 'thinking', thinking: part.text, signature: innerSignature(part.signature) };
    case 'redacted-thinking':
      return { type: 'redacted_thinking', data: part.data };
    case 'tool-call':
      // A server tool is a custom tool upstream: its call is a plain tool_use.
      return { type: 'tool_use', id: part.id, name: part.name, input: part.input, ...cacheControl(part.cache) };
    case 'tool-result':
      return toolResultBlock(part);
    default:
      return part satisfies never;
  }
}

function userBlock(part: UserPart): WireBlock {
  switch (part.type) {
    case 'text':
      return textBlock(part);
    case 'image':
      return imageBlock(part);
    case 'document':
      return documentBlock(part);
    case 'tool-result':
      return toolResultBlock(part);
    default:
      return part satisfies never;
  }
}

/** A server tool's result is the text the model reads (tool-kinds/server-results.ts), flagged when it is an error. */
function toolResultBlock(part: ToolResultPart): WireBlock {
  return {
    type: 'tool_result',
    tool_use_id: part.callId,
    content: part.content.map((inner) =>
      inner.type === 'text' ? textBlock(inner) : inner.type === 'image' ? imageBlock(inner) : documentBlock(inner),
    ),
    ...(part.isError ? { is_error: true } : {}),
    ...cacheControl(part.cache),
  };
}

function textBlock(part: TextPart): WireBlock {
  return { type: 'text', text: part.text, ...cacheControl(part.cache) };
}

function imageBlock(part: ImagePart): WireBlock {
  const source = part.source;
  return {
    type: 'image',
    source:
      source.kind === 'base64'
        ? { type: 'base64', media_type: source.mediaType, data: source.data }
        : { type: 'url', url: source.url },
    ...cacheControl(part.cache),
  };
}

function documentBlock(part: DocumentPart): WireBlock {
  const source = part.source;
  const wireSource =
    source.kind === 'text'
      ? { type: 'text', media_type: 'text/plain', data: source.text }
      : source.kind === 'pdf'
        ? { type: 'base64', media_type: 'application/pdf', data: source.data }
        : { type: 'url', url: source.url };
  return {
    type: 'document',
    source: wireSource,
    ...(part.title !== undefined ? { title: part.title } : {}),
    ...(part.context !== undefined ? { context: part.context } : {}),
    ...(part.citations ? { citations: { enabled: true } } : {}),
    ...cacheControl(part.cache),
  };
}

function cacheControl(cache: CacheHint | undefined): { cache_control?: Record<string, unknown> } {
  if (!cache) return {};
  return { cache_control: { type: 'ephemeral', ...(cache.ttl ? { ttl: cache.ttl } : {}) } };
}
