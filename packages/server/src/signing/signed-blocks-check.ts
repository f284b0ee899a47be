/**
 * The checks on the way in that need the signing key, so that they live in the service and not
 * in the protocol package (the calling client cannot verify; it checks shapes only). Run by the
 * messages and count_tokens routes after parsing and the endpoint rules:
 *
 * - Web search results whose content verifies become readable to the model
 *   (tools/web-search/encrypted-content.ts); others stay unreadable, and are not refused.
 */
import type { ConversationRequest } from '@mms/protocol';
import { admitSearchResults } from '../tools/web-search/encrypted-content.js';
import type { Signer } from './signer.js';

export function checkSignedBlocks(request: ConversationRequest, signer: Signer): void {
  request.messages.forEach((message) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block) => {
      if (block.type === 'web_search_tool_result') admitSearchResults(block.content, signer);
    });
  });
}
