/**
 * A validated Messages conversation as OpenAI chat messages. Pure. tool_use and server_tool_use
 * blocks become assistant tool_calls; tool_result blocks and server tool result blocks become
 * `tool` messages right after the call (where the chat format wants them); thinking goes back
 * in the engine's reasoning field. Content an engine cannot take is refused, never dropped.
 */
import { ServiceError, type ContentBlock, type ContentBlockParam, type ConversationRequest } from '@mms/protocol';
import type { ChatContentPart, ChatMessage, ChatToolCall } from './chat-types.js';

export interface MessageOptions {
  /** Added to the system prompt (a forced tool's or a format's contract). */
  instruction: string | undefined;
  reasoningField: 'reasoning_content' | 'reasoning' | undefined;
}

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

export function toChatMessages(
  request: ConversationRequest,
  turnSoFar: readonly ContentBlock[],
  options: MessageOptions,
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = [systemText(request), options.instruction].filter(Boolean).join('\n\n');
  if (system) messages.push({ role: 'system', content: system });
  request.messages.forEach((message, index) => {
    const blocks: ContentBlockParam[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (message.role === 'user') appendUserTurn(messages, blocks, `messages.${index}`);
    else appendAssistantTurn(messages, blocks, options, `messages.${index}`);
  });
  // Server tool calls and results of earlier steps continue the assistant turn.
  if (turnSoFar.length > 0) appendAssistantTurn(messages, turnSoFar as ContentBlockParam[], options, 'turn');
  return messages;
}

function systemText(request: ConversationRequest): string {
  const system = request.system;
  if (system === undefined) return '';
  return typeof system === 'string' ? system : system.map((block) => block.text).join('\n');
}

function appendUserTurn(messages: ChatMessage[], blocks: readonly ContentBlockParam[], where: string): void {
  const parts: ChatContentPart[] = [];
  blocks.forEach((block, position) => {
    const at = `${where}.content.${position}`;
    if (block.type === 'tool_result') {
      messages.push({ role: 'tool', tool_call_id: block.tool_use_id, content: toolResultText(block, at) });
    } else if (block.type === 'text') {
      parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      parts.push(imagePart(block));
    } else if (block.type === 'document') {
      parts.push({ type: 'text', text: documentText(block, at) });
    } else {
      throw new ServiceError(
        'invalid_request',
        `${at}: ${block.type} blocks are not supported in user turns by the openai-compatible backend`,
      );
    }
  });
  if (parts.length === 0) return;
  // Text alone goes as a string: every engine takes it (Ollama splits part arrays into messages).
  const content = parts.every((part) => part.type === 'text')
    ? parts.map((part) => (part as { text: string }).text).join('\n')
    : parts;
  const last = messages.at(-1);
  if (last?.role === 'user') last.content = mergeContent(last.content, content);
  else messages.push({ role: 'user', content });
}

function mergeContent(
  first: string | ChatContentPart[],
  second: string | ChatContentPart[],
): string | ChatContentPart[] {
  if (typeof first === 'string' && typeof second === 'string') return `${first}\n\n${second}`;
  const asParts = (content: string | ChatContentPart[]): ChatContentPart[] =>
    typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  return [...asParts(first), ...asParts(second)];
}

function imagePart(block: Extract<ContentBlockParam, { type: 'image' }>): ChatContentPart {
  const source = block.source;
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

function documentText(block: Extract<ContentBlockParam, { type: 'document' }>, where: string): string {
  const source = block.source;
  let text: string;
  if (source.type === 'text') text = source.data;
  else if (source.type === 'content')
    text = typeof source.content === 'string' ? source.content : source.content.map((inner) => inner.text).join('\n');
  else
    throw new ServiceError(
      'invalid_request',
      `${where}: ${source.type === 'url' ? 'URL' : 'PDF'} documents are not supported by the openai-compatible backend; send the text`,
    );
  return block.title ? `${block.title}\n\n${text}` : text;
}

function toolResultText(block: Extract<ContentBlockParam, { type: 'tool_result' }>, where: string): string {
  const content = block.content;
  const text =
    typeof content === 'string'
      ? content
      : (content ?? [])
          .map((inner, position) => {
            if (inner.type === 'text') return inner.text;
            if (inner.type === 'document') return documentText(inner, `${where}.content.${position}`);
            throw new ServiceError(
              'invalid_request',
              `${where}.content.${position}: images in tool results are not supported by the openai-compatible backend`,
            );
          })
          .join('\n');
  return block.is_error ? `Error: ${text}` : text;
}

/** Splits the turn where a server tool's result sits, so that each result follows its call. */
function appendAssistantTurn(
  messages: ChatMessage[],
  blocks: readonly ContentBlockParam[],
  options: MessageOptions,
  where: string,
): void {
  let segment = emptySegment();
  blocks.forEach((block, position) => {
    if (block.type === 'text') segment.text += block.text;
    // Without a reasoning field (generic), earlier thinking is not sent, as the public API strips
    // earlier turns' thinking from the context too.
    else if (block.type === 'thinking') segment.reasoning += options.reasoningField ? block.thinking : '';
    else if (block.type === 'tool_use' || block.type === 'server_tool_use')
      segment.calls.push(toolCall(block.id, block.name, block.input));
    else if (
      block.type === 'web_search_tool_result' ||
      block.type === 'web_fetch_tool_result' ||
      block.type === 'code_execution_tool_result'
    ) {
      pushAssistant(messages, segment, options);
      segment = emptySegment();
      messages.push({ role: 'tool', tool_call_id: block.tool_use_id, content: JSON.stringify(block.content) });
    } else if (block.type !== 'redacted_thinking') {
      // redacted_thinking is another engine's encrypted reasoning: there is nothing to send.
      throw new ServiceError(
        'invalid_request',
        `${where}.content.${position}: ${block.type} blocks are not supported in assistant turns`,
      );
    }
  });
  pushAssistant(messages, segment, options);
}

interface Segment {
  text: string;
  reasoning: string;
  calls: ChatToolCall[];
}

function emptySegment(): Segment {
  return { text: '', reasoning: '', calls: [] };
}

function toolCall(id: string, name: string, input: Record<string, unknown>): ChatToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(input) } };
}

function pushAssistant(messages: ChatMessage[], segment: Segment, options: MessageOptions): void {
  if (segment.text === '' && segment.calls.length === 0 && segment.reasoning === '') return;
  const last = messages.at(-1);
  // Two assistant messages in a row break templates that require alternation: continue the last one.
  if (last?.role === 'assistant' && last.tool_calls === undefined && segment.reasoning === '') {
    last.content += segment.text;
    if (segment.calls.length > 0) last.tool_calls = segment.calls;
    return;
  }
  const message: AssistantMessage = { role: 'assistant', content: segment.text };
  if (segment.calls.length > 0) message.tool_calls = segment.calls;
  if (segment.reasoning !== '' && options.reasoningField) message[options.reasoningField] = segment.reasoning;
  messages.push(message);
}
