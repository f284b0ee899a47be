/**
 * The calling client (issue 5): `messages` (a plain call), `structured` (an answer that fits a
 * schema), `research` (two passes), `declineCounts`. Each call gets a deadline, an account of
 * what it spent, and returns a typed result; rule breaches throw before anything is sent.
 */
import type { Message, MessageRequest, ModelTier } from '@model-messages/protocol';
import { DeclineCounter, type DeclineCounts } from './answer/decline-counter.js';
import { spendUnreadableRetry } from './answer/unreadable-retry.js';
import { outputTokensToFit } from './budgets.js';
import { CallAccount, type FailureDetail } from './call-account.js';
import type { CallContext } from './call-context.js';
import {
  assertThinkingListFits,
  resolveModel,
  resolveOptions,
  type ClientOptions,
  type ResolvedModel,
  type ResolvedOptions,
  type TieredModelSpec,
} from './client-options.js';
import { Deadline, type DeadlineInput } from './deadline.js';
import { ClientConfigError } from './errors.js';
import { checkAnswerSchema, checkBeforeSend, preSendProblem, promptChars } from './pre-send-checks.js';
import { shapingInstructions } from './prompts.js';
import { researchPassOne } from './research/research-call.js';
import { buildResearchRequest, RESEARCH_FETCH_USES, RESEARCH_SEARCH_USES } from './research/research-request.js';
import type { CallResult, ResearchAnswer, ResearchNotes } from './results.js';
import { finish, runStructured, type Fallback, type Guardrail } from './structured-call.js';
import { buildStructuredRequest, DEFAULT_TOOL_NAME } from './structured-request.js';
import type { JsonSchema } from './strict-schema.js';
import { withThinkingPolicy } from './thinking-policy.js';
import { sendWithRetries } from './transport/send-with-retries.js';

/** A tier, a configured model id, or a model outside the tiers. */
export type ModelRef = ModelTier | string | TieredModelSpec;

export interface CallOptions extends DeadlineInput {
  signal?: AbortSignal;
}

/** A plain request; `model` may name a tier. The client always streams, so `stream` is its own. */
export type ClientMessageRequest = Omit<MessageRequest, 'stream'>;

export interface StructuredOptions<Value> extends CallOptions {
  /** Default: the mid tier (spec: "default for extraction and writing"). */
  model?: ModelRef;
  /** Any JSON Schema with `type: "object"`; sent through toStrictSchema, answers validated against it as given. */
  schema: JsonSchema;
  /** What to produce: goes into `system`, never next to untrusted input. */
  instructions: string;
  /** Structured context, sent as JSON in the user turn. */
  context?: unknown;
  /** Untrusted text (a scraped page, user text), sent in the user turn as data. */
  input?: string;
  toolName?: string;
  toolDescription?: string;
  /**
   * Default: the tier's output budget (spec, Limits: 64k small and mid, 128k large), within the
   * model's limit. A prompt over (window - that budget - buffer) x 4 characters is a
   * `PreSendError` (`prompt_too_long`) unless `shrinkOutputToFit` is set.
   * A truncated answer is retried once with it doubled, where the model's limit and the context
   * let it grow; at the default they often do not, and the `truncated` failure says which cap.
   */
  maxTokens?: number;
  /**
   * Default false. True, with no `maxTokens`: the default output budget is cut to what the
   * context leaves after the prompt and the buffer (budgets.ts outputTokensToFit), so a long
   * prompt or a small window still goes out, with less room for the answer. With `maxTokens` it
   * is a ClientConfigError: a budget you give is sent as given.
   */
  shrinkOutputToFit?: boolean;
  /**
   * Default false: your schema is the tool's input schema, as the spec's structured call shape
   * has it, and a reply that skips the tool is a decline whatever its text (`Insufficient data`
   * included): counted, retried once, then `declined` or your fallback.
   * True: the tool's input is `{"answer": <your schema> | "Insufficient data"}` and the prompt
   * allows that answer; the client unwraps it, and `Insufficient data` (in the envelope, or as
   * the whole text of a reply) comes back as its own failure kind, never a decline, never
   * replaced by the fallback (decision 0010). Research pass 2 always uses it.
   */
  insufficientData?: boolean;
  guardrails?: readonly Guardrail<Value>[];
  fallback?: Fallback<Value>;
}

