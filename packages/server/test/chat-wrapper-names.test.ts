import { test } from 'node:test';
import assert from 'node:assert/strict';
import { specializedChatWrapperTypeNames } from 'node-llama-cpp';
import { CHAT_WRAPPER_NAMES } from '../src/backends/llama-cpp/chat-wrapper-names.js';

test("the config's chat wrapper names are node-llama-cpp's, all of them", () => {
  assert.deepEqual([...CHAT_WRAPPER_NAMES].sort(), [...specializedChatWrapperTypeNames].sort());
});
