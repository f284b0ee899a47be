/**
 * The request's messages, and this turn's earlier steps, as the turns a model sees. Decided here
 * once for every engine: turns of one role in a row are one turn (the public API joins them too);
 * a server tool's result is readable text (tool-kinds/server-results.ts); a text document is its text; every
 * block that an engine may have to refuse keeps its place in the request, so the refusal names it.
 * A `system` message is a system turn where it stands, except between an assistant turn's tool
 * calls and the user turn that answers them: chat formats want results right after their calls,
 * so it moves to just after that user turn.
 * Pure: no model, no I/O.
 */
import {
  compactionPoint,
  type ContentBlock,
  type ContentBlockParam,
  type MessageParam,
  type ToolReferenceBlockParam,
} from '@model-messages/protocol';
import { cacheHint } from './cache-hint.js';
import { summaryTurn } from './compaction.js';
import type { AssistantPart, DocumentPart, ImagePart, TextPart, Turn, UserPart } from '../backends/call/model-call.js';
import { hiddenThinking } from '../signing/thinking-signature.js';
import { isErrorContent } from '../tool-kinds/result-values.js';
import { isServerResult, serverResultText } from '../tool-kinds/server-results.js';

type ImageBlock = Extract<ContentBlockParam, { type: 'image' }>;
type DocumentBlock = Extract<ContentBlockParam, { type: 'document' }>;
type ToolResultBlock = Extract<ContentBlockParam, { type: 'tool_result' }>;
type ToolReferenceBlock = ToolReferenceBlockParam;

/**
 * The messages as turns. A compacted conversation (issue 34) starts at its last compaction block
 * with content: the model reads the block's summary as a user turn, then what follows the block,
 * and nothing before it, as the public API drops it.
 */
export function conversationTurns(messages: readonly MessageParam[]): Turn[] {
  const turns: Turn[] = [];
  /** System turns held back until the results of the calls before them are in. */
  let heldSystem: Turn[] = [];
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const point = compactionPoint(messages);
  if (point) turns.push(summaryTurn(point.summary));
  messages.forEach((message, index) => {
    if (point && index < point.message) return;
    // In the message that holds the compaction block, only the blocks after it.
    const from = point?.message === index ? point.position + 1 : 0;
    const where = `messages.${index}`;
    if (message.role === 'system') {
      // `clear_at: "next_user_message"`: shown only for the user turn it follows.
      if (message.clear_at === 'next_user_message' && lastUser > index) return;
      const parts = systemTextParts(message.content);
      if (parts.length === 0) return;
      const target = heldSystem.length > 0 || awaitsResults(turns.at(-1)) ? heldSystem : turns;
      append(target, 'system', parts);
      return;
    }
    if (heldSystem.length > 0 && message.role === 'user') {
      appendMessage(turns, message, where, from);
      turns.push(...heldSystem);
      heldSystem = [];
      return;
    }
    appendMessage(turns, message, where, from);
  });
  turns.push(...heldSystem);
  return turns;
}

/** An assistant turn with client tool calls: the next user turn holds their results. */
function awaitsResults(turn: Turn | undefined): boolean {
  return turn?.role === 'assistant' && turn.parts.some((part) => part.type === 'tool-call' && !part.server);
}

/** System text (the `system` field, or a system message's content) as text parts; '' is none. */
export function systemTextParts(
  content: string | ReadonlyArray<{ text: string; cache_control?: CacheControl }> | undefined,
): TextPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return (content ?? []).map(textPart);
}

type CacheControl = { ttl?: '5m' | '1h' } | null;

/** The message's blocks from `from` on as parts of its turn; a message that gives none adds no turn. */
function appendMessage(
  turns: Turn[],
  message: Exclude<MessageParam, { role: 'system' }>,
  where: string,
  from: number,
): void {
  if (typeof message.content === 'string') {
    append(turns, message.role, [{ type: 'text', text: message.content }]);
    return;
  }
  const blocks = message.content;
  const parts: Array<UserPart | AssistantPart> = [];
  for (let position = from; position < blocks.length; position += 1) {
    const at = `${where}.content.${position}`;
    if (message.role === 'user') parts.push(userPart(blocks[position]!, at));
    else parts.push(...assistantPart(blocks[position]!, at));
  }
  if (parts.length > 0) append(turns, message.role, parts);
}

/**
 * The turns with this turn's earlier steps (server tool calls and their results) continuing the
 * assistant turn. `turns` is left as it is: it serves every step of the request.
 */
export function withTurnSoFar(turns: readonly Turn[], turnSoFar: readonly ContentBlock[]): Turn[] {
  if (turnSoFar.length === 0) return turns as Turn[];
  const parts = (turnSoFar as ContentBlockParam[]).flatMap((block, position) =>
    assistantPart(block, `turn.${position}`),
  );
  // A turn that so far holds only its compaction block: the summary stands in the prompt already.
  if (parts.length === 0) return turns as Turn[];
  const last = turns.at(-1);
  if (last?.role === 'assistant')
    return [...turns.slice(0, -1), { role: 'assistant', parts: [...last.parts, ...parts] }];
  return [...turns, { role: 'assistant', parts }];
}