export interface ResearchOptions<Value> extends CallOptions {
  question: string;
  /** Pass 2's schema. */
  schema: JsonSchema;
  context?: unknown;
  /** Extra rules for pass 1's system prompt. */
  instructions?: string;
  /** Extra rules for pass 2's shaping. */
  shapeInstructions?: string;
  /** Pass 1's model; default the large tier. */
  model?: ModelRef;
  /** Pass 2's model; default the mid tier. */
  shapeModel?: ModelRef;
  /** Pass 1's output budget; default the tier's (128k large), within the model's limit. */
  maxTokens?: number;
  /** Pass 2's; default the tier's within the model's limit, like any structured call. Pass 2 always allows `Insufficient data`. */
  shapeMaxTokens?: number;
  /**
   * Pass 2's `shrinkOutputToFit`: default false, and a pass 2 whose prompt (pass 1's prose
   * included) is over the budget at the default output is a `not_sent` failure that keeps the
   * research; true cuts its default output budget to what the context leaves.
   */
  shrinkShapeOutputToFit?: boolean;
  /** Default 5. */
  webSearchMaxUses?: number;
  /** Off by default; `true` is 5 uses. */
  webFetch?: boolean | { maxUses: number };
  /** How often a paused turn is continued. Default 5. */
  maxContinuations?: number;
  toolName?: string;
  guardrails?: readonly Guardrail<Value>[];
  fallback?: Fallback<Value>;
}

export class Client {
  private readonly options: ResolvedOptions;
  private readonly declines = new DeclineCounter();

  constructor(options: ClientOptions) {
    this.options = resolveOptions(options);
  }

  /** The profile the client budgets and checks with. */
  model(ref: ModelRef): ResolvedModel {
    if (typeof ref !== 'string') {
      const model = resolveModel(ref.tier, ref, this.options.bufferTokens);
      assertThinkingListFits(model, this.options.thinkingDisabled);
      return model;
    }
    const tiers = this.options.tiers;
    if (ref === 'small' || ref === 'mid' || ref === 'large') return tiers[ref];
    const configured = Object.values(tiers).find((model) => model.id === ref);
    if (!configured)
      throw new ClientConfigError(
        `model "${ref}": not a tier nor a configured model (${Object.values(tiers)
          .map((model) => model.id)
          .join(', ')}); pass a TieredModelSpec for another model`,
      );
    return configured;
  }

  async messages(request: ClientMessageRequest, call: CallOptions = {}): Promise<CallResult<Message>> {
    // The deadline starts with the call: a relative timeout counts the client's own checks too.
    const context = this.context(call);
    const model = this.model(request.model);
    const prepared = withThinkingPolicy({ ...request, model: model.id }, model, this.options.thinkingDisabled);
    checkBeforeSend(prepared, model, { bufferTokens: this.options.bufferTokens, checkPromptSize: true });
    const first = await sendWithRetries(prepared, context);
    // A 2xx whose body could not be read is sent once more, as it was (spec, Client retry policy 2; issue 32).
    const retry = !first.ok && first.unreadable && !spendUnreadableRetry(context, model.id, first.unreadable);
    const sent = retry ? await sendWithRetries(prepared, context) : first;
    return finish(sent.ok ? { ok: true, value: sent.folded.message } : sent, context, undefined);
  }

  async structured<Value = Record<string, unknown>>(options: StructuredOptions<Value>): Promise<CallResult<Value>> {
    const context = this.context(options);
    const model = this.model(options.model ?? 'mid');
    const envelope = options.insufficientData ?? false;
    checkAnswerSchema(options.schema, envelope);
    const budget = outputBudgetChoice('maxTokens', options.maxTokens, 'shrinkOutputToFit', options.shrinkOutputToFit);
    const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
    const built = buildStructuredRequest(
      {
        ...options,
        model,
        toolName,
        toolDescription: options.toolDescription,
        maxTokens: model.defaultMaxTokens,
        insufficientData: envelope,
      },
      this.options.thinkingDisabled,
    );
    const request = this.withOutputBudget(built, budget, model);
    checkBeforeSend(request, model, { bufferTokens: this.options.bufferTokens, checkPromptSize: true });
    const outcome = await runStructured(
      { request, model, toolName, schema: options.schema, envelope, guardrails: options.guardrails ?? [] },
      context,
    );
    return finish(outcome, context, options.fallback);
  }

