/**
 * Requests of the prefix benchmarks (bench/llama-prefix-reuse.ts, bench/llama-prefix-copy.ts): a
 * long system prompt of varied words, and one streamed turn timed to its first content delta.
 */
import type { Token } from 'node-llama-cpp';
import { REQUEST_HEADERS, type ServiceProcess } from './service-client.js';
import { MODEL_ID } from './shared-settings.js';

const WORDS = (
  'keeper lamp storm tide harbour beacon rope ledger signal reef gull mast anchor chart compass ' +
  'lantern shutter wick oil glass tower stair rock current fog horn vessel hull keel sail'
).split(' ');

/** A system prompt of about `tokens` tokens in the model's tokenizer: numbered rules of varied words. */
export function systemPrompt(tokens: number, tokenize: (text: string) => Token[]): string {
  const rules: string[] = [];
  let text = '';
  for (let rule = 1; tokenize(text).length < tokens; rule += 1) {
    const words = Array.from({ length: 12 }, (_, index) => WORDS[(rule * 7 + index * 13) % WORDS.length]);
    rules.push(`Rule ${rule}: ${words.join(' ')}.`);
    text = rules.join('\n');
  }
  return text;
}

export type Message = { role: 'user' | 'assistant'; content: string };

/** One streamed turn: the time to the first content delta (`onFirstToken` is called then), and the reply's text. */
export async function streamTurn(
  service: ServiceProcess,
  system: string,
  messages: Message[],
  maxTokens: number,
  onFirstToken?: () => void,
): Promise<{ firstTokenMilliseconds: number; text: string; usage: unknown }> {
  const started = performance.now();
  const response = await fetch(service.url, {
    method: 'POST',
    headers: REQUEST_HEADERS,
    body: JSON.stringify({ model: MODEL_ID, max_tokens: maxTokens, temperature: 0, stream: true, system, messages }),
  });
  if (response.status !== 200) throw new Error(`the service answered ${response.status}: ${await response.text()}`);
  let firstTokenMilliseconds: number | undefined;
  let body = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) {
    body += decoder.decode(chunk, { stream: true });
    if (firstTokenMilliseconds === undefined && body.includes('event: content_block_delta')) {
      firstTokenMilliseconds = performance.now() - started;
      onFirstToken?.();
    }
  }
  const events = body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, any>);
  const text = events
    .filter((event) => event.type === 'content_block_delta' && event.delta.type === 'text_delta')
    .map((event) => event.delta.text as string)
    .join('');
  const usage = events.find((event) => event.type === 'message_delta')?.usage;
  return { firstTokenMilliseconds: firstTokenMilliseconds ?? performance.now() - started, text, usage };
}
