/**
 * A validated request -> the body sent to the upstream. Server tools run in this service, never
 * in the upstream (docs/decisions/0007-messages-upstream-and-fallback.md): the upstream sees them
 * as custom tools of the same name, the turn's server_tool_use blocks as tool_use blocks, and
 * their result blocks as tool_result blocks in a user turn, so that it only ever answers one step.
 * Pure: no I/O.
 */
import {
  isCustomTool,
  SERVER_TOOL_NAMES,
  type ContentBlock,
  type ContentBlockParam,
  type ConversationRequest,
  type CustomToolParam,
  type MessageParam,
  type ToolParam,
} from '@mms/protocol';
import { innerSignature } from '../../signing/thinking-signature.js';
import type { BackendStepRequest } from '../backend.js';

/** What the upstream model is told of each server tool: a name, a description and an input schema. */
const SERVER_TOOLS_AS_CUSTOM: Record<string, CustomToolParam> = {
  [SERVER_TOOL_NAMES.webSearch]: {
    name: SERVER_TOOL_NAMES.webSearch,
    description: 'Search the web. Returns the title, URL and an excerpt of each result.',
    input_schema: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to search for.' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
  [SERVER_TOOL_NAMES.webFetch]: {
    name: SERVER_TOOL_NAMES.webFetch,
    description:
      'Fetch a web page or document by URL and return its text. Only URLs that already appear in the conversation can be fetched.',
    input_schema: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The URL to fetch.' } },
      required: ['url'],
      additionalProperties: false,
    },
  },
  [SERVER_TOOL_NAMES.codeExecution]: {
    name: SERVER_TOOL_NAMES.codeExecution,
    description: 'Run Python code in a sandbox and return its standard output, standard error and return code.',
    input_schema: {
      type: 'object',
      properties: { code: { type: 'string', description: 'The Python code to run.' } },
      required: ['code'],
      additionalProperties: false,
    },
  },
};

const SERVER_RESULT_TYPES: ReadonlySet<string> = new Set([
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
]);

/** Names of the server tools a request offers: an upstream tool_use of one of these is a server call. */
export function serverToolNames(request: ConversationRequest): ReadonlySet<string> {
  return new Set((request.tools ?? []).filter((tool) => !isCustomTool(tool)).map((tool) => tool.name));
}

/** The body of `POST /v1/messages/count_tokens` upstream. */
export function upstreamCountBody(request: ConversationRequest, model: string): Record<string, unknown> {
  return {
    model,
    messages: upstreamMessages(request.messages, []),
    system: request.system,
    tools: upstreamTools(request.tools),
    tool_choice: request.tool_choice,
    thinking: request.thinking,
    output_config: request.output_config,
  };
}

/** The body of one step's `POST /v1/messages` upstream: always streamed, budget what is left. */
export function upstreamMessageBody(step: BackendStepRequest, model: string): Record<string, unknown> {
  const { request } = step;
  return {
    model,
    max_tokens: step.outputBudget,
    stream: true,
    messages: upstreamMessages(request.messages, step.turnSoFar),
    system: request.system,
    tools: upstreamTools(request.tools),
    tool_choice: request.tool_choice,
    thinking: thinkingWithin(request.thinking, step.outputBudget),
    output_config: request.output_config,
    stop_sequences: request.stop_sequences,
    temperature: request.temperature,
    top_p: request.top_p,
    top_k: request.top_k,
    metadata: request.metadata,
    service_tier: request.service_tier,
  };
}

function upstreamTools(tools: readonly ToolParam[] | undefined): ToolParam[] | undefined {
  return tools?.map((tool) => (isCustomTool(tool) ? tool : (SERVER_TOOLS_AS_CUSTOM[tool.name] ?? tool)));
}

/**
 * A later step of a turn has less budget than the request's max_tokens; a thinking budget must
 * stay below it, or the upstream refuses the step. Below the smallest thinking budget (1024),
 * thinking is left to the upstream's default for the model.
 */
function thinkingWithin(
  thinking: ConversationRequest['thinking'],
  outputBudget: number,
): ConversationRequest['thinking'] {
  if (thinking?.type !== 'enabled' || thinking.budget_tokens < outputBudget) return thinking;
  return outputBudget > 1024 ? { type: 'enabled', budget_tokens: outputBudget - 1 } : undefined;
}

interface Converted {
  message: MessageParam;
  /** Made by splitting an assistant turn: may merge with a neighbour of the same role. */
  split: boolean;
}

