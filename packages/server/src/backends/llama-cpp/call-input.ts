/**
 * One call's input as the embedded engine generates it under its tool's grammar (issue 35), and
 * how it becomes its block. Under a grammar that is exactly the tool's schema (a strict tool, and
 * a tool without strict whose every keyword the grammar expresses: grammar/compile-mode.ts) the
 * input is valid by construction and streams as it comes. Under a wider grammar it is held,
 * checked against the whole schema once whole, and generated again on a failure, unseen: the
 * caller receives schema-valid input either way.
 */
import type { LlamaChatResponseChunk } from 'node-llama-cpp';
import { ServiceError } from '@model-messages/protocol';
import type { ToolCallOutcome } from '../../streaming/stream-part.js';
import type { OfferedTool } from '../call/model-call.js';
import {
  checkToolInput,
  inputCheckOf,
  settleOutput,
  toolInputSubject,
  type Checked,
  type InputCheck,
  type Regenerated,
} from '../call/output-check.js';
import type { ResponseEmitter } from './response-emitter.js';

/** What settling an input needs of the step: its budget, and how a failed input is generated again. */
export interface InputSettling {
  /** Output tokens the step may still spend. */
  remaining(): number;
  /** A tool's input once more, as a forced call under its grammar, within `maxTokens`. */
  regenerateInput(tool: OfferedTool, maxTokens: number): Promise<Regenerated>;
}

export class CallInput {
  /** The input's JSON as generated so far. */
  json = '';

  constructor(
    private readonly emitter: ResponseEmitter,
    readonly tool: OfferedTool,
    /** The grammar is the schema's own: the input streams as it comes. */
    private readonly exact: boolean,
  ) {
    if (exact) emitter.startCall(tool);
  }

  chunk(chunk: LlamaChatResponseChunk): void {
    this.emitter.countTokens(chunk);
    this.json += chunk.text;
    if (this.exact) this.emitter.inputDelta(chunk.text);
  }

  /**
   * The call's block, once its input is whole (or cut: kept as far as it came, unchecked, as
   * every backend keeps a cut call). Answers the input as the block has it.
   */
  async settle(truncated: boolean, settling: InputSettling): Promise<string> {
    if (truncated) {
      if (this.exact) this.emitter.close();
      else this.emitter.toolCall(this.tool, this.json);
      return this.json;
    }
    // Under an exact grammar only what no grammar holds is left to check (a number out of the
    // double range); under a wider one, the whole schema.
    const against: InputCheck = this.exact ? inputCheckOf(this.tool) : 'schema';
    const { value, outcome } = await settleInput(this.tool, this.json, !this.exact, settling, this.emitter, against);
    const json = JSON.stringify(value);
    if (this.exact) {
      this.emitter.outcome(outcome);
      this.emitter.close();
    } else this.emitter.toolCall(this.tool, json, outcome);
    return this.exact ? this.json : json;
  }
}

/**
 * A call's input through the one output check (call/output-check.ts): one the caller has not
 * seen (`held`) and that fails is generated again as a forced call under the tool's grammar,
 * spending from the same step budget; a failure the caller saw, or a second one, is a 502, its
 * outcome reported first.
 */
export async function settleInput(
  tool: OfferedTool,
  json: string,
  held: boolean,
  settling: InputSettling,
  emitter: ResponseEmitter,
  against: InputCheck = inputCheckOf(tool),
  verdict?: Checked<Record<string, unknown>>,
): Promise<{ value: Record<string, unknown>; outcome: ToolCallOutcome }> {
  try {
    const settled = await settleOutput(
      json,
      {
        check: (text) => checkToolInput(text, tool, against),
        subject: toolInputSubject(tool.name),
        where: tool.where,
        held,
        remaining: () => settling.remaining(),
        regenerate: (_output, _violation, maxTokens) => settling.regenerateInput(tool, maxTokens),
      },
      verdict,
    );
    if (settled.truncated) {
      throw new ServiceError(
        'model_output_invalid',
        `${toolInputSubject(tool.name)} was cut by max_tokens when it was generated again`,
      );
    }
    return { value: settled.value, outcome: settled.regenerated ? 'repaired' : 'clean' };
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'model_output_invalid') emitter.outcome('failed');
    throw error;
  }
}
