/**
 * What backends and the agent loop produce: the content-level part of the wire stream, with
 * no indices and no message framing (the encoder adds both). Keeping parts this close to the
 * wire events means one assembler folds either of them into content blocks.
 */
import type { ContentBlock, ContentBlockDelta, ServerToolUse, StopReason } from '@model-messages/protocol';

export type StreamPart =
  /** Opens a block. text/thinking/tool_use start empty; a server tool result block starts whole. */
  | { type: 'block-start'; block: ContentBlock }
  | { type: 'block-delta'; delta: ContentBlockDelta }
  | { type: 'block-stop' }
  /** Output tokens spent so far in this backend step (cumulative within the step). */
  | { type: 'output-tokens'; count: number }
  /**
   * The prompt's tokens as the engine itself counted them (its usage), where that beats the
   * up-front count mms made (an estimate for some engines), split as the public API splits
   * them: `count` the tokens newly evaluated (`input_tokens`), `cacheRead` those the engine
   * took from its cache of an earlier prompt (`cache_read_input_tokens`), `cacheCreation` those
   * it evaluated and kept for later requests (`cache_creation_input_tokens`); the whole prompt
   * is their sum. It arrives after message_start, so it reaches the final usage (message_delta
   * and the JSON reply) only. Only the turn's first step reports it: later steps' prompts hold
   * the turn's own output too. A backend that knows it before generating (llama.cpp; a Messages
   * upstream, from its message_start) sends it with its first output as well, so that a stream its client cuts is recorded with it (the
   * access log, the metrics: issue 32); the last one sent counts.
   */
  | { type: 'input-tokens'; count: number; cacheRead?: number; cacheCreation?: number }
  /**
   * What the turn's compaction call took (issue 34): its prompt and its summary's tokens, which
   * `usage.iterations` reports apart from the message's own, as the public API does.
   */
  | { type: 'compaction-usage'; inputTokens: number; outputTokens: number; cacheRead: number; cacheCreation: number }
  /** Server tool requests run so far in this turn (the agent loop counts them). */
  | { type: 'server-tool-usage'; usage: ServerToolUse }
  /**
   * How one call the model made came to be a valid block (issue 35), for the access log and the
   * metrics, never the wire: sent by a backend that checks its calls, just before the call's
   * block-stop (or before the error when it failed).
   */
  | { type: 'tool-call-outcome'; outcome: ToolCallOutcome }
  /** The step's end. Always the last part of a backend step. */
  | { type: 'finish'; stopReason: StopReason; stopSequence: string | null };

/**
 * How a model's tool call became its block (issue 35): `clean`, as the engine gave it;
 * `recovered_from_text`, a call the engine left in the text in the model's own syntax;
 * `repaired`, input that failed its check and was generated again; `failed`, input that failed
 * once more, answered with a 502.
 */
export type ToolCallOutcome = 'clean' | 'recovered_from_text' | 'repaired' | 'failed';

export const TOOL_CALL_OUTCOMES: readonly ToolCallOutcome[] = ['clean', 'recovered_from_text', 'repaired', 'failed'];
