/**
 * One backend's prompt count: the engine's tokenizer endpoint where it has one, the estimate
 * otherwise. Those endpoints sit outside `/v1` (vLLM's and SGLang's `/tokenize`, llama.cpp's
 * `/apply-template`), so a deployment can lack them while chat completions work: a router in
 * front of a vLLM pool that forwards only `/v1/*`, an older llama.cpp without
 * `/apply-template`. Counting is a means, not the request's work, so a failure there is never
 * the request's failure: the count falls back to the estimate, the log says so once per
 * backend, and the endpoint is left alone for `TOKENIZER_RETRY_MS` before it is asked again
 * (rather than costing every request a failed round trip). Whether the engine itself works is
 * for the generation request to say, which is also where a fallback list gets its verdict.
 */
import { ServiceError } from '@mms/protocol';
import type { ChatCompletionRequest } from './chat-types.js';
import type { EngineClient } from './engine-client.js';
import type { EngineProfile } from './engine-profiles.js';
import { countPromptTokens, estimateTokens } from './token-counting.js';

/** How long a failed tokenizer endpoint is left alone before one request asks it again. */
export const TOKENIZER_RETRY_MS = 60_000;

export interface PromptTokenCounterOptions {
  client: EngineClient;
  profile: EngineProfile;
  mode: 'engine' | 'estimate';
  /** Names the backend in the warning. */
  where: string;
  warn: (line: string) => void;
  now: () => number;
}

export class PromptTokenCounter {
  /** Until then the tokenizer endpoint is not asked (it failed recently). */
  private askAgainAt = 0;
  private warned = false;

  constructor(private readonly options: PromptTokenCounterOptions) {}

  async count(body: ChatCompletionRequest, signal?: AbortSignal): Promise<number> {
    const { client, profile, mode, now } = this.options;
    if (mode === 'estimate' || profile.tokenizer === 'estimate' || now() < this.askAgainAt) return estimateTokens(body);
    try {
      return await countPromptTokens(client, profile, body, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      this.askAgainAt = now() + TOKENIZER_RETRY_MS;
      this.warnOnce(error);
      return estimateTokens(body);
    }
  }

  private warnOnce(error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    const reason = error instanceof ServiceError ? error.message : String(error);
    this.options.warn(
      `${this.options.where}: the engine's tokenizer endpoint failed (${reason}); prompts are counted by estimate (4 characters per token) ` +
        `and the endpoint is tried again after ${TOKENIZER_RETRY_MS / 1000} s. Set "countTokens": "estimate" to stop asking it. This is logged once.`,
    );
  }
}
