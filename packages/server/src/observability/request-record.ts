/**
 * What one request did, filled in where each fact becomes known and read once when the request
 * ends: its access log line, its metrics and its span all come from here (request-observer.ts).
 * Plain fields, so that recording a fact costs an assignment on the request's path.
 *
 * Nothing here holds request or response text: ids, names, codes, counts and times.
 */
import type { Context, Span } from '@opentelemetry/api';
import type { ErrorCode, StopReason } from '@model-messages/protocol';
import type { ToolCallOutcome } from '../streaming/stream-part.js';

export class RequestRecord {
  /** `performance.now()` when the request arrived. */
  readonly startedAt = performance.now();
  /** The route that answered, as registered (`/v1/models/:id`); undefined when none did (404). */
  route: string | undefined;
  /** The id of the API key the request carried (support/key-id.ts), once it was checked. */
  keyId: string | undefined;
  /** The model name the client sent (messages and count_tokens). */
  requestedModel: string | undefined;
  /** The configured model it resolved to. */
  model: string | undefined;
  /** The request's max_tokens as it runs (after a model's clamp). */
  maxTokens: number | undefined;
  /** The backend that answered (a fallback list's member once one did). */
  backend: string | undefined;
  /** The HTTP status sent; a stream that failed after its headers keeps its 200. */
  status = 0;
  /** The error's code (`mms-error-code`), a stream's `error` event included. */
  errorCode: ErrorCode | undefined;
  /** The status the error has in the error table: a stream's error event has one too. */
  errorStatus: number | undefined;
  stopReason: StopReason | null | undefined;
  /** The prompt's tokens newly evaluated (`usage.input_tokens`: cache reads excluded). */
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  /** The prompt's tokens an engine's cache held (`usage.cache_read_input_tokens`). */
  cacheReadInputTokens: number | undefined;
  /** The prompt's tokens an engine evaluated and kept for later requests (`usage.cache_creation_input_tokens`). */
  cacheCreationInputTokens: number | undefined;
  /** `performance.now()` when the first output arrived from the backend. */
  firstOutputAt: number | undefined;
  streamed = false;
  /** tool_use blocks in the reply: calls of the client's tools (issue 37). */
  toolCalls: number | undefined;
  /** `performance.now()` when the request ended (request-observer.ts). */
  endedAt: number | undefined;
  /** The response closed before it was complete: the client went away, or was cut off. */
  disconnected = false;
  /**
   * Server tool calls: their tool's name and outcome (`ok`, or the error code of the result).
   * Made with the first: most requests call none.
   */
  serverToolCalls: Array<{ tool: string; outcome: string }> | undefined;
  /** The model's tool calls by how they became blocks (issue 35), from backends that check them. */
  toolCallOutcomes: Partial<Record<ToolCallOutcome, number>> | undefined;

  constructor(
    readonly requestId: string,
    readonly method: string,
    /** The request's span (observability/tracing.ts): a no-op one unless a tracing SDK is set up. */
    readonly span: Span,
    /** The context its child spans start in; undefined when nothing is traced. */
    readonly traceContext: Context | undefined,
  ) {}

  /** A server tool call's outcome, from the model or from code in the sandbox. */
  serverToolCall(tool: string, outcome: string): void {
    (this.serverToolCalls ??= []).push({ tool, outcome });
  }
}
