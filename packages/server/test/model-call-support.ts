/** Model calls built from request bodies the way the service builds them, for backends' unit tests. */
import { parseMessageRequest, type ContentBlock, type ModelProfile } from '@model-messages/protocol';
import { buildModelPrompt, buildStepCall } from '../src/call-builder/build-model-call.js';
import { editedPrompt, type EditedPrompt } from '../src/call-builder/context-management.js';
import type { ModelCall, ModelPrompt } from '../src/backends/call/model-call.js';

export const TEST_PROFILE: ModelProfile = {
  id: 'm',
  tier: 'mid',
  generation: 'older',
  contextWindow: 200_000,
  maxOutputTokens: 64_000,
};

/** The prompt of a request body; `model` and `max_tokens` are filled in when left out. */
export function promptOf(body: Record<string, unknown>, profile = TEST_PROFILE): ModelPrompt {
  return buildModelPrompt(parseMessageRequest({ model: 'm', max_tokens: 10, ...body }), profile);
}

/**
 * The prompt of a request body once its `context_management` edits are applied, counted at a
 * token per 4 characters of its turns' JSON: a stand-in tokenizer that grows with what is cleared.
 */
export function editedPromptOf(body: Record<string, unknown>, profile = TEST_PROFILE): Promise<EditedPrompt> {
  const request = parseMessageRequest({ model: 'm', max_tokens: 10, ...body });
  const count = async (prompt: ModelPrompt) => Math.ceil(JSON.stringify(prompt.turns).length / 4);
  return editedPrompt(request, buildModelPrompt(request, profile), profile, count);
}

export interface CallSettings {
  turnSoFar?: ContentBlock[];
  step?: number;
  outputBudget?: number;
  fault?: string;
  profile?: ModelProfile;
}

/** Step `step` of a request body's turn. */
export function callOf(body: Record<string, unknown>, settings: CallSettings = {}): ModelCall {
  const request = parseMessageRequest({ model: 'm', max_tokens: 10, ...body });
  return buildStepCall(buildModelPrompt(request, settings.profile ?? TEST_PROFILE), request, {
    turnSoFar: settings.turnSoFar ?? [],
    step: settings.step ?? 0,
    outputBudget: settings.outputBudget ?? request.max_tokens,
    fault: settings.fault,
  });
}
