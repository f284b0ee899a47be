/**
 * Orchestration of one `POST /v1/messages`, with no HTTP in it: validate, resolve the model (one
 * the key may use: keys/model-permission.ts), apply the endpoint rules, check the signed blocks
 * that came back (signing/signed-blocks-check.ts), count the prompt, check and charge the key's
 * limits (limits/key-limiter.ts), admit the request (a slot or a place in the queue), run the
 * turn once it holds a slot, and encode its parts as wire events. Streaming writes these events;
 * the JSON reply folds them.
 *
 * `startMessage` returns once the request is admitted, before it has a slot or any output: every
 * refusal up to there (a bad request, an unknown model or one the key may not use, a prompt too
 * long by its count, a key's limit, a full queue) is thrown from it, so it is an HTTP status for
 * a stream too. What fails after it (the
 * wait in the queue, the backend, the turn) fails through `events`, which a stream that has
 * opened at admission writes as an `error` event (docs/decisions/0015).
 */
import { checkMessageRules, parseMessageRequest } from '@model-messages/protocol';
import { runTurn } from '../../agent/run-turn.js';
import type { ServerToolRunner } from '../../agent/server-tool-runner.js';
import type { Backend } from '../../backends/backend.js';
import { buildModelPrompt } from '../../call-builder/build-model-call.js';
import { editedPrompt } from '../../call-builder/context-management.js';
import { MessageRouting } from '../../call-builder/conversation-key.js';
import type { Cancellation } from '../../backends/cancellation.js';
import type { ClientKey } from '../../keys/client-key.js';
import { resolvePermitted } from '../../keys/model-permission.js';
import type { LimitCharge } from '../../limits/key-limiter.js';
import { promptTooLong } from '../../backends/prompt-too-long.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { RequestRecord } from '../../observability/request-record.js';
import { traceTokenCount } from '../../observability/tracing.js';
import { checkSignedBlocks } from '../../signing/signed-blocks-check.js';
import type { Signer } from '../../signing/signer.js';
import { MessageEncoder } from '../../streaming/message-encoder.js';
import { uniqueId } from '../../support/unique-id.js';
import { MessageEvents } from './message-events.js';

export interface MessageServices {
  registry: ModelRegistry;
  serverTools: ServerToolRunner;
  maxSteps: number;
  /** Checks what comes back signed and signs what the turn makes (docs/decisions/0014). */
  signer: Signer;
  /** The config's `unknownFields`: refuse a field the service does not know, or drop and name it. */
  unknownFields: 'refuse' | 'ignore';
}

export interface MessageCall {
  stream: boolean;
  /**
   * The wire events. `events.start()` gives message_start at once; otherwise the first `next()`
   * resolves once the request has its slot and the backend produced its first part.
   */
  events: MessageEvents;
  /**
   * The backend that answers, for the `mms-backend` header: known once `events` gave its first
   * batch of output. Before that, a fallback list's view names the whole list.
   */
  backendName(): string;
  /** Fields dropped as unknown (`unknownFields: "ignore"`), for the `mms-ignored-fields` header. */
  readonly ignoredFields: readonly string[];
  /** The max_tokens asked for and the one run, when a model that clamps lowered it; else undefined. */
  readonly maxTokensClamped: { requested: number; granted: number } | undefined;
  /** True when `backendName()` may change once output comes: a fallback list not yet chosen. */
  readonly backendChosenLater: boolean;
  /** What the key's limits charged: its `anthropic-ratelimit-*` headers go on the reply. */
  readonly limitCharge: LimitCharge | undefined;
}

/** What the handler reads of the request's headers. */
export interface MessageHeaders {
  /** `mms-fault`: only a backend configured for fault injection reads it. */
  fault: string | undefined;
  /** `x-claude-code-session-id`: the conversation's key for a list that balances by session. */
  sessionId: string | undefined;
}

/**
 * `key`: the API key the request carried. `limitCharge`: its charge against the key's limits,
 * made when the request began (undefined for a key without limits), charged here once the prompt
 * is counted; the route settles it. `record`: the request's record (observability/), which learns
 * its model, and spans the engine calls.
 */
export async function startMessage(
  body: unknown,
  headers: MessageHeaders,
  services: MessageServices,
  cancellation: Cancellation,
  key: ClientKey,
  limitCharge: LimitCharge | undefined,
  record: RequestRecord,
): Promise<MessageCall> {
  const ignoredFields: string[] = [];
  const requested = parseMessageRequest(body, services.unknownFields === 'ignore' ? ignoredFields : undefined);
  record.requestedModel = requested.model;
  const entry = resolvePermitted(services.registry, key.models, requested.model);
  const model = entry.profile.id;
  // Known before any refusal below, so that a 529 or a prompt too long counts against its model.
  record.model = model;
  // From here on the request as it runs: its max_tokens may be lowered to the model's limit.
  const request = checkMessageRules(requested, entry.profile);
  record.maxTokens = request.max_tokens;
  checkSignedBlocks(request, services.signer);
  // A fallback list's per-request view: the count, every step and the header agree on one backend.
  // The conversation's key comes from the request as sent, before its edits: it stays fixed
  // across the conversation, whatever the edits clear (issue 36).
  const backend =
    entry.backend.forRequest?.(new MessageRouting(record.requestId, headers.sessionId, request)) ?? entry.backend;
  // The request's context edits apply before the count that admits it (issue 34).
  const edited = await editedPrompt(request, buildModelPrompt(request, entry.profile), entry.profile, (prompt) =>
    traceTokenCount(record, backend, model, () => backend.countTokens(prompt, 'admission')),
  );
  const { prompt, inputTokens } = edited;
  if (inputTokens > entry.profile.contextWindow) throw promptTooLong(inputTokens, entry.profile.contextWindow, 'exact');
  await limitCharge?.admit(inputTokens);
  // Admitted here, or refused with a 529 thrown at once: the slot itself may still be a wait.
  const slot = entry.admission.admit(cancellation);
  const parts = runTurn({
    backend,
    request,
    prompt,
    model: entry.profile,
    fault: headers.fault,
    maxSteps: services.maxSteps,
    serverTools: services.serverTools,
    inputTokens,
    compaction: edited.compaction,
    cancellation,
    signer: services.signer,
    record,
  });
  const encoder = new MessageEncoder({
    id: newMessageId(),
    model,
    inputTokens,
    ...(request.context_management === undefined ? {} : { contextManagement: { applied_edits: edited.appliedEdits } }),
  });
  const clamped =
    request.max_tokens === requested.max_tokens
      ? undefined
      : { requested: requested.max_tokens, granted: request.max_tokens };
  return new StartedMessage(
    request.stream === true,
    new MessageEvents(parts, encoder, slot),
    backend,
    backend !== entry.backend,
    ignoredFields,
    clamped,
    limitCharge,
  );
}

/**
 * A class rather than an object literal with an arrow function: tsx names every such arrow
 * with `Object.defineProperty` each time it is created, which costs more than the call it serves.
 */
class StartedMessage implements MessageCall {
  constructor(
    readonly stream: boolean,
    readonly events: MessageEvents,
    private readonly backend: Backend,
    readonly backendChosenLater: boolean,
    readonly ignoredFields: readonly string[],
    readonly maxTokensClamped: MessageCall['maxTokensClamped'],
    readonly limitCharge: LimitCharge | undefined,
  ) {}

  backendName(): string {
    return this.backend.name;
  }
}

function newMessageId(): string {
  return uniqueId('msg_');
}
