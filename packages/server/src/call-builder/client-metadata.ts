/**
 * Claude Code opens its system prompt with a text block of its own metadata,
 * `x-anthropic-billing-header: cc_version=2.1.332.467; cc_entrypoint=sdk-cli;`: attribution for
 * the client's account, not instructions. Its version carries a suffix that differs between
 * conversations, so left in, it would stand first in every prompt and make the long system
 * prompt and tool list after it a new prefix for each conversation: no engine could reuse their
 * evaluation across conversations (llama-cpp's kept sequences, vLLM's prefix cache). So the
 * model is not shown it.
 */
import type { TextPart } from '../backends/call/model-call.js';

const BILLING_HEADER = /^x-anthropic-billing-header: [^\n]*$/;

/** The system parts without a client's metadata block. */
export function withoutClientMetadata(parts: TextPart[]): TextPart[] {
  return parts.filter((part) => !BILLING_HEADER.test(part.text));
}
