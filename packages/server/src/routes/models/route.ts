/** `GET /v1/models` (paged as the public API pages it) and `GET /v1/models/{id}` (ids and aliases). */
import type { FastifyInstance } from 'fastify';
import { ServiceError, type ModelInfo } from '@mms/protocol';
import type { ModelRegistry } from '../../models/model-registry.js';

interface ListQuery {
  limit?: string;
  after_id?: string;
  before_id?: string;
}

export function registerModelsRoutes(app: FastifyInstance, registry: ModelRegistry): void {
  app.get<{ Querystring: ListQuery }>('/v1/models', async (request) => listPage(registry, request.query));
  app.get<{ Params: { id: string } }>('/v1/models/:id', async (request) => registry.info(registry.resolve(request.params.id)));
}

function listPage(registry: ModelRegistry, query: ListQuery) {
  const all: ModelInfo[] = registry.entries.map((entry) => registry.info(entry));
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ServiceError('invalid_request', 'limit: must be an integer from 1 to 1000');
  let start = 0;
  let end = all.length;
  if (query.after_id !== undefined) start = indexOf(all, query.after_id, 'after_id') + 1;
  if (query.before_id !== undefined) end = indexOf(all, query.before_id, 'before_id');
  const page = query.before_id !== undefined ? all.slice(Math.max(start, end - limit), end) : all.slice(start, Math.min(end, start + limit));
  const hasMore = query.before_id !== undefined ? end - limit > start : start + limit < end;
  return { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
}

function indexOf(models: readonly ModelInfo[], id: string, field: string): number {
  const index = models.findIndex((model) => model.id === id);
  if (index < 0) throw new ServiceError('invalid_request', `${field}: ${id} is not a configured model id`);
  return index;
}
