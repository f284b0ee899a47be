/**
 * The tool calls of a step that were held back, or streamed under the engine's guidance, made
 * good before the step ends (issue 35): each input checked once whole, a failure repaired once
 * (the backend asks the engine for that input alone), and each call's outcome counted (`clean`,
 * `recovered_from_text`, `repaired`, `failed`). A call that fails for good is a FailedCall, so
 * that the backend counts it before its 502 (`model_output_invalid`).
 */
import { ServiceError } from '@model-messages/protocol';
import type { OfferedTool } from '../call/model-call.js';
import {
  checkToolInput,
  checkToolValue,
  settleOutput,
  toolInputSubject,
  type Checked,
  type OutputCheck,
} from '../call/output-check.js';
import { notOfferedError, toolCallBlock } from '../call/tool-calls.js';
import type { StreamPart, ToolCallOutcome } from '../../streaming/stream-part.js';
import type { CallOrigin, ChunkSummary, OpenCall, PendingCall } from './chunk-summary.js';
import { plannedTool, type ChatPlan } from './output-plan.js';

/** What settling needs of the backend and its step. */
export interface CallSettling {
  /** The tool's input once more, from the engine, after `violation` (the backend's repair). */
  repair(tool: OfferedTool, violation: string): Promise<string>;
  /** Output tokens the step has left. */
  remaining(): number;
  /** Says that an input is being generated again (the backend's report). */
  regenerated(): void;
}

/** How a held call that passed its check unrepaired became its block, by where it came from. */
const ORIGIN_OUTCOMES: Record<CallOrigin, ToolCallOutcome> = {
  engine: 'clean',
  text: 'recovered_from_text',
  // The engine ran it into the call before: split off, it was mended.
  'run-on': 'repaired',
};

/**
 * The held parts of the step in order, each held call as its block (or its block's end), after
 * the outcomes of the calls streamed under guidance. Throws a FailedCall for a call that failed.
 */
export async function settledHeldParts(
  summary: ChunkSummary,
  plan: ChatPlan,
  truncated: boolean,
  settling: CallSettling,
): Promise<StreamPart[]> {
  const parts: StreamPart[] = truncated ? [] : await checkStreamedCalls(summary, plan);
  for (const item of summary.held) {
    if (item.type === 'pending-call') parts.push(...(await release(item, settling, truncated)));
    else if (item.type === 'open-call') parts.push(...(await finishOpenCall(item, settling)));
    else parts.push(item);
  }
  return parts;
}

/** A call's input that failed for good: its 502, once the stream has counted the call as failed. */
export class FailedCall extends Error {
  constructor(readonly error: ServiceError) {
    super(error.message);
  }
}

export function outcomeOf(outcome: ToolCallOutcome): StreamPart {
  return { type: 'tool-call-outcome', outcome };
}

/**
 * Calls the engine guided streamed as they came: checked once whole (a number out of the double
 * range passes any grammar), a failure is a 502 since the caller has seen them. Answers their
 * outcomes.
 */
async function checkStreamedCalls(summary: ChunkSummary, plan: ChatPlan): Promise<StreamPart[]> {
  const outcomes: StreamPart[] = [];
  for (const call of summary.calls) {
    if (call.streaming !== 'guided') continue;
    const tool = plannedTool(plan, call.name);
    await settled(call.arguments, {
      check: (text) => checkToolInput(text, tool),
      subject: toolInputSubject(tool.name),
      where: tool.where,
      held: false,
      remaining: () => 0,
      regenerate: () => Promise.reject(new Error('a streamed call is never generated again')),
    });
    outcomes.push(outcomeOf('clean'));
  }
  return outcomes;
}

/**
 * A held tool call as its block, once its input passed the check (repaired once if it did
 * not). Input cut off by the output budget is passed on as it is, like every backend's: the
 * answer says max_tokens, and the assembler keeps what arrived.
 */
async function release(call: PendingCall, settling: CallSettling, truncated: boolean): Promise<StreamPart[]> {
  const tool = call.tool;
  // Cut before its name came: a call of no tool, nothing to keep.
  if (!tool && truncated && call.name === '') return [];
  if (!tool) throw notOfferedError(call.name);
  if (truncated) return blockParts(tool, call.arguments);
  const result = await settled(
    call.arguments,
    inputCheck(tool, settling, (text) => checkToolInput(text, tool)),
  );
  const outcome = result.regenerated ? 'repaired' : ORIGIN_OUTCOMES[call.origin];
  return blockParts(tool, JSON.stringify(result.value), outcome);
}

/**
 * A call that streamed some of its members and then proved broken (not JSON, cut short, a
 * required field missing): its input is repaired, and the block finished with the members the
 * repair adds to those sent (call/input-members.ts).
 */
async function finishOpenCall(call: OpenCall, settling: CallSettling): Promise<StreamPart[]> {
  const { tool, members } = call;
  const result = await settled(
    members.text,
    inputCheck(tool, settling, (text) => {
      const parsed = checkToolInput(text, tool);
      return parsed.violation !== undefined ? parsed : checkToolValue(members.completed(parsed.value), tool);
    }),
  );
  const completion = members.completion(JSON.parse(result.text) as Record<string, unknown>);
  return [
    { type: 'block-delta', delta: { type: 'input_json_delta', partial_json: completion } },
    outcomeOf('repaired'),
    { type: 'block-stop' },
  ];
}

/** The check of a held call's input, repaired once as the engine's structured output of that input alone. */
function inputCheck(
  tool: OfferedTool,
  settling: CallSettling,
  check: (text: string) => Checked<Record<string, unknown>>,
): OutputCheck<Record<string, unknown>> {
  return {
    check,
    subject: toolInputSubject(tool.name),
    where: tool.where,
    held: true,
    remaining: settling.remaining,
    regenerate: async (_output, violation) => {
      settling.regenerated();
      return { text: await settling.repair(tool, violation), truncated: false };
    },
  };
}

/** The one output check; a failure is a 502 (a FailedCall, so that the stream counts the call first). */
async function settled(
  output: string,
  check: OutputCheck<Record<string, unknown>>,
): Promise<{ text: string; value: Record<string, unknown>; regenerated: boolean }> {
  try {
    const result = await settleOutput(output, check);
    if (result.truncated)
      throw new ServiceError('model_output_invalid', `${check.subject} was cut by max_tokens when it was repaired`);
    return result;
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'model_output_invalid') throw new FailedCall(error);
    throw error;
  }
}

function blockParts(tool: OfferedTool, inputJson: string, outcome?: ToolCallOutcome): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'block-start', block: toolCallBlock(tool) }];
  if (inputJson !== '')
    parts.push({ type: 'block-delta', delta: { type: 'input_json_delta', partial_json: inputJson } });
  if (outcome) parts.push(outcomeOf(outcome));
  parts.push({ type: 'block-stop' });
  return parts;
}
