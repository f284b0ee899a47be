import type { SpecializedChatWrapperTypeName } from 'node-llama-cpp';

/**
 * node-llama-cpp's chat wrapper names (its `specializedChatWrapperTypeNames`), written out so
 * that the config schema does not load node-llama-cpp: importing it costs most of a second,
 * which a service without a llama-cpp model should not pay at every start. A test holds this
 * copy to the original (packages/server/test/chat-wrapper-names.test.ts).
 */
export const CHAT_WRAPPER_NAMES = [
  'general',
  'deepSeek',
  'qwen',
  'llama3.2-lightweight',
  'llama3.1',
  'llama3',
  'llama2Chat',
  'mistral',
  'alpacaChat',
  'functionary',
  'chatML',
  'falconChat',
  'gemma4',
  'gemma',
  'harmony',
  'muse',
  'seed',
] as const satisfies readonly SpecializedChatWrapperTypeName[];