/**
 * The conversation plus this turn's earlier steps, with every server tool call and result turned
 * into a client tool round trip. Messages without server blocks pass unchanged.
 */
export function upstreamMessages(
  messages: readonly MessageParam[],
  turnSoFar: readonly ContentBlock[],
): MessageParam[] {
  const all: MessageParam[] =
    turnSoFar.length === 0
      ? [...messages]
      : [...messages, { role: 'assistant', content: turnSoFar as ContentBlockParam[] }];
  const out: Converted[] = [];
  for (const message of all.map(withUpstreamSignatures)) {
    const pieces =
      message.role === 'assistant' && hasServerBlocks(message)
        ? splitAssistantTurn(message.content as ContentBlockParam[]).map((piece) => ({ message: piece, split: true }))
        : [{ message, split: false }];
    for (const piece of pieces) append(out, piece);
  }
  return out.map((entry) => entry.message);
}

/**
 * Thinking goes back with the upstream's own signature, which this service's wraps
 * (signing/thinking-signature.ts; it verified on the way in). Thinking with none came from
 * another engine of this service, which the upstream could not verify: it is left out.
 */
function withUpstreamSignatures(message: MessageParam): MessageParam {
  if (typeof message.content === 'string' || !message.content.some((block) => block.type === 'thinking'))
    return message;
  const content = message.content.flatMap((block): ContentBlockParam[] => {
    if (block.type !== 'thinking') return [block];
    const signature = innerSignature(block.signature);
    return signature === '' ? [] : [{ ...block, signature }];
  });
  return { role: message.role, content };
}

function hasServerBlocks(message: MessageParam): boolean {
  return (
    typeof message.content !== 'string' &&
    message.content.some((block) => block.type === 'server_tool_use' || SERVER_RESULT_TYPES.has(block.type))
  );
}

/** Two turns of one role in a row, one of them from a split, become one turn. */
function append(out: Converted[], piece: Converted): void {
  const last = out.at(-1);
  if (last && last.message.role === piece.message.role && (last.split || piece.split)) {
    last.message = { role: last.message.role, content: [...blocksOf(last.message), ...blocksOf(piece.message)] };
    last.split = true;
    return;
  }
  out.push(piece);
}

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/**
 * One assistant turn with server blocks -> assistant and user turns. Each run of result blocks
 * ends an assistant segment and becomes a user turn of tool_result blocks. A tool call whose
 * result is not in that run (a client tool_use, answered by the client's next turn; or a server
 * call answered later) moves on to the next segment, so that every tool_use upstream is answered
 * in the turn right after it.
 */
function splitAssistantTurn(blocks: readonly ContentBlockParam[]): MessageParam[] {
  const out: MessageParam[] = [];
  let segment: ContentBlockParam[] = [];
  let results: ContentBlockParam[] = [];
  const flush = () => {
    const answered = new Set(results.map((block) => (block as { tool_use_id: string }).tool_use_id));
    const unanswered = segment.filter((block) => block.type === 'tool_use' && !answered.has(block.id));
    const kept = segment.filter((block) => !unanswered.includes(block));
    if (kept.length > 0) out.push({ role: 'assistant', content: kept });
    out.push({ role: 'user', content: results });
    segment = unanswered;
    results = [];
  };
  for (const block of blocks) {
    if (SERVER_RESULT_TYPES.has(block.type)) {
      results.push(toToolResult(block as ServerResultParam));
      continue;
    }
    if (results.length > 0) flush();
    segment.push(
      block.type === 'server_tool_use'
        ? { type: 'tool_use', id: block.id, name: block.name, input: block.input }
        : block,
    );
  }
  if (results.length > 0) flush();
  if (segment.length > 0) out.push({ role: 'assistant', content: segment });
  return out;
}

type ServerResultParam = Extract<
  ContentBlockParam,
  { type: 'web_search_tool_result' | 'web_fetch_tool_result' | 'code_execution_tool_result' }
>;

/** A server tool's result as the text a model reads: its JSON, flagged as an error when it is one. */
function toToolResult(block: ServerResultParam): ContentBlockParam {
  const content = block.content;
  const isError = !Array.isArray(content) && typeof content.type === 'string' && content.type.endsWith('_error');
  return {
    type: 'tool_result',
    tool_use_id: block.tool_use_id,
    content: JSON.stringify(content),
    ...(isError ? { is_error: true } : {}),
  };
}
