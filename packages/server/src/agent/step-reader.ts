/**
 * One backend step, read batch by batch for the turn loop (run-turn.ts): passes on the parts
 * the client sees, collects the step's blocks, and says when the step is over and why. The
 * step's `finish` part is held back: the turn loop decides what finishes the turn. It also
 * enforces `disable_parallel_tool_use` for every backend: after one tool block, client or server,
 * the step ends. And it signs thinking, for every backend (docs/decisions/0014-signed-server-blocks.md):
 * a thinking block gets its signature as it stops. A server_tool_use block's id is signed over its
 * result too (issue 32), which exists only once the step is over and the call has run: so the
 * step's parts from its first server call on are held (`held`), the call given an id of the
 * service's own until then, and the turn loop passes them on once it has signed the calls
 * (signing/server-call-signing.ts).
 *
 * A reader the loop feeds, rather than a generator the loop delegates to: every reply passes
 * through the turn loop, and each layer of async generators costs it about 300 ns and 1 KB.
 */
import type { ContentBlock, MessageRequest, StopReason } from '@model-messages/protocol';
import type { Signer } from '../signing/signer.js';
import { signThinking } from '../signing/thinking-signature.js';
import { BlockAssembler, type StoppedBlock } from '../streaming/block-assembler.js';
import type { StreamPart } from '../streaming/stream-part.js';

export interface StepOutcome {
  stepBlocks: ContentBlock[];
  /**
   * Calls whose input JSON arrived incomplete (block-assembler.ts). A cut server call is never
   * run: what arrived of `http://host/abcdef` may read `http://host/a`.
   */
  cutCalls: ReadonlySet<ContentBlock>;
  stopReason: StopReason;
  stopSequence: string | null;
  /** Parts of the last batch, held back so that the turn's finish can travel with them. */
  tail: StreamPart[];
  /**
   * The step's parts from its first server call on, held until its calls are signed; each
   * server call's block-start still carries its provisional id (`srvtoolu_held_<n>`).
   */
  held: StreamPart[];
}

/** What a step reads and writes of its turn. */
export interface TurnProgress {
  /** The turn's blocks so far: each block the step closes is appended. */
  blocks: ContentBlock[];
  /** Output tokens of the turn so far, kept up to date as the step reports its count. */
  outputTokens: number;
}

export class StepReader {
  /** Set once the step is over; the parts `read` returned last are then its tail. */
  outcome: StepOutcome | undefined;
  private readonly assembler = new BlockAssembler();
  private readonly cutCalls = new Set<ContentBlock>();
  private readonly stepStartTokens: number;
  /**
   * The one tool call that disable_parallel_tool_use allows, once it has ended. Block parts
   * after it are dropped, but the step is read on until its parts say how many tokens the call
   * took (see `settled` in `read`): usage must count them, and engines report counts late.
   */
  private allowedCall: ContentBlock | undefined;
  private countedAfterCall = false;
  /** A block started after the allowed call: the engine went on, so the call was complete. */
  private movedOn = false;
  /**
   * The step's last block, when it is a call that closed with no input JSON (block-assembler.ts):
   * a call without arguments, or one the budget cut as it opened. A max_tokens finish right
   * after it says the latter.
   */
  private callWithoutInput: ContentBlock | undefined;
  /** The step's parts from its first server call on (StepOutcome.held); undefined before one. */
  private held: StreamPart[] | undefined;
  private provisionalIds = 0;

  private readonly thinkingOmitted: boolean;

  constructor(
    private readonly request: MessageRequest,
    private readonly turn: TurnProgress,
    private readonly step: number,
    private readonly signer: Signer,
  ) {
    this.stepStartTokens = turn.outputTokens;
    const thinking = request.thinking;
    this.thinkingOmitted = thinking !== undefined && thinking.type !== 'disabled' && thinking.display === 'omitted';
  }

  /**
   * Earlier steps spent the whole budget: the step ends before it starts, for every backend.
   * Engines refuse a max_tokens of 0 (vLLM, the messages API), and node-llama-cpp reads 0 as no
   * limit at all.
   */
  endWithoutOutput(): void {
    this.outcome = this.outcomeOf('max_tokens', null, []);
  }

