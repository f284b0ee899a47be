/** `POST /v1/messages/count_tokens`: the same validation and rules, then the backend's tokenizer. */
import type { FastifyInstance } from 'fastify';
import { checkConversationRules, parseCountTokensRequest, type CountTokensResponse } from '@mms/protocol';
import type { ModelRegistry } from '../../models/model-registry.js';

export function registerCountTokensRoute(app: FastifyInstance, registry: ModelRegistry): void {
  app.post('/v1/messages/count_tokens', async (request): Promise<CountTokensResponse> => {
    const body = parseCountTokensRequest(request.body);
    const entry = registry.resolve(body.model);
    checkConversationRules(body, entry.profile);
    return { input_tokens: await entry.backend.countTokens(body, entry.profile) };
  });
}
