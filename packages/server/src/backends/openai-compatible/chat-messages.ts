/**
 * The model call's conversation as OpenAI chat messages. Pure. Tool calls (client and server)
 * become assistant tool_calls; their results become `tool` messages right after the call (where
 * the chat format wants them); thinking goes back in the engine's reasoning field. Content the
 * engine cannot take is refused with the block named (call/text-content.ts), never dropped.
 *
 * Images go as `image_url` parts of a user message, wherever they stood: a `tool` message takes
 * text only in OpenAI's API and on engines that follow it (vLLM refuses image parts there for
 * some models, vLLM #43203, and a chat template that renders tool content as a string would
 * print the part), while every vision model's template reads images in a user message. So a
 * tool's result keeps its text in its `tool` message and its images follow the tool messages in
 * one user message, each result's introduced by the call that returned them.
 */
import type {
  AssistantPart,
  ImagePart,
  ModelPrompt,
  TextPart,
  ToolResultPart,
  Turn,
  UserPart,
} from '../call/model-call.js';
import { documentText, toolResultText, unsupportedImage } from '../call/text-content.js';
import type { ChatContentPart, ChatMessage, ChatToolCall } from './chat-types.js';

const BACKEND = 'openai-compatible';

export interface MessageOptions {
  /** Added to the system prompt (the output target's instruction, when the engine needs it). */
  instruction: string | undefined;
  reasoningField: 'reasoning_content' | 'reasoning' | undefined;
  /** The served model takes images (the backend's `images`); otherwise an image is a 400 naming it. */
  images: boolean;
}

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

export function toChatMessages(prompt: Pick<ModelPrompt, 'system' | 'turns'>, options: MessageOptions): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = [...prompt.system.map((part) => part.text), options.instruction].filter(Boolean).join('\n\n');
  if (system) messages.push({ role: 'system', content: system });
  const toolNames = calledToolNames(prompt.turns);
  for (const turn of prompt.turns) {
    if (turn.role === 'user') appendUserTurn(messages, turn.parts, toolNames, options);
    // At its place: the engine's chat template renders it (as a system turn, where it has one).
    else if (turn.role === 'system')
      messages.push({ role: 'system', content: turn.parts.map((part) => part.text).join('\n\n') });
    else appendAssistantTurn(messages, turn.parts, options);
  }
  return messages;
}

/** Each call's tool name by call id, to say which call an image came from. */
function calledToolNames(turns: readonly Turn[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const turn of turns)
    if (turn.role === 'assistant')
      for (const part of turn.parts) if (part.type === 'tool-call') names.set(part.id, part.name);
  return names;
}

function appendUserTurn(
  messages: ChatMessage[],
  parts: readonly UserPart[],
  toolNames: ReadonlyMap<string, string>,
  options: MessageOptions,
): void {
  // The tool messages go first, right after their calls where the chat format wants them; the
  // rest of the turn, the results' images included, follows them in one user message.
  const content: ChatContentPart[] = [];
  for (const part of parts) {
    if (part.type === 'tool-result') {
      messages.push(toolMessage(part, options));
      content.push(...resultImages(part, toolNames, options));
    } else if (part.type === 'text') content.push({ type: 'text', text: part.text });
    else if (part.type === 'image') content.push(imagePart(part, options));
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

/** The one rule for an image anywhere in the conversation: a data URL, or the caller's URL as it is. */
function imagePart(part: ImagePart, options: MessageOptions): ChatContentPart {
  if (!options.images) throw unsupportedImage(part, BACKEND);
  const source = part.source;
  const url = source.kind === 'base64' ? `data:${source.mediaType};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

/**
 * A result as a `tool` message: its text, each image (sent after the tool messages) standing as a
 * line that says so, in its place among the text.
 */
function toolMessage(part: ToolResultPart, options: MessageOptions): ChatMessage {
  const sentApart = options.images
    ? { ...part, content: part.content.map((inner) => (inner.type === 'image' ? IMAGE_SENT_APART : inner)) }
    : part;
  return { role: 'tool', tool_call_id: part.callId, content: toolResultText(sentApart, BACKEND) };
}

const IMAGE_SENT_APART: TextPart = { type: 'text', text: '[image: in the next user message]' };

/** A result's images for the user message after the tool messages, introduced by the call that returned them. */
function resultImages(
  part: ToolResultPart,
  toolNames: ReadonlyMap<string, string>,
  options: MessageOptions,
): ChatContentPart[] {
  const images = part.content.filter((inner): inner is ImagePart => inner.type === 'image');
  if (images.length === 0) return [];
  const name = toolNames.get(part.callId);
  const call = name === undefined ? `call ${part.callId}` : `${name} (call ${part.callId})`;
  const what = images.length === 1 ? 'The image' : `The ${images.length} images`;
  return [{ type: 'text', text: `${what} returned by ${call}:` }, ...images.map((image) => imagePart(image, options))];
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
        // A server tool's result is text (tool-kinds/server-results.ts): nothing to send apart.
        messages.push(toolMessage(part, options));
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
