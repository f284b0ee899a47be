/**
 * Compaction written by the request's own model, on every backend (context_management
 * `compact_20260112`, issue 34): once the prompt reaches the edit's trigger
 * (call-builder/context-management.ts), the turn first asks the backend for a summary of the
 * whole conversation, with the edit's instructions or ours, as one more call on the request's
 * slot. The reply opens with a `compaction` block that carries the summary, signed
 * (signing/compaction-signature.ts), and the turn goes on from the compacted prompt: the system
 * prompt and tools, then the summary. A summary that cannot be written (no room left in the
 * window, an empty answer) is a compaction block with null content, the public API's failed
 * compaction, and the turn goes on from the prompt as it was.
 *
 * The summary's prompt is the request's with the instructions after it, so an engine that keeps
 * prefixes evaluates only the instructions (docs/backends.md says what each edit costs the cache).
 */
import { ServiceError, type CompactionBlock, type MessageRequest, type ModelProfile } from '@model-messages/protocol';
import type { Backend } from '../backends/backend.js';
import type { ModelPrompt } from '../backends/call/model-call.js';
import type { Cancellation } from '../backends/cancellation.js';
import { buildStepCall } from '../call-builder/build-model-call.js';
import { compactedPrompt, summaryPrompt } from '../call-builder/compaction.js';
import type { CompactionPlan } from '../call-builder/context-management.js';
import type { RequestRecord } from '../observability/request-record.js';
import { endEngineSpan, startEngineSpan } from '../observability/tracing.js';
import { signCompaction } from '../signing/compaction-signature.js';
import type { Signer } from '../signing/signer.js';
import type { StreamPart } from '../streaming/stream-part.js';

/** The longest summary asked for: a few pages, whatever max_tokens the request gave its answer. */
const SUMMARY_MAX_TOKENS = 8_192;
/** Below this the summary is not asked for: it could not say enough to replace a conversation. */
const SUMMARY_MIN_TOKENS = 64;

export interface CompactionInput {
  backend: Backend;
  request: MessageRequest;
  prompt: ModelPrompt;
  model: ModelProfile;
  /** The prompt's tokens, as counted before the turn. */
  inputTokens: number;
  plan: CompactionPlan;
  signer: Signer;
  cancellation: Cancellation;
  record?: RequestRecord;
}

export interface CompactionOutcome {
  block: CompactionBlock;
  /** The block's parts, then what the compaction's call took and the compacted prompt's count. */
  parts: StreamPart[];
  /** The prompt the turn goes on from, and its tokens: the compacted one, or the same on failure. */
  prompt: ModelPrompt;
  inputTokens: number;
}

export async function compactConversation(input: CompactionInput): Promise<CompactionOutcome> {
  const written = await writeSummary(input);
  const summary = written.text.trim();
  const usage: StreamPart = {
    type: 'compaction-usage',
    inputTokens: written.inputTokens,
    outputTokens: written.outputTokens,
    cacheRead: written.cacheRead,
    cacheCreation: written.cacheCreation,
  };
  if (summary === '') {
    const block: CompactionBlock = { type: 'compaction', content: null, encrypted_content: null, signature: null };
    return { block, parts: [...blockParts(block), usage], prompt: input.prompt, inputTokens: input.inputTokens };
  }
  const block: CompactionBlock = {
    type: 'compaction',
    content: summary,
    encrypted_content: null,
    signature: signCompaction(input.signer, summary),
  };
  const prompt = compactedPrompt(input.prompt, summary);
  const inputTokens = await input.backend.countTokens(prompt, 'admission');
  // The message's own prompt from here on: the engine's count at the first step replaces it.
  const counted: StreamPart = { type: 'input-tokens', count: inputTokens };
  return { block, parts: [...blockParts(block), usage, counted], prompt, inputTokens };
}

/** A compaction block on the wire: opened without its summary, which one delta then carries whole. */
function blockParts(block: CompactionBlock): StreamPart[] {
  return [
    { type: 'block-start', block: { ...block, content: null } },
    { type: 'block-delta', delta: { type: 'compaction_delta', content: block.content, encrypted_content: null } },
    { type: 'block-stop' },
  ];
}

interface WrittenSummary {
  text: string;
  inputTokens: number;
  outputTokens: number;
  cacheRead: number;
  cacheCreation: number;
}

/** The model's answer to the summary prompt, as text; '' when there is no room for it. */
async function writeSummary(input: CompactionInput): Promise<WrittenSummary> {
  const written: WrittenSummary = {
    text: '',
    inputTokens: input.inputTokens,
    outputTokens: 0,
    cacheRead: 0,
    cacheCreation: 0,
  };
  const prompt = summaryPrompt(input.prompt, input.plan.instructions);
  try {
    written.inputTokens = await input.backend.countTokens(prompt, 'admission');
  } catch (error) {
    // The instructions take the prompt past what the model can hold: no room for a summary.
    if (error instanceof ServiceError && error.code === 'prompt_too_long') return written;
    throw error;
  }
  const room = input.model.contextWindow - written.inputTokens;
  const budget = Math.min(SUMMARY_MAX_TOKENS, input.model.maxOutputTokens, room);
  if (budget < SUMMARY_MIN_TOKENS) return written;
  const step = buildStepCall(prompt, input.request, {
    turnSoFar: [],
    step: 0,
    outputBudget: budget,
    // The caller's injected faults are for its answer, not for the service's own call.
    fault: undefined,
  });
  // The request's stop sequences end its answer; they must not cut the summary short.
  const call = { ...step, sampling: { ...step.sampling, stopSequences: [] }, streamed: false };
  const span = startEngineSpan(input.record, input.model.id, call, written.inputTokens);
  let failure: unknown;
  let inText = false;
  try {
    for await (const batch of input.backend.stream(call, input.cancellation))
      for (const part of batch) {
        if (part.type === 'block-start') inText = part.block.type === 'text';
        else if (part.type === 'block-delta' && inText && part.delta.type === 'text_delta')
          written.text += part.delta.text;
        else if (part.type === 'output-tokens') written.outputTokens = part.count;
        else if (part.type === 'input-tokens') {
          written.inputTokens = part.count;
          written.cacheRead = part.cacheRead ?? 0;
          written.cacheCreation = part.cacheCreation ?? 0;
        }
      }
  } catch (error) {
    // A prompt the engine finds too long for a summary after it is a compaction that failed.
    if (error instanceof ServiceError && error.code === 'prompt_too_long') return { ...written, text: '' };
    failure = error;
    throw error;
  } finally {
    if (span) endEngineSpan(span, input.backend, input.model.id, undefined, written.outputTokens, failure);
  }
  return written;
}
