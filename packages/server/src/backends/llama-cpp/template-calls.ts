/**
 * The calls the model opens in its own chat format while it may call tools itself (tool_choice
 * auto; issue 35). node-llama-cpp finds a call's opening in the model's output (Qwen's
 * `<tool_call>`, Llama 3.1's `<function=`, ...) and holds the name to the offered tools; it is
 * given the tools by name only (generation-plan.ts), so its function calling stops there, and the
 * input is generated here under the tool's own grammar (call-input.ts) rather than under
 * node-llama-cpp's, which writes every declared property (it has no optional ones), reads `anyOf`
 * as null and leaves out most keywords. So the call the model chose to make, not only a strict or
 * forced one, carries input that is valid against its schema.
 *
 * Each step of the loop is one LlamaChat generation after the history and what the turn wrote
 * since (continued-chat-wrapper.ts): the input after the call's opening, then, where the chat
 * format has parallel calls, the turn goes on after the call's closing, free: more calls, each a
 * block of its own, or text, or its end.
 */
import {
  LlamaText,
  type ChatModelFunctions,
  type ChatWrapper,
  type LlamaChatResponse,
  type LlamaGrammar,
} from 'node-llama-cpp';
import type { OfferedTool } from '../call/model-call.js';
import { notOfferedError } from '../call/tool-calls.js';
import { CallInput, type InputSettling } from './call-input.js';
import type { CallSyntax } from './call-syntax.js';
import type { ResponseEmitter } from './response-emitter.js';

/** A generation that may have stopped at a call's name (LlamaChat given the tools by name). */
export type CallingResponse = LlamaChatResponse<ChatModelFunctions>;

/** One generation of the turn after `tail`: free (text and calls opened), or a call's input under its grammar. */
export type Continue = (tail: LlamaText, phase: ContinuedPhase) => Promise<CallingResponse>;

export type ContinuedPhase = { kind: 'free' } | { kind: 'input'; grammar: LlamaGrammar; input: CallInput };

export interface TemplateCallContext {
  tools: readonly OfferedTool[];
  syntax: CallSyntax;
  chatWrapper: ChatWrapper;
  emitter: ResponseEmitter;
  settling: InputSettling;
  /** At most one call (`disable_parallel_tool_use`). */
  singleCall: boolean;
  /** The grammar of a tool's input, and whether it is exactly the schema. */
  guideFor(tool: OfferedTool): Promise<{ grammar: LlamaGrammar; exact: boolean }>;
  continueTurn: Continue;
}

export interface TemplateCallsResult {
  /** The last generation: its stop reason is the turn's. */
  last: CallingResponse;
  /** At least one call became a block. */
  called: boolean;
}

/**
 * Goes on from `opened`, a generation that stopped once a call's name was written, through each
 * call the model makes, until the turn ends or a generation stops for another reason.
 */
export async function generateTemplateCalls(
  opened: CallingResponse,
  context: TemplateCallContext,
): Promise<TemplateCallsResult> {
  const { syntax, emitter } = context;
  let tail = LlamaText([]);
  let last = opened;
  let called = false;
  for (;;) {
    const name = last.functionCalls?.[0]?.functionName;
    if (last.metadata.stopReason !== 'functionCalls' || name === undefined) return { last, called };
    // node-llama-cpp held the name to the functions it was given, which are the offered tools.
    const tool = context.tools.find((offered) => offered.name === name);
    if (!tool) throw notOfferedError(name);
    emitter.close();
    const guide = await context.guideFor(tool);
    const input = new CallInput(emitter, tool, guide.exact);
    const opening = LlamaText([tail, syntax.opening(name)]);
    // node-llama-cpp reads a maxTokens of 0 as no limit: a budget spent on the name cuts the call as it opened.
    last =
      context.settling.remaining() > 0
        ? await context.continueTurn(opening, { kind: 'input', grammar: guide.grammar, input })
        : { ...last, metadata: { stopReason: 'maxTokens' } };
    const truncated = last.metadata.stopReason === 'maxTokens';
    const json = await input.settle(truncated, context.settling);
    called ||= !truncated;
    if (truncated || !syntax.parallel || context.singleCall || context.settling.remaining() <= 0)
      return { last, called };
    tail = LlamaText([opening, json, syntax.closing(name)]);
    last = await context.continueTurn(tail, { kind: 'free' });
    // What the model wrote after the call, before it ended or opened the next one.
    tail = LlamaText([tail, context.chatWrapper.generateModelResponseText(last.fullResponse)]);
  }
}
