/** The endpoint rules' verdict on a conversation, for the tests of the rules on its turns. */
import assert from 'node:assert/strict';
import { checkConversationRules } from '../src/endpoint-rules.js';
import { ServiceError } from '../src/errors.js';
import type { ModelProfile } from '../src/model-profile.js';
import { parseCountTokensRequest } from '../src/parse-request.js';

const model: ModelProfile = { id: 'mid', tier: 'mid', generation: 'newer', contextWindow: 4096, maxOutputTokens: 2048 };

/** Undefined when the rules accept `messages` (with `extra` fields), else the `invalid_request` refusal's message. */
export function refusal(messages: unknown[], extra: Record<string, unknown> = {}): string | undefined {
  const request = parseCountTokensRequest({ model: 'mid', messages, ...extra });
  try {
    checkConversationRules(request, model);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, 'invalid_request');
    return error.message;
  }
}

export const user = (content: unknown) => ({ role: 'user', content });
export const assistant = (content: unknown) => ({ role: 'assistant', content });
