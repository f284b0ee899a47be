/**
 * The model call's conversation as node-llama-cpp's chat history, so that the model's own chat
 * template formats it: system prompt, turns, thinking, tool calls and their results. Pure: no
 * model, no I/O. Content this engine cannot take (images, in a user turn or a tool's result, and
 * PDF and URL documents) is refused with the block named (call/text-content.ts), never dropped.
 */
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse } from 'node-llama-cpp';
import type { AssistantPart, ModelPrompt, TextPart, UserPart } from '../call/model-call.js';
import { documentText, toolResultText, unsupportedImage } from '../call/text-content.js';

const BACKEND = 'llama-cpp';

export interface ConvertedConversation {
  history: ChatHistoryItem[];
  /** The last item is the model turn to generate (empty, or an assistant prefill to continue). */
  continuation: ChatModelResponse;
}

export function toChatHistory(
  prompt: Pick<ModelPrompt, 'system' | 'turns'>,
  instruction?: string,
): ConvertedConversation {
  const history: ChatHistoryItem[] = [];
  const systemText = [...prompt.system.map((part) => part.text), instruction].filter(Boolean).join('\n\n');
  if (systemText) history.push({ type: 'system', text: systemText });
  const calls = new Map<string, ChatModelFunctionCall>();
  for (const turn of prompt.turns) {
    if (turn.role === 'user') appendUserTurn(history, turn.parts, calls);
    else if (turn.role === 'system') appendSystemTurn(history, turn.parts);
    else appendModelTurn(history, turn.parts, calls);
  }
  const last = history.at(-1);
  if (last?.type === 'model') return { history, continuation: last };
  const continuation: ChatModelResponse = { type: 'model', response: [] };
  history.push(continuation);
  return { history, continuation };
}

function appendUserTurn(
  history: ChatHistoryItem[],
  parts: readonly UserPart[],
  calls: Map<string, ChatModelFunctionCall>,
): void {
  const texts: string[] = [];
  for (const part of parts) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'document') texts.push(documentText(part, BACKEND));
    else if (part.type === 'image') throw unsupportedImage(part, BACKEND);
    else {
      const call = calls.get(part.callId);
      if (call) call.result = toolResultText(part, BACKEND);
    }
  }
  if (texts.length === 0) return;
  const last = history.at(-1);
  // A blank line between text parts (model-call.ts, Turn).
  if (last?.type === 'user') last.text += `\n\n${texts.join('\n\n')}`;
  else history.push({ type: 'user', text: texts.join('\n\n') });
}

/**
 * A system message at its place: the chat template renders it as a system turn where it has one;
 * where it has none, node-llama-cpp's Jinja wrapper turns it into a user message headed
 * "### System message", so it is marked, never dropped.
 */
function appendSystemTurn(history: ChatHistoryItem[], parts: readonly TextPart[]): void {
  history.push({ type: 'system', text: parts.map((part) => part.text).join('\n\n') });
}

function appendModelTurn(
  history: ChatHistoryItem[],
  parts: readonly AssistantPart[],
  calls: Map<string, ChatModelFunctionCall>,
): void {
  const last = history.at(-1);
  const turn: ChatModelResponse = last?.type === 'model' ? last : { type: 'model', response: [] };
  if (turn !== last) history.push(turn);
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        turn.response.push(part.text);
        break;
      case 'thinking':
        turn.response.push({ type: 'segment', segmentType: 'thought', text: part.text, ended: true });
        break;
      case 'tool-call': {
        const call: ChatModelFunctionCall = {
          type: 'functionCall',
          name: part.name,
          params: part.input,
          result: undefined,
        };
        calls.set(part.id, call);
        turn.response.push(call);
        break;
      }
      case 'tool-result': {
        const call = calls.get(part.callId);
        if (call) call.result = toolResultText(part, BACKEND);
        break;
      }
      case 'redacted-thinking':
        // Another engine's encrypted reasoning: there is nothing a local model can read in it.
        break;
      default:
        part satisfies never;
    }
  }
}
