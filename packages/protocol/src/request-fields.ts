/**
 * Field shapes the request schemas share (request-schema.ts, content-block-schema.ts): not part
 * of the package's exports.
 */
import { z } from 'zod';

export const cacheControl = z
  .strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .nullable()
  .optional();

export const jsonObject = z.record(z.string(), z.unknown());

/**
 * A field the official client types as `| null`, where null means unset: it parses to absent,
 * so the code after parsing knows one "unset" and its `=== undefined` checks hold.
 */
export function nullMeansUnset<Schema extends z.ZodType>(schema: Schema) {
  return schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();
}
