/**
 * A request body's text as JSON, on the event loop or in a parse worker alike: no `__proto__` or
 * `constructor.prototype` keys, which code merging the value into another object could turn into
 * prototype pollution.
 */
import { ServiceError } from '@model-messages/protocol';
import secureJson from 'secure-json-parse';

export function parseJsonText(text: string): unknown {
  if (text.trim() === '') throw new ServiceError('invalid_request', 'The request body is empty; send a JSON object.');
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw new ServiceError('invalid_request', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}
