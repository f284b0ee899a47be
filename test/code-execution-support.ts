/**
 * What the code execution tests share: the tool as a request offers it, a request that offers
 * it, and the one result block a reply carries.
 */
import assert from 'node:assert/strict';
import { postJson, type RunningService } from '@model-messages/testing';

export const CODE_TOOL = { type: 'code_execution_20260521', name: 'code_execution' };

export interface CodeBlock {
  type: string;
  name?: string;
  text?: string;
  content?: {
    type: string;
    stdout?: string;
    stderr?: string;
    return_code?: number;
    error_code?: string;
    content?: unknown[];
  };
}

export interface CodeReply {
  content: CodeBlock[];
  stop_reason: string;
  usage: { input_tokens: number; server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null };
}

/** One user turn to the `mid` model with `tools` (the code tool alone by default); the reply must be a 200. */
export async function askWithTools(
  service: RunningService,
  text: string,
  maxTokens: number,
  tools: unknown[] = [CODE_TOOL],
): Promise<CodeReply> {
  const response = await postJson(service, '/v1/messages', {
    model: 'mid',
    max_tokens: maxTokens,
    messages: [{ role: 'user', content: text }],
    tools,
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as CodeReply;
}

/** The content of the reply's code execution result block, which must be there. */
export function executionResult(reply: CodeReply): NonNullable<CodeBlock['content']> {
  const block = reply.content.find((candidate) => candidate.type === 'code_execution_tool_result');
  assert.ok(block?.content, JSON.stringify(reply.content));
  return block.content;
}
