/**
 * The arms of bench/gateway.ts as the load generator sees them: the request each takes (Messages
 * to mms and the gateways that translate, chat completions to the engine and the passthroughs),
 * and the one checked request that makes sure an arm answers before it is measured.
 */
import type { Arm, Mode } from './measure.js';

export const API_KEY = 'bench-key-123456';
export const MODEL_ID = 'bench';
const PROMPT = 'Summarize the benchmark in one short sentence please.';
/** Words of the fake engine's recorded reply (packages/testing/fixtures/openai-engines/vllm/text.json). */
const REPLY_WORDS = 'Paris is';

const MESSAGES_HEADERS = {
  'x-api-key': API_KEY,
  'anthropic-version': '2023-06-01',
  'content-type': 'application/json',
};

function messagesBody(mode: Mode): string {
  return JSON.stringify({
    model: MODEL_ID,
    max_tokens: 64,
    messages: [{ role: 'user', content: PROMPT }],
    ...(mode === 'stream' ? { stream: true } : {}),
  });
}

function chatBody(engineModel: string, mode: Mode): string {
  return JSON.stringify({
    model: engineModel,
    max_tokens: 64,
    messages: [{ role: 'user', content: PROMPT }],
    ...(mode === 'stream' ? { stream: true } : {}),
  });
}

export function messagesArm(name: string, label: string, server: { port: number; pid: number }): Arm {
  const port = server.port;
  return {
    name,
    label,
    request: 'Messages',
    pid: server.pid,
    target: (mode) => ({
      name,
      url: `http://127.0.0.1:${port}/v1/messages`,
      headers: MESSAGES_HEADERS,
      body: messagesBody(mode),
    }),
  };
}

export function chatArm(
  name: string,
  label: string,
  server: { port: number; pid: number },
  engineModel: string,
  extraHeaders: Record<string, string>,
): Arm {
  const port = server.port;
  return {
    name,
    label,
    request: 'chat completions',
    pid: server.pid,
    target: (mode) => ({
      name,
      url: `http://127.0.0.1:${port}/v1/chat/completions`,
      headers: { 'content-type': 'application/json', ...extraHeaders },
      body: chatBody(engineModel, mode),
    }),
  };
}

/** One request through the arm, checked, so that the load measures answers and not errors. */
export async function checkArm(arm: Arm, mode: Mode): Promise<void> {
  const target = arm.target(mode);
  const response = await fetch(target.url, {
    method: 'POST',
    headers: target.headers,
    body: target.body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  const problem =
    response.status !== 200
      ? `answered ${response.status}`
      : mode === 'stream' && !contentType.includes('text/event-stream')
        ? `answered ${contentType}, not an event stream`
        : !text.includes(REPLY_WORDS)
          ? "answered without the engine's reply"
          : mode === 'stream' && !text.includes(arm.request === 'Messages' ? 'message_stop' : '[DONE]')
            ? 'answered a stream without its end'
            : undefined;
  if (problem !== undefined) throw new Error(`${arm.label} (${mode}) ${problem}: ${text.slice(0, 300)}`);
}
