import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkMessageRules, parseMessageRequest, ServiceError, type ModelProfile } from '@model-messages/protocol';
import { hostFunctionsFor } from '../src/tools/code-execution/host-functions.js';

const model: ModelProfile = {
  id: 'mid',
  tier: 'mid',
  generation: 'newer',
  contextWindow: 200_000,
  maxOutputTokens: 4_096,
};
const strictTool = {
  name: 'record',
  description: 'Record the answer.',
  strict: true,
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
};

const codeExecution = { type: 'code_execution_20260521', name: 'code_execution' };

function requestWith(tools: Array<Record<string, unknown>>) {
  return parseMessageRequest({ model: 'mid', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], tools });
}

function refusedByRule3(tool: Record<string, unknown>): boolean {
  try {
    checkMessageRules(requestWith([codeExecution, tool, strictTool]), model);
    return false;
  } catch (error) {
    if (error instanceof ServiceError && /^Rule 3/.test(error.message)) return true;
    throw error;
  }
}

test('code may call a web tool exactly when rule 3 counts it eligible for programmatic calling', () => {
  const variants: Array<[string, string[] | undefined, boolean]> = [
    ['web_search', undefined, true],
    ['web_search', ['direct'], false],
    ['web_search', ['code_execution_20260521'], true],
    ['web_fetch', ['direct', 'code_execution_20260521'], true],
    ['web_fetch', ['direct'], false],
  ];
  for (const [name, callers, callable] of variants) {
    const tool = {
      type: name === 'web_search' ? 'web_search_20260209' : 'web_fetch_20260209',
      name,
      ...(callers ? { allowed_callers: callers } : {}),
    };
    const offered = hostFunctionsFor(requestWith([codeExecution, tool])).find((candidate) => candidate.name === name);
    const label = `${name} allowed_callers ${JSON.stringify(callers)}`;
    assert.equal(offered?.refusal === undefined, callable, `callable from code: ${label}`);
    assert.equal(refusedByRule3(tool), callable, `refused beside a strict tool: ${label}`);
  }
});
