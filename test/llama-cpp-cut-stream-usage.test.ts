/**
 * What a stream its client cut is recorded with, on the embedded engine (issue 32): the access
 * log, the metrics and the key's limits read the request's usage as it stood when the client
 * left. The engine knows how much of the prompt it took from the prefix it held before the first
 * output token, so a stream cut after that token is recorded with that split (cache reads), as
 * the same request finished is, and not as a whole prompt evaluated anew.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, readStreamUntil, startService, tinyLlamaModel, type RunningService } from '@model-messages/testing';

/** Each line the service logged, parsed. */
const lines: Array<Record<string, unknown>> = [];
let service: RunningService;

before(async () => {
  const model = await tinyLlamaModel();
  service = await startService(
    {
      models: [
        {
          id: 'tiny',
          tier: 'mid',
          generation: 'newer',
          contextWindow: 2048,
          maxOutputTokens: 512,
          // One sequence: the second request finds the first one's prompt held in it.
          backend: { type: 'llama-cpp', model, threads: 1, concurrency: 1 },
        },
      ],
    },
    process.cwd(),
    {
      log: {
        level: 'info',
        destination: {
          write(text: string) {
            for (const line of text.split('\n').filter(Boolean))
              lines.push(JSON.parse(line) as Record<string, unknown>);
          },
        },
      },
    },
  );
});
after(() => service.close());

const SYSTEM = 'You keep the logbook of a lighthouse, and answer in full sentences. '.repeat(8);
const first = [{ role: 'user', content: 'What did the keeper write on Monday?' }];
const second = [...first, { role: 'assistant', content: 'A calm sea.' }, { role: 'user', content: 'And on Tuesday?' }];

/** The access line of the request `response` answered, once it is written. */
async function accessLine(response: Response): Promise<Record<string, unknown>> {
  const requestId = response.headers.get('request-id');
  for (let waited = 0; waited < 10_000; waited += 10) {
    const line = lines.find((candidate) => candidate.msg === 'request' && candidate.reqId === requestId);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no access line for ${requestId}`);
}

async function promptTokens(messages: unknown[]): Promise<number> {
  const response = await postJson(service, '/v1/messages/count_tokens', { model: 'tiny', system: SYSTEM, messages });
  return ((await response.json()) as { input_tokens: number }).input_tokens;
}

test("a stream cut after its first output is logged with the engine's split of the prompt: the reused prefix as cache reads", async () => {
  const warm = await postJson(service, '/v1/messages', {
    model: 'tiny',
    max_tokens: 4,
    temperature: 0,
    system: SYSTEM,
    messages: first,
  });
  assert.equal(warm.status, 200);
  await warm.json();

  const controller = new AbortController();
  const response = await fetch(`${service.baseURL}/v1/messages`, {
    method: 'POST',
    headers: service.headers,
    body: JSON.stringify({
      model: 'tiny',
      max_tokens: 400,
      temperature: 0,
      stream: true,
      system: SYSTEM,
      messages: second,
    }),
    signal: controller.signal,
  });
  await readStreamUntil(response.body!.getReader(), /content_block_delta/);
  controller.abort();

  const line = await accessLine(response);
  assert.equal(line.disconnected, true);
  const prompt = await promptTokens(second);
  const reused = line.cacheReadInputTokens as number;
  assert.ok(
    reused >= (await promptTokens(first)) - 8,
    `the first prompt is reused but for the template's last tokens: ${JSON.stringify(line)}`,
  );
  assert.equal(
    (line.inputTokens as number) + reused + (line.cacheCreationInputTokens as number),
    prompt,
    JSON.stringify(line),
  );
});