  async research<Value = Record<string, unknown>>(
    options: ResearchOptions<Value>,
  ): Promise<CallResult<ResearchAnswer<Value>>> {
    const context = this.context(options);
    const model = this.model(options.model ?? 'large');
    const shapeModel = this.model(options.shapeModel ?? 'mid');
    // Pass 2 always sends the schema inside the envelope: checked as such before pass 1 is paid for.
    checkAnswerSchema(options.schema, true);
    const shapeBudget = outputBudgetChoice(
      'shapeMaxTokens',
      options.shapeMaxTokens,
      'shrinkShapeOutputToFit',
      options.shrinkShapeOutputToFit,
    );
    const fetchUses =
      options.webFetch === true ? RESEARCH_FETCH_USES : options.webFetch ? options.webFetch.maxUses : undefined;
    const passOneRequest = buildResearchRequest({
      model,
      question: options.question,
      context: options.context,
      instructions: options.instructions,
      maxTokens: options.maxTokens ?? model.defaultMaxTokens,
      webSearchMaxUses: options.webSearchMaxUses ?? RESEARCH_SEARCH_USES,
      webFetchMaxUses: fetchUses,
      bufferTokens: this.options.bufferTokens,
      thinkingDisabled: this.options.thinkingDisabled,
    });
    const toolName = options.toolName ?? DEFAULT_TOOL_NAME;
    const passOne = await researchPassOne(
      { request: passOneRequest, model, maxContinuations: options.maxContinuations ?? 5 },
      context,
    );
    if (!passOne.ok) return finishResearch(passOne, undefined, context, options.fallback);
    const notes = passOne.notes;
    const shaping = {
      model: shapeModel,
      schema: options.schema,
      toolName,
      toolDescription: undefined,
      instructions: shapingInstructions(options.shapeInstructions),
      context: {
        question: options.question,
        sources: notes.sources.map(({ index, url, title }) => ({ index, url, title })),
      },
      input: notes.prose,
      maxTokens: shapeModel.defaultMaxTokens,
      insufficientData: true,
    };
    const shapeRequest = this.withOutputBudget(
      buildStructuredRequest(shaping, this.options.thinkingDisabled),
      shapeBudget,
      shapeModel,
    );
    // Pass 1 is paid for: a pass 2 that breaks a rule (its prompt holds all the prose) is a failure that keeps the research.
    const problem = preSendProblem(shapeRequest, shapeModel, {
      bufferTokens: this.options.bufferTokens,
      checkPromptSize: true,
    });
    if (problem)
      return finishResearch(
        {
          ok: false,
          failure: {
            kind: 'not_sent',
            code: problem.code,
            message: `research pass 2 was not sent: ${problem.message}`,
          },
        },
        notes,
        context,
        options.fallback,
      );
    const guardrails = options.guardrails ?? [];
    const passTwo = await runStructured(
      { request: shapeRequest, model: shapeModel, toolName, schema: options.schema, envelope: true, guardrails },
      context,
    );
    return finishResearch(passTwo, notes, context, options.fallback);
  }

  declineCounts(): DeclineCounts {
    return this.declines.snapshot();
  }

  /** The caller's `max_tokens` as given, the tier's default, or that default shrunk to fit the prompt when asked. */
  private withOutputBudget(request: MessageRequest, budget: OutputBudgetChoice, model: ResolvedModel): MessageRequest {
    if (budget.maxTokens !== undefined) return { ...request, max_tokens: budget.maxTokens };
    if (!budget.shrinkToFit) return { ...request, max_tokens: model.defaultMaxTokens };
    return {
      ...request,
      max_tokens: outputTokensToFit({
        tierBudget: model.defaultMaxTokens,
        contextWindow: model.keptWindow,
        promptChars: promptChars(request),
        bufferTokens: this.options.bufferTokens,
      }),
    };
  }

  private context(call: CallOptions): CallContext {
    return {
      options: this.options,
      deadline: Deadline.from(call, this.options.timeoutMs),
      signal: call.signal,
      account: new CallAccount(),
      declines: this.declines,
    };
  }
}

interface OutputBudgetChoice {
  maxTokens: number | undefined;
  shrinkToFit: boolean;
}

/** Checked when the call starts, so that research refuses the pair before pass 1 is paid for. */
function outputBudgetChoice(
  maxTokensField: string,
  maxTokens: number | undefined,
  shrinkField: string,
  shrinkToFit: boolean | undefined,
): OutputBudgetChoice {
  if (maxTokens !== undefined && shrinkToFit)
    throw new ClientConfigError(
      `${shrinkField}: shrinks only the default output budget, and ${maxTokensField} (${maxTokens}) was given; a budget you give is sent as given`,
    );
  return { maxTokens, shrinkToFit: shrinkToFit ?? false };
}

async function finishResearch<Value>(
  outcome: { ok: true; value: Value } | { ok: false; failure: FailureDetail },
  notes: ResearchNotes | undefined,
  context: CallContext,
  fallback: Fallback<Value> | undefined,
): Promise<CallResult<ResearchAnswer<Value>>> {
  const kept = notes ?? (outcome.ok ? undefined : outcome.failure.research);
  const answer = (data: Value): ResearchAnswer<Value> => ({
    prose: '',
    sources: [],
    citations: [],
    unresolvedCitations: [],
    ...kept,
    data,
  });
  // Pass 2 runs only with pass 1's notes: a failure without them ended in pass 1.
  const researchPass: 1 | 2 = notes ? 2 : 1;
  const withNotes = outcome.ok
    ? outcome
    : { ok: false as const, failure: { ...outcome.failure, researchPass, ...(kept ? { research: kept } : {}) } };
  const result = await finish(withNotes, context, fallback);
  return result.ok ? { ...result, value: answer(result.value) } : result;
}
