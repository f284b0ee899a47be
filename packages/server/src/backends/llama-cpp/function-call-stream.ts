/**
 * node-llama-cpp's own function calls (tool_choice auto, the model's chat format), read as their
 * parameters are generated (its `onFunctionCallParamsChunk`), so that a call's input streams as
 * every backend streams it and a call cut by max_tokens is kept (issue 32; node-llama-cpp's
 * response lists only the calls it finished).
 *
 * A call of a tool without `strict` streams as it comes: its output check (call/output-check.ts:
 * an object, every number in the double range) runs once it is whole, and a failure is then a
 * 502, as for a call any engine guided. A strict tool's call is held until checked: node-llama-cpp
 * holds it to a grammar of its own reading of the schema, which can be wider than the schema (it
 * follows only `#/$defs/` references), so a failed input is generated again under mms's grammar,
 * which the caller must not have seen the first one of. Calls after a held one are held too, so
 * that the blocks keep the model's order.
 */
import type { LlamaChatResponseFunctionCallParamsChunk } from 'node-llama-cpp';
import type { OfferedTool } from '../call/model-call.js';
import type { ResponseEmitter } from './response-emitter.js';

export interface FunctionCallRecord {
  /** The offered tool of that name; undefined for a name the request did not offer. */
  tool: OfferedTool | undefined;
  name: string;
  /** Its parameters' JSON as generated so far, without node-llama-cpp's end-of-parameters newlines. */
  json: string;
  /** Its block was opened and its input streamed as it came. */
  streamed: boolean;
}

export class FunctionCallStream {
  /** Every call begun, by node-llama-cpp's call index. */
  readonly calls: FunctionCallRecord[] = [];
  private holding = false;
  /**
   * Whitespace at the end of what came, held until more JSON follows: node-llama-cpp ends each
   * call's parameters with four newlines (its grammar's stop trigger), which are no part of them.
   */
  private heldSpace = '';

  constructor(
    private readonly emitter: ResponseEmitter,
    private readonly tools: readonly OfferedTool[],
  ) {}

  paramsChunk(chunk: LlamaChatResponseFunctionCallParamsChunk): void {
    const call = this.calls[chunk.callIndex] ?? this.begin(chunk);
    const text = this.heldSpace + chunk.paramsChunk;
    const json = call.json === '' ? text.trimStart() : text;
    const kept = json.trimEnd();
    this.heldSpace = chunk.done ? '' : json.slice(kept.length);
    call.json += kept;
    if (!call.streamed) return;
    this.emitter.inputDelta(kept);
    if (chunk.done) this.emitter.close();
  }

  private begin(chunk: LlamaChatResponseFunctionCallParamsChunk): FunctionCallRecord {
    const tool = this.tools.find((offered) => offered.name === chunk.functionName);
    const streamed = !this.holding && tool !== undefined && !tool.strict;
    this.holding ||= !streamed;
    const call: FunctionCallRecord = { tool, name: chunk.functionName, json: '', streamed };
    this.calls[chunk.callIndex] = call;
    this.heldSpace = '';
    if (streamed) this.emitter.startCall(tool);
    return call;
  }
}
