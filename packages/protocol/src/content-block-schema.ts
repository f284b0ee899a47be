/**
 * The content blocks of a request's messages (request-schema.ts has the rest of the request),
 * strict like every object there: an unknown field is a 400, or dropped and named with the
 * config's `unknownFields: "ignore"`.
 */
import { z } from 'zod';
import { SERVER_TOOL_NAMES } from './constants.js';
import { cacheControl, jsonObject, nullMeansUnset } from './request-fields.js';

const citation = jsonObject;

export const textBlockParam = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  citations: z.array(citation).nullable().optional(),
  cache_control: cacheControl,
});

const imageSource = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('base64'),
    media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
    data: z.string(),
  }),
  z.strictObject({ type: z.literal('url'), url: z.string() }),
]);

export const imageBlockParam = z.strictObject({
  type: z.literal('image'),
  source: imageSource,
  cache_control: cacheControl,
});

const documentSource = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('base64'), media_type: z.literal('application/pdf'), data: z.string() }),
  z.strictObject({ type: z.literal('text'), media_type: z.literal('text/plain'), data: z.string() }),
  z.strictObject({ type: z.literal('url'), url: z.string() }),
  z.strictObject({ type: z.literal('content'), content: z.union([z.string(), z.array(textBlockParam)]) }),
]);

export const documentBlockParam = z.strictObject({
  type: z.literal('document'),
  source: documentSource,
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  citations: z.strictObject({ enabled: z.boolean().optional() }).nullable().optional(),
  cache_control: cacheControl,
});

const toolCaller = jsonObject.optional();

export const toolUseBlockParam = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: jsonObject,
  caller: toolCaller,
  cache_control: cacheControl,
});

/**
 * What a client's tool search gives back (Claude Code's ToolSearch): the tool named becomes
 * available to the model, a `defer_loading` tool included (server call-builder/tool-table.ts).
 */
export const toolReferenceBlockParam = z.strictObject({
  type: z.literal('tool_reference'),
  tool_name: z.string().min(1),
  cache_control: cacheControl,
});

export const toolResultBlockParam = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z
    .union([
      z.string(),
      z.array(
        z.discriminatedUnion('type', [textBlockParam, imageBlockParam, documentBlockParam, toolReferenceBlockParam]),
      ),
    ])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});

export const thinkingBlockParam = z.strictObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});

export const redactedThinkingBlockParam = z.strictObject({
  type: z.literal('redacted_thinking'),
  data: z.string(),
});

export const serverToolUseBlockParam = z.strictObject({
  type: z.literal('server_tool_use'),
  id: z.string().min(1),
  name: z.enum(Object.values(SERVER_TOOL_NAMES)),
  input: jsonObject,
  caller: toolCaller,
  cache_control: cacheControl,
});

/** Result blocks of server tools are "not shown" in the spec; their inner shape is the tools' own. */
function serverToolResultBlockParam<Type extends string>(type: Type) {
  return z.strictObject({
    type: z.literal(type),
    tool_use_id: z.string().min(1),
    content: z.union([jsonObject, z.array(jsonObject)]),
    cache_control: cacheControl,
  });
}

export const webSearchToolResultBlockParam = serverToolResultBlockParam('web_search_tool_result');
export const webFetchToolResultBlockParam = serverToolResultBlockParam('web_fetch_tool_result');
export const codeExecutionToolResultBlockParam = serverToolResultBlockParam('code_execution_tool_result');

/**
 * Tool search's result (issue 34): the tools it found, as `tool_reference`s that load them (the
 * server's call-builder/tool-table.ts), or its error. Its content is read, so its shape is checked.
 */
export const toolSearchToolResultBlockParam = z.strictObject({
  type: z.literal('tool_search_tool_result'),
  tool_use_id: z.string().min(1),
  content: z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('tool_search_tool_search_result'),
      tool_references: z.array(toolReferenceBlockParam),
    }),
    z.strictObject({
      type: z.literal('tool_search_tool_result_error'),
      // The public codes (SDK 1.x ToolSearchToolResultErrorCode); this service writes the first two.
      error_code: z.enum(['invalid_tool_input', 'unavailable', 'too_many_requests', 'execution_time_exceeded']),
      error_message: z.string().nullable().optional(),
    }),
  ]),
  cache_control: cacheControl,
});

/**
 * A compaction block (context_management `compact_20260112`, issue 34): the summary that the
 * request's model wrote of everything before it, signed by this service. The conversation the
 * model reads starts at the last one with content (the server's call-builder/conversation.ts);
 * one whose content is null is a compaction that failed, which changes nothing, as the public
 * API has it. Mid-conversation tool changes are not built, so no tool changes come with it; the
 * summary is in the clear, so no encrypted_content either.
 */
export const compactionBlockParam = z.strictObject({
  type: z.literal('compaction'),
  content: z.string().min(1, 'must not be empty; null stands for a compaction that failed').nullable().optional(),
  // This service writes the summary in the clear and signs it; it never writes encrypted_content,
  // so one that carries some was not returned by it.
  encrypted_content: z
    .string()
    .max(
      0,
      'this service writes no encrypted_content (it is null in the blocks it returns); send compaction blocks back exactly as returned',
    )
    .nullable()
    .optional(),
  signature: z.string().nullable().optional(),
  tool_changes: z
    .array(jsonObject)
    .max(0, 'mid-conversation tool changes are not built here; this service never returns any')
    .nullable()
    .optional(),
  cache_control: cacheControl,
});

export const contentBlockParam = z.discriminatedUnion('type', [
  textBlockParam,
  imageBlockParam,
  documentBlockParam,
  toolUseBlockParam,
  toolResultBlockParam,
  thinkingBlockParam,
  redactedThinkingBlockParam,
  serverToolUseBlockParam,
  webSearchToolResultBlockParam,
  webFetchToolResultBlockParam,
  codeExecutionToolResultBlockParam,
  toolSearchToolResultBlockParam,
  compactionBlockParam,
]);

export type ContentBlockParam = z.infer<typeof contentBlockParam>;
export type CompactionBlockParam = z.infer<typeof compactionBlockParam>;
export type ToolReferenceBlockParam = z.infer<typeof toolReferenceBlockParam>;
