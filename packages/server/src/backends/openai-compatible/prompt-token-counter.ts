/**
 * One backend's prompt count: the engine's tokenizer endpoint where it has one, the estimate
 * otherwise. Those endpoints sit outside `/v1` (vLLM's and SGLang's `/tokenize`, llama.cpp's
 * `/apply-template`), so a deployment can lack them while chat completions work: a router in
 * front of a vLLM pool that forwards only `/v1/*`, an older llama.cpp without
 * `/apply-template`. An endpoint that cannot count (token-counting.ts: not served, or refusing
 * the request's shape) is not the request's failure: the count falls back to the estimate, the
 * log says so, and a missing endpoint is left alone for `TOKENIZER_RETRY_MS` before it is asked
 * again (rather than costing every request a failed round trip).
 *
 * An engine that fails (a time limit, a refused connection, a 5xx) fails the count too, as it
 * would fail the generation: estimating and then asking the same hung engine to generate would
 * cost the caller the first-byte limit twice, and a fallback list moves on at once instead.
 *
 * A message request is not counted by the endpoint (`countTokens: "engine"`, the default) unless
 * its prompt could come near the context window: the endpoint is a second round trip before
 * every generation (about 0.6 ms at p50 on loopback, more than the rest of mms's work), and the
 * engine reports the exact count in its usage anyway, which the final usage carries. Its
 * `message_start` has the estimate. A prompt whose upper bound (token-counting.ts) passes the
 * window is counted exactly, so that prompt_too_long is decided on the exact count.
 */
import type { TokenCountPurpose } from '../backend.js';
import type { ChatCompletionRequest } from './chat-types.js';
import type { EngineClient } from './engine-client.js';
import type { EngineProfile } from './engine-profiles.js';
import type { CountTokensMode } from './openai-compatible-config.js';
import { countPromptTokens, estimateTokens, promptSize, TokenizerUnavailable } from './token-counting.js';

/** How long a missing tokenizer endpoint is left alone before one request asks it again. */
export const TOKENIZER_RETRY_MS = 60_000;

export interface PromptTokenCounterOptions {
  client: EngineClient;
  profile: EngineProfile;
  mode: CountTokensMode;
  /** Names the backend in the warning. */
  where: string;
  warn: (line: string) => void;
  now: () => number;
}

export class PromptTokenCounter {
  /** Until then the tokenizer endpoint is not asked (it was missing recently). */
  private askAgainAt = 0;
  /**
   * The endpoint's loss was logged and it has not counted since. Cleared when it counts again,
   * so that losing it later is logged again; at most once per TOKENIZER_RETRY_MS, since a
   * missing endpoint is not asked sooner.
   */
  private warned = false;

  constructor(private readonly options: PromptTokenCounterOptions) {}

  /** `contextWindow`: the model's, which an admission count may not come near with an estimate. */
  async count(body: ChatCompletionRequest, purpose: TokenCountPurpose, contextWindow: number): Promise<number> {
    const { client, mode, now } = this.options;
    const tokenizer = this.options.profile.tokenizer;
    if (mode === 'estimate' || tokenizer === 'estimate' || now() < this.askAgainAt) return estimateTokens(body);
    if (purpose === 'admission' && mode === 'engine') {
      const size = promptSize(body);
      if (size.upperBound <= contextWindow) return size.estimate;
    }
    try {
      const counted = await countPromptTokens(client, tokenizer, body);
      this.warned = false;
      return counted;
    } catch (error) {
      if (!(error instanceof TokenizerUnavailable)) throw error;
      if (error.lasting) {
        this.askAgainAt = now() + TOKENIZER_RETRY_MS;
        this.warnOnce(error);
      }
      return estimateTokens(body);
    }
  }

  /**
   * Whether the engine's tokenizer counts this backend's prompts (they may fall back on the
   * estimate meanwhile): then a final usage the engine did not give is counted by it.
   */
  get countsExactly(): boolean {
    return this.options.mode !== 'estimate' && this.options.profile.tokenizer !== 'estimate';
  }

  private warnOnce(error: TokenizerUnavailable): void {
    if (this.warned) return;
    this.warned = true;
    this.options.warn(
      `${this.options.where}: the engine's tokenizer endpoint cannot count (${error.message}); prompts are counted by estimate (4 characters per token) ` +
        `and the endpoint is tried again after ${TOKENIZER_RETRY_MS / 1000} s. Set "countTokens": "estimate" to stop asking it. ` +
        'Logged again only if the endpoint counts and is then lost again.',
    );
  }
}
