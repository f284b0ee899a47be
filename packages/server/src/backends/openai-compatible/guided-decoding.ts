/**
 * The request fields that carry a JSON Schema to each engine's own guided decoding, and those
 * that switch thinking on or off. The choice per engine and why: engine-profiles.ts.
 */
import type { ChatCompletionRequest } from './chat-types.js';
import type { EngineProfile } from './engine-profiles.js';

export function guidedFields(
  profile: EngineProfile,
  schema: Record<string, unknown> | undefined,
): Partial<ChatCompletionRequest> {
  if (!schema) return {};
  switch (profile.guidedField) {
    case 'response_format':
      return { response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } } };
    case 'json_schema':
      return { json_schema: schema };
    case undefined:
      return {};
    default:
      return profile.guidedField satisfies never;
  }
}

export function thinkingFields(
  profile: EngineProfile,
  configured: { on: Record<string, unknown>; off: Record<string, unknown> } | undefined,
  thinks: boolean,
): Record<string, unknown> {
  const fields = configured ?? profile.thinkingSwitch;
  return thinks ? fields.on : fields.off;
}
