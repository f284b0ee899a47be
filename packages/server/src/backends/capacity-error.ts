/**
 * A backend that is healthy but full: every slot of its own is generating. To the client it is a
 * 529 like any overload, and a fallback list moves on from it, but it says nothing of the
 * backend's health, so no circuit counts it as a failure (a busy engine is not a broken one).
 */
import { ServiceError } from '@model-messages/protocol';

export class CapacityError extends ServiceError {
  constructor(message: string) {
    super('overloaded', message, { retryAfterSeconds: 1 });
  }
}
