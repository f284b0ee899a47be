/**
 * Converts a validated Messages request into node-llama-cpp's chat history, so that the model's
 * own chat template formats it: system prompt, turns, thinking, tool calls and their results.
 * Pure: no model, no I/O. Content the engine cannot take (images, documents) is refused, never
 * dropped.
 */
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse } from 'node-llama-cpp';
import { ServiceError, type ContentBlockParam, type ConversationRequest, type MessageParam } from '@mms/protocol';
import { webSearchResultText } from '../../tools/web-search/result-text.js';

export interface ConvertedConversation {
  history: ChatHistoryItem[];
  /** The last item is the model turn to generate (empty, or an assistant prefill to continue). */
  continuation: ChatModelResponse;
}

export function toChatHistory(request: ConversationRequest, extraSystemText?: string): ConvertedConversation {
  const history: ChatHistoryItem[] = [];
  const systemText = [systemPrompt(request), extraSystemText].filter(Boolean).join('\n\n');
  if (systemText) history.push({ type: 'system', text: systemText });
  const calls = new Map<string, ChatModelFunctionCall>();
  request.messages.forEach((message, index) => {
    if (message.role === 'user') appendUserTurn(history, message, calls, index);
    else appendModelTurn(history, message, calls);
  });
  const last = history.at(-1);
  if (last?.type === 'model') return { history, continuation: last };
  const continuation: ChatModelResponse = { type: 'model', response: [] };
  history.push(continuation);
  return { history, continuation };
}

function systemPrompt(request: ConversationRequest): string {
  const system = request.system;
  if (system === undefined) return '';
  return typeof system === 'string' ? system : system.map((block) => block.text).join('\n');
}

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function appendUserTurn(
  history: ChatHistoryItem[],
  message: MessageParam,
  calls: Map<string, ChatModelFunctionCall>,
  index: number,
): void {
  const texts: string[] = [];
  for (const block of blocksOf(message)) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_result') {
      const call = calls.get(block.tool_use_id);
      if (call) call.result = toolResultValue(block);
    } else {
      throw new ServiceError(
        'invalid_request',
        `messages.${index}: ${block.type} blocks are not supported by the llama-cpp backend`,
      );
    }
  }
  if (texts.length === 0) return;
  const last = history.at(-1);
  if (last?.type === 'user') last.text += `\n\n${texts.join('\n')}`;
  else history.push({ type: 'user', text: texts.join('\n') });
}

function toolResultValue(block: Extract<ContentBlockParam, { type: 'tool_result' }>): string {
  const content = block.content;
  const text =
    typeof content === 'string'
      ? content
      : (content ?? []).map((inner) => (inner.type === 'text' ? inner.text : `[${inner.type}]`)).join('\n');
  return block.is_error ? `Error: ${text}` : text;
}

function appendModelTurn(
  history: ChatHistoryItem[],
  message: MessageParam,
  calls: Map<string, ChatModelFunctionCall>,
): void {
  const last = history.at(-1);
  const turn: ChatModelResponse = last?.type === 'model' ? last : { type: 'model', response: [] };
  if (turn !== last) history.push(turn);
  for (const block of blocksOf(message)) {
    if (block.type === 'text') turn.response.push(block.text);
    else if (block.type === 'thinking')
      turn.response.push({ type: 'segment', segmentType: 'thought', text: block.thinking, ended: true });
    else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      const call: ChatModelFunctionCall = {
        type: 'functionCall',
        name: block.name,
        params: block.input,
        result: undefined,
      };
      calls.set(block.id, call);
      turn.response.push(call);
    } else if (
      block.type === 'web_search_tool_result' ||
      block.type === 'web_fetch_tool_result' ||
      block.type === 'code_execution_tool_result'
    ) {
      const call = calls.get(block.tool_use_id);
      // Search results carry their text base64-encoded in encrypted_content: the model reads it decoded.
      if (call)
        call.result = block.type === 'web_search_tool_result' ? webSearchResultText(block.content) : block.content;
    }
    // redacted_thinking is opaque data from another engine: there is nothing a local model can read in it.
  }
}
