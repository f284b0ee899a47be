/**
 * Text an engine or an upstream service wrote, passed on in one of this service's error
 * messages. A caller can act on "the request queue is full" or "maximum context length is 8192",
 * so such text is kept, but never whole: an upstream's message may echo what it was sent (the
 * request, or the key this service sent it) at any length. The first 300 characters say what
 * went wrong. Configured secrets and addresses are taken out of every error message at the edge
 * (http/reply-redaction.ts); errors about this service's own credentials relay nothing at all
 * (messages-upstream/upstream-errors.ts, openai-compatible/error-mapping.ts).
 */
const RELAYED_TEXT_LIMIT = 300;

export function relayedText(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > RELAYED_TEXT_LIMIT ? `${trimmed.slice(0, RELAYED_TEXT_LIMIT)}...` : trimmed;
}
