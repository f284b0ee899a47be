/**
 * `GET /v1/models` (paged as the public API pages it) and `GET /v1/models/{id}` (ids and aliases):
 * of a key with `models`, only those it may use (keys/model-permission.ts). A model with
 * `listAs` is listed under those ids rather than its own (issue 34): a client that picks from the
 * list, as Claude Code's picker does from the ids that begin with `claude`, sees the ids it should
 * send, and each resolves to the model. The list is built from memory: it answers at once, well
 * inside the 3 s that Claude Code waits for it at start.
 */
import { ServiceError, type ModelInfo } from '@model-messages/protocol';
import type { Router } from '../../http/router.js';
import { permitsEntry, resolvePermitted, type ModelPermission } from '../../keys/model-permission.js';
import type { ModelRegistry } from '../../models/model-registry.js';

interface ListQuery {
  limit?: string;
  after_id?: string;
  before_id?: string;
}

export function registerModelsRoutes(router: Router, registry: ModelRegistry): void {
  router.get('/v1/models', async (context) => ({
    body: listPage(registry, context.key?.models, listQuery(context.query)),
  }));
  router.get('/v1/models/:id', async (context) => {
    const name = context.params.id ?? '';
    const entry = resolvePermitted(registry, context.key?.models, name);
    // Asked by an id it is listed as, the model answers under that id, as the list shows it.
    return { body: registry.info(entry, entry.listedIds.includes(name) ? name : entry.profile.id) };
  });
}

/** The paging parameters; one given twice is refused rather than one of its values picked. */
function listQuery(query: string): ListQuery {
  const parameters = new URLSearchParams(query);
  const read = (name: keyof ListQuery): string | undefined => {
    const values = parameters.getAll(name);
    if (values.length > 1) throw new ServiceError('invalid_request', `${name}: give it once`);
    return values[0];
  };
  return { limit: read('limit'), after_id: read('after_id'), before_id: read('before_id') };
}

function listPage(registry: ModelRegistry, permission: ModelPermission | undefined, query: ListQuery) {
  const all: ModelInfo[] = registry.entries
    .filter((entry) => permitsEntry(permission, entry))
    .flatMap((entry) => entry.listedIds.map((id) => registry.info(entry, id)));
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new ServiceError('invalid_request', 'limit: must be an integer from 1 to 1000');
  let start = 0;
  let end = all.length;
  if (query.after_id !== undefined) start = indexOf(all, query.after_id, 'after_id') + 1;
  if (query.before_id !== undefined) end = indexOf(all, query.before_id, 'before_id');
  const page =
    query.before_id !== undefined
      ? all.slice(Math.max(start, end - limit), end)
      : all.slice(start, Math.min(end, start + limit));
  const hasMore = query.before_id !== undefined ? end - limit > start : start + limit < end;
  return { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
}

function indexOf(models: readonly ModelInfo[], id: string, field: string): number {
  const index = models.findIndex((model) => model.id === id);
  if (index < 0) throw new ServiceError('invalid_request', `${field}: ${id} is not a configured model id`);
  return index;
}
