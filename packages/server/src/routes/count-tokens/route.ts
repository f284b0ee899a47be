/** `POST /v1/messages/count_tokens`: the same validation and rules, then the backend's tokenizer. */
import { checkConversationRules, parseCountTokensRequest, type CountTokensResponse } from '@mms/protocol';
import { readJsonBody } from '../../http/request-body.js';
import type { Router } from '../../http/router.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { buildModelPrompt } from '../../backends/call/build-model-call.js';

export function registerCountTokensRoute(router: Router, registry: ModelRegistry): void {
  router.post('/v1/messages/count_tokens', async (context) => {
    const body = parseCountTokensRequest(await readJsonBody(context.request));
    const entry = registry.resolve(body.model);
    checkConversationRules(body, entry.profile);
    const counted: CountTokensResponse = {
      input_tokens: await entry.backend.countTokens(buildModelPrompt(body, entry.profile)),
    };
    return { body: counted };
  });
}
