/**
 * What backends and the agent loop produce: the content-level part of the wire stream, with
 * no indices and no message framing (the encoder adds both). Keeping parts this close to the
 * wire events means one assembler folds either of them into content blocks.
 */
import type { ContentBlock, ContentBlockDelta, StopReason } from '@model-messages/protocol';

export type StreamPart =
  /** Opens a block. text/thinking/tool_use start empty; a server tool result block starts whole. */
  | { type: 'block-start'; block: ContentBlock }
  | { type: 'block-delta'; delta: ContentBlockDelta }
  | { type: 'block-stop' }
  /** Output tokens spent so far in this backend step (cumulative within the step). */
  | { type: 'output-tokens'; count: number }
  /**
   * The prompt's tokens as the engine itself counted them (its usage), where that beats the
   * up-front count mms made (an estimate for some engines). It arrives after message_start,
   * so it reaches the final usage (message_delta and the JSON reply) only. Only the turn's
   * first step reports it: later steps' prompts hold the turn's own output too.
   *
   * An engine that keeps prompt prefixes splits the prompt as the Messages API does: `count`
   * the tokens evaluated for this request (input_tokens), `cacheRead` those taken from a kept
   * prefix (cache_read_input_tokens), `cacheCreation` those evaluated up to the request's last
   * cache_control breakpoint and kept from now on (cache_creation_input_tokens), outside
   * `count`; the three add up to the prompt.
   */
  | { type: 'input-tokens'; count: number; cacheRead?: number; cacheCreation?: number }
  /** Server tool requests run so far in this turn (the agent loop counts them). */
  | { type: 'server-tool-usage'; webSearchRequests: number; webFetchRequests: number }
  /** The step's end. Always the last part of a backend step. */
  | { type: 'finish'; stopReason: StopReason; stopSequence: string | null };
