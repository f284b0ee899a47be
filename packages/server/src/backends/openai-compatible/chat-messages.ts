/**
 * The model call's conversation as OpenAI chat messages. Pure. Tool calls (client and server)
 * become assistant tool_calls; their results become `tool` messages right after the call (where
 * the chat format wants them); thinking goes back in the engine's reasoning field. Content the
 * engine cannot take is refused with the block named (call/text-content.ts), never dropped.
 */
import type { AssistantPart, ModelPrompt, UserPart } from '../call/model-call.js';
import { documentText, toolResultText, unsupportedContent } from '../call/text-content.js';
import type { ChatContentPart, ChatMessage, ChatToolCall } from './chat-types.js';

const BACKEND = 'openai-compatible';

export interface MessageOptions {
  /** Added to the system prompt (the output target's instruction, when the engine needs it). */
  instruction: string | undefined;
  reasoningField: 'reasoning_content' | 'reasoning' | undefined;
}

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

export function toChatMessages(prompt: Pick<ModelPrompt, 'system' | 'turns'>, options: MessageOptions): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = [...prompt.system.map((part) => part.text), options.instruction].filter(Boolean).join('\n\n');
  if (system) messages.push({ role: 'system', content: system });
  for (const turn of prompt.turns) {
    if (turn.role === 'user') appendUserTurn(messages, turn.parts);
    // At its place: the engine's chat template renders it (as a system turn, where it has one).
    else if (turn.role === 'system')
      messages.push({ role: 'system', content: turn.parts.map((part) => part.text).join('\n\n') });
    else appendAssistantTurn(messages, turn.parts, options);
  }
  return messages;
}

function appendUserTurn(messages: ChatMessage[], parts: readonly UserPart[]): void {
  const content: ChatContentPart[] = [];
  for (const part of parts) {
    if (part.type === 'tool-result')
      messages.push({ role: 'tool', tool_call_id: part.callId, content: toolResultText(part, BACKEND) });
    else if (part.type === 'text') content.push({ type: 'text', text: part.text });
    else if (part.type === 'image') content.push(imagePart(part));
    else content.push({ type: 'text', text: documentText(part, BACKEND) });
  }
  if (content.length === 0) return;
  // Text alone goes as a string, its parts apart by a blank line (model-call.ts, Turn): every
  // engine takes it (Ollama splits part arrays into messages).
  const joined = content.every((part) => part.type === 'text')
    ? content.map((part) => (part as { text: string }).text).join('\n\n')
    : content;
  const last = messages.at(-1);
  if (last?.role === 'user') last.content = mergeContent(last.content, joined);
  else messages.push({ role: 'user', content: joined });
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

function imagePart(part: Extract<UserPart, { type: 'image' }>): ChatContentPart {
  const source = part.source;
  const url = source.kind === 'base64' ? `data:${source.mediaType};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

/** Splits the turn where a server tool's result sits, so that each result follows its call. */
function appendAssistantTurn(messages: ChatMessage[], parts: readonly AssistantPart[], options: MessageOptions): void {
  let segment = emptySegment();
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        segment.text += part.text;
        break;
      case 'thinking':
        // Without a reasoning field (generic), earlier thinking is not sent, as the public API
        // strips earlier turns' thinking from the context too.
        segment.reasoning += options.reasoningField ? part.text : '';
        break;
      case 'tool-call':
        segment.calls.push(toolCall(part.id, part.name, part.input));
        break;
      case 'tool-result':
        pushAssistant(messages, segment, options);
        segment = emptySegment();
        messages.push({ role: 'tool', tool_call_id: part.callId, content: toolResultText(part, BACKEND) });
        break;
      case 'redacted-thinking':
        // Another engine's encrypted reasoning: there is nothing to send.
        break;
      default:
        part satisfies never;
    }
  }
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
