/**
 * The service's one JSON config file. Field names are fixed (issue 2) so that configs written
 * today keep working. The published JSON Schema (packages/server/config.schema.json) is
 * generated from this and kept in step by a test.
 */
import { z } from 'zod';
import { backendConfig } from '../backends/backend-config.js';

export const modelConfig = z.strictObject({
  id: z.string().min(1).describe('The model identifier clients send.'),
  aliases: z.array(z.string().min(1)).default([]).describe('Other names that resolve to this model.'),
  displayName: z.string().min(1).optional(),
  tier: z.enum(['small', 'mid', 'large']),
  generation: z.enum(['older', 'newer']),
  contextWindow: z.int().min(1).describe('Context window in tokens.'),
  maxOutputTokens: z.int().min(1).describe('Largest max_tokens a request may ask for.'),
  backend: backendConfig,
});

const webFetchConfig = z.strictObject({
  allowNetworks: z.array(z.string().regex(/^[0-9a-fA-F.:]+(\/\d{1,3})?$/, 'must be an address or CIDR, e.g. 10.0.0.0/8')).default([]).describe('Networks web fetch may reach although they are private or loopback; empty by default.'),
  maxBytes: z.int().min(1024).default(10 * 1024 * 1024).describe('Largest page body read; longer pages are cut.'),
  maxRedirects: z.int().min(0).max(10).default(3),
  timeoutMs: z.int().min(100).default(15_000).describe('Connect, headers and body time limit per fetch.'),
});

export const serviceConfig = z.strictObject({
  $schema: z.string().optional(),
  listen: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: z.int().min(0).max(65535).default(8080),
    })
    .default({ host: '127.0.0.1', port: 8080 }),
  apiKeys: z.array(z.string().min(8, 'an API key must have at least 8 characters')).default([]),
  models: z.array(modelConfig).min(1),
  /** SSE keep-alive: a ping this often while a stream has nothing else to send. */
  pingIntervalMs: z.int().min(100).default(10_000),
  serverTools: z.strictObject({ webFetch: webFetchConfig.prefault({}) }).prefault({}),
  /** Most backend steps in one turn before the answer is `pause_turn`. */
  maxSteps: z.int().min(1).max(100).default(10),
});

export type ServiceConfig = z.infer<typeof serviceConfig>;
export type ServiceConfigInput = z.input<typeof serviceConfig>;
export type ModelConfig = z.infer<typeof modelConfig>;
