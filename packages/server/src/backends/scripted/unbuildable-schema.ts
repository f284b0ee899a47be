/**
 * A tool or format schema the scripted backend can build no instance of (no value satisfies it,
 * or none within the builder's limits) is the caller's 400 naming the field, not a 500: clients
 * retry 500s, and the same request would fail the same way every time.
 */
import { ServiceError } from '@model-messages/protocol';
import { schemaFieldPath } from '../../json-schema/json-pointer.js';
import { SchemaInstanceError } from './schema-instance.js';

/** `build()`'s value; its SchemaInstanceError becomes a 400 naming `where` (e.g. `tools.0.input_schema`) and the place inside it. */
export function buildOrRefuse<T>(build: () => T, where: string): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof SchemaInstanceError)) throw error;
    throw new ServiceError(
      'invalid_request',
      `${schemaFieldPath(where, error.path)}: the scripted backend can build no value valid against this schema: ${error.reason}`,
    );
  }
}