  /** The parts of `batch` to pass on; once `outcome` is set, they are its tail instead. */
  read(batch: readonly StreamPart[]): StreamPart[] {
    const passed: StreamPart[] = [];
    for (const part of batch) {
      if (part.type === 'finish') {
        if (this.callWithoutInput && part.stopReason === 'max_tokens') this.cutCalls.add(this.callWithoutInput);
        // After a whole allowed call the step ended on it, whatever cut the blocks dropped after
        // it; a call cut itself (by max_tokens) keeps the engine's reason: it is truncation.
        const engineReason = this.allowedCall === undefined || this.cutCalls.has(this.allowedCall);
        this.outcome = this.outcomeOf(
          engineReason ? part.stopReason : 'tool_use',
          engineReason ? part.stopSequence : null,
          passed,
        );
        return passed;
      }
      if (part.type === 'output-tokens') {
        this.turn.outputTokens = this.stepStartTokens + part.count;
        passed.push({ type: 'output-tokens', count: this.turn.outputTokens });
        if (this.allowedCall) this.countedAfterCall = true;
        continue;
      }
      if (part.type === 'input-tokens') {
        // The request's own prompt is the first step's; a later step's holds this turn's output too.
        if (this.step === 0) passed.push(part);
        continue;
      }
      if (part.type === 'block-start') this.callWithoutInput = undefined;
      if (this.allowedCall) {
        if (part.type === 'block-start') this.movedOn = true;
        continue;
      }
      const stopped = this.take(part, passed);
      if (stopped?.inputCut) this.cutCalls.add(stopped.block);
      if (stopped?.inputMissing) this.callWithoutInput = stopped.block;
      if (stopped && isCall(stopped.block) && disablesParallel(this.request)) this.allowedCall = stopped.block;
    }
    // A settled allowed call ends the step with this batch: the turn loop stops reading, which
    // ends the backend's generator and so its generation. Settled means whole, and its tokens
    // counted or the engine gone on to another block: a call with no input JSON is known whole
    // only once another block starts, else the finish decides, and a cut call waits for the
    // finish, which says why generation ended. Until then the engine is either done (its count
    // or finish is on its way) or writing blocks that are dropped, which settles the call at once.
    const call = this.allowedCall;
    const settled =
      call !== undefined &&
      !this.cutCalls.has(call) &&
      call !== this.callWithoutInput &&
      (this.countedAfterCall || this.movedOn);
    if (settled) this.outcome = this.outcomeOf('tool_use', null, passed);
    return passed;
  }

  private outcomeOf(stopReason: StopReason, stopSequence: string | null, tail: StreamPart[]): StepOutcome {
    const held = this.held ?? [];
    return { stepBlocks: this.assembler.blocks, cutCalls: this.cutCalls, stopReason, stopSequence, tail, held };
  }

  /** Passes `part` on (into `passed`, or into `held` from the first server call on), and returns the block it stopped. */
  private take(part: StreamPart, passed: StreamPart[]): StoppedBlock | undefined {
    if (part.type === 'block-start') {
      let block = part.block;
      if (block.type === 'server_tool_use') {
        // Unique within the turn whatever the engine named it, until the signed id replaces it.
        block = { ...block, id: `srvtoolu_held_${this.step}_${(this.provisionalIds += 1)}` };
        this.held ??= [];
      }
      this.assembler.start(block);
      // An engine's own signature travels inside ours, which the block gets as it stops.
      if (block.type === 'thinking' && (block.signature !== '' || (this.thinkingOmitted && block.thinking !== '')))
        block = { ...block, signature: '', thinking: this.thinkingOmitted ? '' : block.thinking };
      (this.held ?? passed).push(block === part.block ? part : { type: 'block-start', block });
      return undefined;
    }
    if (part.type === 'block-delta') {
      this.assembler.delta(part.delta);
      // An engine's own signature (a Messages upstream's) is kept for ours to wrap, not passed on.
      if (part.delta.type === 'signature_delta') return undefined;
      // `display: "omitted"`: the thinking happens and is counted, its text travels in the signature.
      if (part.delta.type === 'thinking_delta' && this.thinkingOmitted) return undefined;
      (this.held ?? passed).push(part);
      return undefined;
    }
    if (part.type !== 'block-stop') {
      passed.push(part);
      return undefined;
    }
    const stopped = this.assembler.stop();
    const block = stopped.block;
    const into = this.held ?? passed;
    if (block.type === 'thinking') {
      block.signature = signThinking(this.signer, block.thinking, block.signature, this.thinkingOmitted);
      if (this.thinkingOmitted) block.thinking = '';
      into.push({ type: 'block-delta', delta: { type: 'signature_delta', signature: block.signature } }, part);
    } else {
      into.push(part);
    }
    this.turn.blocks.push(block);
    return stopped;
  }
}

function isCall(block: ContentBlock): boolean {
  return block.type === 'tool_use' || block.type === 'server_tool_use';
}

function disablesParallel(request: MessageRequest): boolean {
  const choice = request.tool_choice;
  return choice !== undefined && choice.type !== 'none' && choice.disable_parallel_tool_use === true;
}
