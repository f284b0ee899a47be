/**
 * A deterministic backend with no model, for this project's tests and for users who test their
 * own clients: it echoes, follows a script, and injects faults on request when configured to.
 */
import type { Backend, BackendReadiness } from '../backend.js';
import { thinkingBudget } from '../call/thinking-budget.js';
import type { ModelCall, ModelPrompt } from '../call/model-call.js';
import type { Cancellation } from '../cancellation.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { lastUserText, stepsSinceUserText } from './conversation-text.js';
import { planDefaultAnswer } from './default-answer.js';
import { parseFault, reshapeBlocks, throwHttpFault } from './faults.js';
import { loadScript, scriptedStep, type PlannedBlock, type ScriptEntry } from './script-file.js';
import type { ScriptedBackendConfig } from './scripted-config.js';
import { emitBlocks } from './token-emitter.js';
import { countPromptTokens, countTokens, renderPrompt } from './tokenizer.js';

export class ScriptedBackend implements Backend {
  readonly name = 'scripted';
  private readonly script: ScriptEntry[];

  /** `scriptPath` is already resolved against the config file's folder. */
  constructor(
    private readonly config: ScriptedBackendConfig,
    scriptPath: string | undefined,
    readonly telemetryName: string,
  ) {
    this.script = scriptPath ? loadScript(scriptPath) : [];
  }

  /** A plain function, not a generator: one async layer fewer on every reply. */
  stream(call: ModelCall, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const fault = this.config.faults ? parseFault(call.fault) : undefined;
    throwHttpFault(fault);
    const blocks = reshapeBlocks(this.plan(call), fault, call.tools);
    return emitBlocks(blocks, {
      outputBudget: fault === 'truncate' ? truncatedBudget(blocks, call.outputBudget) : call.outputBudget,
      stopSequences: call.sampling.stopSequences,
      thinkingBudget: thinkingBudget(call, this.config.thinkingShare),
      tokenDelayMs: this.config.tokenDelayMs,
      failAfterFirstDelta: fault === 'stream-error',
      joinDeltas: !call.streamed,
      cancellation,
    });
  }

  countTokens(prompt: ModelPrompt): Promise<number> {
    return countPromptTokens(renderPrompt(prompt), prompt.model.contextWindow);
  }

  async prepare(): Promise<string> {
    return this.script.length > 0 ? `a script of ${this.script.length} entries` : 'the default answers';
  }

  /** Nothing to load: the script was read when the backend was built. */
  async load(): Promise<void> {}

  async readiness(): Promise<BackendReadiness[]> {
    return [{ backend: this.name, ready: true, state: 'ready' }];
  }

  async close(): Promise<void> {}

  private plan(call: ModelCall): PlannedBlock[] {
    // The call's turns hold this request's earlier steps too: each ended on server tool results.
    const stepIndex = stepsSinceUserText(call.turns);
    return scriptedStep(this.script, lastUserText(call.turns), stepIndex) ?? planDefaultAnswer(call);
  }
}

/** Fault `truncate`: stop at half of what the answer needs, as if max_tokens were that small. */
function truncatedBudget(blocks: readonly PlannedBlock[], budget: number): number {
  const needed = blocks.reduce(
    (sum, block) =>
      sum +
      countTokens(
        block.type === 'text' ? block.text : block.type === 'thinking' ? block.thinking : JSON.stringify(block.input),
      ),
    0,
  );
  return Math.min(budget, Math.max(1, Math.floor(needed / 2)));
}
