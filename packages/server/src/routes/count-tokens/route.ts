/**
 * `POST /v1/messages/count_tokens`: the same validation, rules and signature checks, the same
 * context edits (issue 34: the count is of what the model would read, and a request that sent
 * `context_management` is told the count before them too, `original_input_tokens`, as the public
 * API tells it), then the backend's tokenizer, and the same refusal of a prompt over the context
 * window. A compaction is not written here: it would take a generation. A model outside the key's
 * `models` is refused as the messages route refuses it; the key's limits do not apply.
 */
import { checkConversationRules, parseCountTokensRequest, type CountTokensResponse } from '@model-messages/protocol';
import { ignoredFieldsHeader } from '../../http/ignored-fields-header.js';
import { readJsonBody } from '../../http/request-body.js';
import type { Router } from '../../http/router.js';
import { resolvePermitted } from '../../keys/model-permission.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { buildModelPrompt } from '../../call-builder/build-model-call.js';
import { editedPrompt } from '../../call-builder/context-management.js';
import { promptTooLong } from '../../backends/prompt-too-long.js';
import { traceTokenCount } from '../../observability/tracing.js';
import { checkSignedBlocks } from '../../signing/signed-blocks-check.js';
import type { Signer } from '../../signing/signer.js';

export function registerCountTokensRoute(
  router: Router,
  registry: ModelRegistry,
  signer: Signer,
  unknownFields: 'refuse' | 'ignore',
): void {
  router.post('/v1/messages/count_tokens', async (context) => {
    const ignoredFields: string[] = [];
    const body = parseCountTokensRequest(
      await readJsonBody(context.request, context.bodyMemory),
      unknownFields === 'ignore' ? ignoredFields : undefined,
    );
    context.record.requestedModel = body.model;
    const entry = resolvePermitted(registry, context.key?.models, body.model);
    const model = entry.profile.id;
    context.record.model = model;
    checkConversationRules(body, entry.profile);
    // Before the prompt is built: it reads only the search content the check admitted.
    checkSignedBlocks(body, signer);
    const edited = await editedPrompt(body, buildModelPrompt(body, entry.profile), entry.profile, (prompt) =>
      traceTokenCount(context.record, entry.backend, model, () => entry.backend.countTokens(prompt, 'exact')),
    );
    const tokens = edited.inputTokens;
    // As the messages route answers it: a backend may refuse a prompt that cannot fit before it
    // has counted all of it, so a count past the window is refused too, whoever counted it.
    if (tokens > entry.profile.contextWindow) throw promptTooLong(tokens, entry.profile.contextWindow, 'exact');
    const counted: CountTokensResponse = {
      input_tokens: tokens,
      ...(body.context_management === undefined
        ? {}
        : { context_management: { original_input_tokens: edited.originalInputTokens } }),
    };
    return { body: counted, headers: ignoredFieldsHeader(ignoredFields) };
  });
}
