/**
 * Where a prompt's last `cache_control` breakpoint falls among its tokens: the prefix the caller
 * marked for reuse. The sequence pool spares it when a sequence must be overwritten, and usage
 * counts its newly evaluated tokens as cache_creation_input_tokens. Pure: no model, no I/O.
 *
 * The breakpoint is placed at its turn's end: a conversation cut after that turn renders, by the
 * chat template, the prompt's own text up to there, so the two token lists share the prefix up
 * to the breakpoint. A breakpoint on the system prompt or a tool marks the prefix before the
 * first turn (the template renders tools in the system area); one in the last turn, the whole
 * prompt.
 */
import type { ChatHistoryItem, Token } from 'node-llama-cpp';
import type { ModelPrompt } from '../call/model-call.js';
import { toChatHistory } from './chat-history.js';

/** What renders the marked prefix: the whole prompt, or a shorter conversation to render and tokenize. */
export type MarkedPrefix = { kind: 'none' } | { kind: 'whole' } | { kind: 'cut'; history: ChatHistoryItem[] };

export function markedPrefix(
  prompt: Pick<ModelPrompt, 'system' | 'turns' | 'tools'>,
  instruction?: string,
): MarkedPrefix {
  const last = prompt.turns.findLastIndex((turn) => turn.parts.some((part) => 'cache' in part && part.cache));
  if (last === prompt.turns.length - 1) return { kind: 'whole' };
  if (last >= 0) return cutAfter(prompt, last + 1, instruction);
  const marked = [...prompt.system, ...prompt.tools].some((part) => part.cache);
  if (!marked) return { kind: 'none' };
  return cutAfter(prompt, 0, instruction);
}

function cutAfter(prompt: Pick<ModelPrompt, 'system' | 'turns'>, turns: number, instruction?: string): MarkedPrefix {
  return {
    kind: 'cut',
    history: toChatHistory({ system: prompt.system, turns: prompt.turns.slice(0, turns) }, instruction).history,
  };
}

/** Tokens the two lists share from the start. */
export function sharedPrefix(left: readonly Token[], right: readonly Token[]): number {
  const length = Math.min(left.length, right.length);
  let index = 0;
  while (index < length && left[index] === right[index]) index += 1;
  return index;
}
