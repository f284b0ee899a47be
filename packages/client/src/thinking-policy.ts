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
 * Thinking for a call that returns prose (research pass 1): `adaptive` on the mid and large
 * tiers (spec: Thinking); on the small tier nothing here, so that withThinkingPolicy decides
 * (`disabled` for the newer generation, nothing for the older, which cannot take `adaptive`).
 */
export function proseThinking(model: Pick<ResolvedModel, 'tier'>): ThinkingParam | undefined {
  return model.tier === 'small' ? undefined : { type: 'adaptive' };
}