function append(turns: Turn[], role: Turn['role'], parts: Array<UserPart | AssistantPart>): void {
  const last = turns.at(-1);
  if (last?.role === role) (last.parts as Array<UserPart | AssistantPart>).push(...parts);
  else turns.push({ role, parts } as Turn);
}

function userPart(block: ContentBlockParam, where: string): UserPart {
  switch (block.type) {
    case 'text':
      return textPart(block);
    case 'image':
      return imagePart(block, where);
    case 'document':
      return documentPart(block, where);
    case 'tool_result':
      return clientResult(block, where);
    default:
      // The endpoint rules refuse every other block in a user turn (protocol's block-roles.ts).
      throw new Error(`${where}: a ${block.type} block in a user turn passed validation`);
  }
}

function assistantPart(block: ContentBlockParam, where: string): AssistantPart[] {
  if (isServerResult(block)) {
    const text: TextPart = { type: 'text', text: serverResultText(block) };
    return [
      {
        type: 'tool-result',
        callId: block.tool_use_id,
        content: [text],
        isError: isErrorContent(block.content),
        server: true,
        ...cacheHint(block.cache_control),
      },
    ];
  }
  switch (block.type) {
    case 'text':
      return [textPart(block)];
    case 'thinking':
      // Thinking returned with `display: "omitted"` travels in its signature (checked on the way in).
      return [
        { type: 'thinking', text: block.thinking || hiddenThinking(block.signature), signature: block.signature },
      ];
    case 'redacted_thinking':
      return [{ type: 'redacted-thinking', data: block.data }];
    case 'compaction':
      // The conversation starts at the last compaction block with content (conversationTurns),
      // whose summary the model reads as a user turn; in the turn that wrote it, the prompt was
      // compacted already; one with no content is a compaction that failed, which changes nothing.
      return [];
    case 'tool_use':
    case 'server_tool_use':
      return [
        {
          type: 'tool-call',
          id: block.id,
          name: block.name,
          input: block.input,
          server: block.type === 'server_tool_use',
          ...cacheHint(block.cache_control),
        },
      ];
    default:
      // The endpoint rules refuse every other block in an assistant turn (protocol's block-roles.ts).
      throw new Error(`${where}: a ${block.type} block in an assistant turn passed validation`);
  }
}

function textPart(block: { text: string; cache_control?: CacheControl }): TextPart {
  return { type: 'text', text: block.text, ...cacheHint(block.cache_control) };
}

function imagePart(block: ImageBlock, where: string): ImagePart {
  const source = block.source;
  return {
    type: 'image',
    source:
      source.type === 'base64'
        ? { kind: 'base64', mediaType: source.media_type, data: source.data }
        : { kind: 'url', url: source.url },
    where,
    ...cacheHint(block.cache_control),
  };
}

function documentPart(block: DocumentBlock, where: string): DocumentPart {
  const source = block.source;
  let converted: DocumentPart['source'];
  if (source.type === 'text') converted = { kind: 'text', text: source.data };
  else if (source.type === 'content') {
    converted = {
      kind: 'text',
      text: typeof source.content === 'string' ? source.content : source.content.map((inner) => inner.text).join('\n'),
    };
  } else if (source.type === 'base64') converted = { kind: 'pdf', data: source.data };
  else converted = { kind: 'url', url: source.url };
  return {
    type: 'document',
    source: converted,
    title: block.title ?? undefined,
    context: block.context ?? undefined,
    citations: block.citations?.enabled === true,
    where,
    ...cacheHint(block.cache_control),
  };
}

function clientResult(block: ToolResultBlock, where: string): UserPart {
  const content = block.content;
  const parts =
    typeof content === 'string'
      ? [{ type: 'text', text: content } satisfies TextPart]
      : (content ?? []).map((inner, position) => {
          const at = `${where}.content.${position}`;
          if (inner.type === 'text') return textPart(inner);
          if (inner.type === 'image') return imagePart(inner, at);
          if (inner.type === 'tool_reference') return toolReferencePart(inner);
          return documentPart(inner, at);
        });
  return {
    type: 'tool-result',
    callId: block.tool_use_id,
    content: parts,
    isError: block.is_error === true,
    server: false,
    ...cacheHint(block.cache_control),
  };
}

/** The model reads that the tool it searched for is now offered (tool-table.ts offers it). */
function toolReferencePart(block: ToolReferenceBlock): TextPart {
  return { type: 'text', text: `Tool "${block.tool_name}" is now available.`, ...cacheHint(block.cache_control) };
}
