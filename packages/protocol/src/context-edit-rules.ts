/**
 * Rules of `context_management.edits` that a schema cannot say (issue 34): each edit at most
 * once, since the public API applies each strategy once per request; and `clear_thinking` first
 * when it is combined with others, as the public docs require, so that the order the edits are
 * listed in is the order they apply in.
 */
import { ServiceError } from './errors.js';
import type { ConversationRequest } from './request-schema.js';

export function checkContextEdits(request: ConversationRequest): void {
  const edits = request.context_management?.edits ?? [];
  const seen = new Set<string>();
  edits.forEach((edit, index) => {
    if (seen.has(edit.type))
      throw new ServiceError(
        'invalid_request',
        `context_management.edits.${index}.type: "${edit.type}" is given twice; give each edit once`,
      );
    seen.add(edit.type);
    if (edit.type === 'clear_thinking_20251015' && index > 0)
      throw new ServiceError(
        'invalid_request',
        `context_management.edits.${index}: clear_thinking_20251015 must come first in edits when combined with other edits`,
      );
  });
}
