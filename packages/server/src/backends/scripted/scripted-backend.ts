/**
 * A deterministic backend with no model, for this project's tests and for users who test their
 * own clients: it echoes, follows a script, and injects faults on request when configured to.
 */
import type { ConversationRequest } from '@mms/protocol';
import type { Backend, BackendStepRequest } from '../backend.js';
import type { Cancellation } from '../cancellation.js';
import type { StreamPart } from '../../streaming/stream-part.js';
import { lastUserText, priorSteps } from './conversation-text.js';
import { planDefaultAnswer } from './default-answer.js';
import { parseFault, reshapeBlocks, throwHttpFault } from './faults.js';
import { loadScript, scriptedStep, type PlannedBlock, type ScriptEntry } from './script-file.js';
import type { ScriptedBackendConfig } from './scripted-config.js';
import { emitBlocks } from './token-emitter.js';
import { countTokens, renderPrompt } from './tokenizer.js';

export class ScriptedBackend implements Backend {
  readonly name = 'scripted';
  private readonly script: ScriptEntry[];

  /** `scriptPath` is already resolved against the config file's folder. */
  constructor(
    private readonly config: ScriptedBackendConfig,
    scriptPath: string | undefined,
  ) {
    this.script = scriptPath ? loadScript(scriptPath) : [];
  }

  /** A plain function, not a generator: one async layer fewer on every reply. */
  stream(step: BackendStepRequest, cancellation: Cancellation): AsyncIterable<StreamPart[]> {
    const fault = this.config.faults ? parseFault(step.fault) : undefined;
    throwHttpFault(fault);
    const blocks = reshapeBlocks(this.plan(step), fault, step.request);
    return emitBlocks(blocks, {
      outputBudget: fault === 'truncate' ? truncatedBudget(blocks, step.outputBudget) : step.outputBudget,
      stopSequences: step.request.stop_sequences ?? [],
      thinkingShare: this.config.thinkingShare,
      tokenDelayMs: this.config.tokenDelayMs,
      failAfterFirstDelta: fault === 'stream-error',
      joinDeltas: step.request.stream !== true,
      cancellation,
    });
  }

  async countTokens(request: ConversationRequest): Promise<number> {
    return countTokens(renderPrompt(request));
  }

  async prepare(): Promise<string> {
    return this.script.length > 0 ? `a script of ${this.script.length} entries` : 'the default answers';
  }

  async close(): Promise<void> {}

  private plan(step: BackendStepRequest): PlannedBlock[] {
    const stepIndex = priorSteps(step.request) + step.step;
    return scriptedStep(this.script, lastUserText(step.request), stepIndex) ?? planDefaultAnswer(step);
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
