/**
 * The one refusal of a prompt with more tokens than the model's context holds (400
 * prompt_too_long), on both endpoints. A backend may refuse a prompt before it has counted all
 * of it, with a lower bound: counting costs time per character on the event loop (or a worker),
 * and a prompt known not to fit need not be counted whole. The message says which it is.
 */
import { ServiceError } from '@model-messages/protocol';

export function promptTooLong(tokens: number, maximum: number, count: 'exact' | 'at least'): ServiceError {
  const counted = count === 'exact' ? `${tokens} tokens` : `at least ${tokens} tokens`;
  return new ServiceError('prompt_too_long', `prompt is too long: ${counted} > ${maximum} maximum`);
}
