/**
 * The JSON Schemas the repo publishes, generated from the zod sources. `npm run schemas`
 * writes them; a test fails when a committed file drifts from its source.
 */
import { z } from 'zod';
import { countTokensRequest, messageRequest } from '@model-messages/protocol';
import { serviceConfig } from '@model-messages/server';

export const PUBLISHED_SCHEMAS: ReadonlyArray<{ path: string; schema: z.ZodType; title: string }> = [
  {
    path: 'packages/protocol/schema/message-request.schema.json',
    schema: messageRequest,
    title: 'POST /v1/messages request body',
  },
  {
    path: 'packages/protocol/schema/count-tokens-request.schema.json',
    schema: countTokensRequest,
    title: 'POST /v1/messages/count_tokens request body',
  },
  { path: 'packages/server/config.schema.json', schema: serviceConfig, title: 'mms service config' },
];

export function renderSchema(entry: (typeof PUBLISHED_SCHEMAS)[number]): string {
  const json = z.toJSONSchema(entry.schema, { io: 'input', unrepresentable: 'any' });
  return `${JSON.stringify({ ...json, title: entry.title }, null, 2)}\n`;
}
