/**
 * Thinking by tier and generation (spec rule 5, Thinking, Versioning), decided from the model's
 * profile rather than from its id, so that a model outside the three configured tiers (a tier
 * move candidate, a TieredModelSpec) gets the same treatment as a configured one:
 * - small, newer generation: thinks by default on a request that offers a tool, so it gets
 *   `disabled` unless the caller asks to think;
 * - small, older generation: never `adaptive` (unsupported); nothing is sent;
 * - mid and large: never `disabled` (the newer generation rejects it; rule 5 keeps it off them
 *   all); prose calls get `adaptive`.
 * `thinkingDisabledModels` adds small models to the first group by id (an older small model that
 * a deployment knows to think, say); the Client refuses a mid or large id in it.
 */
import type { MessageRequest, ThinkingParam } from '@model-messages/protocol';
import type { ResolvedModel } from './client-options.js';
import { PreSendError } from './errors.js';

/** Whether the client sends `disabled` to `model` when the caller sets no thinking. */
export function getsThinkingDisabled(
  model: Pick<ResolvedModel, 'id' | 'tier' | 'generation'>,
  listed: ReadonlySet<string>,
): boolean {
  if (model.tier !== 'small') return false;
  return model.generation === 'newer' || listed.has(model.id);
}

/** The caller's `thinking` is kept as set, `adaptive` and `disabled` alike (the pre-send checks judge it). */
export function withThinkingPolicy(
  request: MessageRequest,
  model: ResolvedModel,
  listed: ReadonlySet<string>,
): MessageRequest {
  if (request.thinking !== undefined || !getsThinkingDisabled(model, listed)) return request;
  return { ...request, thinking: { type: 'disabled' } };
}

/**
 * Spec rule 5: "Mid and large tiers never receive `disabled`". The service refuses it only where
 * the newer generation rejects it (protocol's rule 5), so a caller's `disabled` to an older mid
 * or large model went out; the client never sends it to either generation (issue 32). The policy
 * above never adds it there, so a `disabled` on a mid or large request is always the caller's.
 */
export function assertThinkingSendable(request: Pick<MessageRequest, 'thinking'>, model: ResolvedModel): void {
  if (request.thinking?.type !== 'disabled' || model.tier === 'small') return;
  throw new PreSendError(
    'rule_refused',
    `Rule 5: thinking "disabled" is never sent to ${model.id} (${model.tier} tier, ${model.generation} generation): mid and large tiers never receive it, in either generation; leave thinking unset or use "adaptive" (refused by the client before sending)`,
  );
}

/**
 * Thinking for a call that returns prose (research pass 1): `adaptive` on the mid and large
 * tiers (spec: Thinking); on the small tier nothing here, so that withThinkingPolicy decides
 * (`disabled` for the newer generation, nothing for the older, which cannot take `adaptive`).
 */
export function proseThinking(model: Pick<ResolvedModel, 'tier'>): ThinkingParam | undefined {
  return model.tier === 'small' ? undefined : { type: 'adaptive' };
}
