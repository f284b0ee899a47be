/**
 * The request shapes of `POST /v1/messages` and `POST /v1/messages/count_tokens` (their
 * messages' content blocks in content-block-schema.ts).
 *
 * One schema source: these zod schemas give the TypeScript types (z.infer), the runtime
 * validator (parse-request.ts) and the published JSON Schema (schema/*.json, kept in step by a
 * test). Shapes the spec leaves "not shown" follow the public Messages API so that the official
 * client's requests validate (docs/compatibility.md says, field by field, what each does here).
 * Every object is strict: an unknown field is a 400, or with the config's `unknownFields: "ignore"`
 * dropped and named in a reply header (parse-request.ts), never silently.
 */
import { z } from 'zod';
import { ALLOWED_CALLERS, COMPACTION_TRIGGER, SERVER_TOOL_NAMES, SERVER_TOOL_VERSIONS } from './constants.js';
import { contentBlockParam, textBlockParam } from './content-block-schema.js';
import { cacheControl, jsonObject, nullMeansUnset } from './request-fields.js';

export const systemParam = z.union([z.string(), z.array(textBlockParam)]);

export const EFFORT_LEVELS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type Effort = (typeof EFFORT_LEVELS)[number];
const effort = nullMeansUnset(z.enum(EFFORT_LEVELS));

/**
 * A `system` message (Claude Code sends its environment notes and reminders so): an instruction
 * that stands at its place in the conversation, text only. As the public API's per-turn control
 * has it, it may set the effort from there on (`output_config.effort`), and with `clear_at:
 * "next_user_message"` it is shown only until a later user message exists.
 */
export const systemMessageParam = z
  .strictObject({
    role: z.literal('system'),
    content: systemParam.optional(),
    output_config: nullMeansUnset(z.strictObject({ effort })),
    clear_at: nullMeansUnset(z.enum(['next_user_message', 'never'])),
  })
  .refine((message) => message.content !== undefined || message.output_config !== undefined, {
    message: 'a system message needs content or output_config',
  });

/** `user` and `assistant` turns, and `system` messages in between. */
export const messageParam = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('user'), content: z.union([z.string(), z.array(contentBlockParam)]) }),
  z.strictObject({ role: z.literal('assistant'), content: z.union([z.string(), z.array(contentBlockParam)]) }),
  systemMessageParam,
]);

/** Public API rule for tool names; the spec does not narrow it. */
const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$');

export const customToolParam = z.strictObject({
  type: nullMeansUnset(z.literal('custom')),
  name: toolName,
  // Spec, "custom tool": description is required.
  description: z.string(),
  strict: z.boolean().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  cache_control: cacheControl,
  /** Offered to the model only once a `tool_reference` in a tool result names it (or tool_choice does). */
  defer_loading: z.boolean().optional(),
  /** How the input streams: this service streams every call's input as it is generated anyway. */
  eager_input_streaming: z.boolean().nullable().optional(),
  /** Example inputs, shown to the model with the tool's description. */
  input_examples: z.array(jsonObject).optional(),
});

const allowedCallers = z.array(z.enum(ALLOWED_CALLERS)).min(1).optional();
// The official client types these lists as nullable; null means unset.
const domainList = z.array(z.string().min(1)).nullable().optional();
const maxUses = nullMeansUnset(z.int().min(1));

/**
 * Fields every server tool takes (SDK 1.x): a cache breakpoint; `defer_loading`, which leaves it
 * out of what the model is told until tool search finds it; `strict`, which holds the model's
 * call to the tool's input schema, as for a custom tool.
 */
const serverToolFields = {
  cache_control: cacheControl,
  defer_loading: z.boolean().optional(),
  strict: z.boolean().optional(),
};

/**
 * How a result of a call code made (programmatic tool calling) shows in the reply, from the
 * 2026-03-18 versions on: here such results go to the code alone, which is `excluded`; endpoint
 * rules refuse `full` where code may call the tool (issue 34).
 */
const responseInclusion = z.enum(['full', 'excluded']).optional();

/** Where the user is, for results near them; the provider gets what it can use (tools/web-search/). */
const userLocation = z.strictObject({
  type: z.literal('approximate'),
  city: z.string().min(1).max(255).nullable().optional(),
  region: z.string().min(1).max(255).nullable().optional(),
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$/, 'must be a two-letter ISO 3166-1 country code, such as US')
    .nullable()
    .optional(),
  timezone: z.string().refine(isTimeZone, 'must be an IANA time zone, such as America/New_York').nullable().optional(),
});

/**
 * Web search, every version served (SERVER_TOOL_VERSIONS): the fields are the same but for
 * `response_inclusion`, which only 20260318 has (endpoint-rules.ts refuses it on the others).
 */
export const webSearchToolParam = z.strictObject({
  type: z.enum(SERVER_TOOL_VERSIONS.webSearch),
  name: z.literal(SERVER_TOOL_NAMES.webSearch),
  max_uses: maxUses,
  allowed_callers: allowedCallers,
  allowed_domains: domainList,
  blocked_domains: domainList,
  user_location: userLocation.nullable().optional(),
  response_inclusion: responseInclusion,
  ...serverToolFields,
});

/** Web fetch, every version served: `use_cache` came with 20260309, `response_inclusion` with 20260318. */
export const webFetchToolParam = z.strictObject({
  type: z.enum(SERVER_TOOL_VERSIONS.webFetch),
  name: z.literal(SERVER_TOOL_NAMES.webFetch),
  max_uses: maxUses,
  max_content_tokens: nullMeansUnset(z.int().min(1)),
  allowed_callers: allowedCallers,
  allowed_domains: domainList,
  blocked_domains: domainList,
  citations: z.strictObject({ enabled: z.boolean().optional() }).nullable().optional(),
  /** Whether a cached copy may answer: this service keeps none, so every fetch is fresh either way. */
  use_cache: z.boolean().optional(),
  response_inclusion: responseInclusion,
  ...serverToolFields,
});

export const codeExecutionToolParam = z.strictObject({
  type: z.enum(SERVER_TOOL_VERSIONS.codeExecution),
  name: z.literal(SERVER_TOOL_NAMES.codeExecution),
  ...serverToolFields,
});

/** Tool search over the request's deferred tools (issue 34), by a regular expression or by BM25. */
export const toolSearchToolParam = z.discriminatedUnion('name', [
  z.strictObject({
    type: z.enum(SERVER_TOOL_VERSIONS.toolSearchRegex),
    name: z.literal(SERVER_TOOL_NAMES.toolSearchRegex),
    ...serverToolFields,
  }),
  z.strictObject({
    type: z.enum(SERVER_TOOL_VERSIONS.toolSearchBm25),
    name: z.literal(SERVER_TOOL_NAMES.toolSearchBm25),
    ...serverToolFields,
  }),
]);

export const toolParam = z.discriminatedUnion('type', [
  customToolParam,
  webSearchToolParam,
  webFetchToolParam,
  codeExecutionToolParam,
  ...toolSearchToolParam.options,
]);

const disableParallelToolUse = z.boolean().optional();

export const toolChoiceParam = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: disableParallelToolUse }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: disableParallelToolUse }),
  z.strictObject({
    type: z.literal('tool'),
    name: z.string().min(1),
    disable_parallel_tool_use: disableParallelToolUse,
  }),
  z.strictObject({ type: z.literal('none') }),
]);

/** `omitted`: the model thinks, and its blocks come back with empty text and a signature that keeps it. */
const thinkingDisplay = nullMeansUnset(z.enum(['summarized', 'omitted']));

export const thinkingParam = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('adaptive'), display: thinkingDisplay }),
  z.strictObject({ type: z.literal('disabled') }),
  // Not in the spec, but the public API and its official client have it.
  z.strictObject({ type: z.literal('enabled'), budget_tokens: z.int().min(1024), display: thinkingDisplay }),
]);

export const outputConfigParam = z.strictObject({
  format: nullMeansUnset(
    z.strictObject({ type: z.literal('json_schema'), schema: z.looseObject({ type: z.literal('object') }) }),
  ),
  /** How much the model may think: a share of the output budget (backends/call/thinking-budget.ts). */
  effort,
});

/** Which earlier thinking the model sees again: the last `value` assistant turns' thinking, or all. */
const thinkingKeep = z.union([
  z.literal('all'),
  z.strictObject({ type: z.literal('all') }),
  z.strictObject({ type: z.literal('thinking_turns'), value: z.int().min(1) }),
]);

/** A count of input tokens, as the context edits' triggers and floors give one. */
function inputTokens(minimum: number) {
  return z.strictObject({ type: z.literal('input_tokens'), value: z.int().min(minimum) });
}

const toolUses = (minimum: number) => z.strictObject({ type: z.literal('tool_uses'), value: z.int().min(minimum) });

/** Leaves the thinking of older assistant turns out of the prompt (call-builder/context-management.ts). */
export const clearThinkingEditParam = z.strictObject({
  type: z.literal('clear_thinking_20251015'),
  keep: thinkingKeep.optional(),
});

/**
 * Clears the oldest tool results once the prompt passes a trigger (issue 34; the public docs'
 * defaults are applied where the server reads them: call-builder/tool-use-clearing.ts).
 */
export const clearToolUsesEditParam = z.strictObject({
  type: z.literal('clear_tool_uses_20250919'),
  trigger: z.discriminatedUnion('type', [inputTokens(1), toolUses(1)]).optional(),
  keep: toolUses(0).optional(),
  clear_at_least: inputTokens(1).nullable().optional(),
  exclude_tools: z.array(z.string().min(1)).nullable().optional(),
  clear_tool_inputs: z
    .union([z.boolean(), z.array(z.string().min(1))])
    .nullable()
    .optional(),
});

/** Has the request's model summarize the conversation once the prompt passes a trigger (issue 34). */
export const compactEditParam = z.strictObject({
  type: z.literal('compact_20260112'),
  trigger: inputTokens(COMPACTION_TRIGGER.minTokens).nullable().optional(),
  pause_after_compaction: z.boolean().optional(),
  /** Replaces the service's own summarization prompt: an empty or blank value counts as unset. */
  instructions: z.string().nullable().optional(),
});

export const contextManagementParam = z.strictObject({
  edits: z
    .array(z.discriminatedUnion('type', [clearThinkingEditParam, clearToolUsesEditParam, compactEditParam]))
    .optional(),
});

const conversationFields = {
  model: z.string().min(1),
  messages: z.array(messageParam).min(1),
  system: systemParam.optional(),
  tools: z.array(toolParam).optional(),
  tool_choice: toolChoiceParam.optional(),
  thinking: thinkingParam.optional(),
  output_config: outputConfigParam.optional(),
  context_management: nullMeansUnset(contextManagementParam),
  /** A prefix-caching hint for the whole request, as the blocks' own `cache_control`. */
  cache_control: cacheControl,
};

export const messageRequest = z.strictObject({
  ...conversationFields,
  max_tokens: z.int().min(1),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string().min(1)).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.int().min(0).optional(),
  metadata: z.strictObject({ user_id: z.string().nullable().optional() }).optional(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  // Accepted and ignored, each for a reason docs/compatibility.md gives: one place, one speed,
  // no workspaces or user profiles, no cache diagnostics (the reply's `diagnostics` is null).
  inference_geo: z.string().nullable().optional(),
  speed: z.enum(['standard', 'fast']).nullable().optional(),
  user_profile_id: z.string().optional(),
  workspace_id: z.string().optional(),
  diagnostics: jsonObject.nullable().optional(),
});

export const countTokensRequest = z.strictObject(conversationFields);

export type MessageRequest = z.infer<typeof messageRequest>;
export type CountTokensRequest = z.infer<typeof countTokensRequest>;
/** What count_tokens and the message endpoint share: enough to render a prompt. */
export type ConversationRequest = CountTokensRequest;
export type MessageParam = z.infer<typeof messageParam>;
export type ToolParam = z.infer<typeof toolParam>;
export type CustomToolParam = z.infer<typeof customToolParam>;
export type WebSearchToolParam = z.infer<typeof webSearchToolParam>;
export type WebFetchToolParam = z.infer<typeof webFetchToolParam>;
export type CodeExecutionToolParam = z.infer<typeof codeExecutionToolParam>;
export type ToolSearchToolParam = z.infer<typeof toolSearchToolParam>;
export type ClearToolUsesEditParam = z.infer<typeof clearToolUsesEditParam>;
export type CompactEditParam = z.infer<typeof compactEditParam>;
export type UserLocation = z.infer<typeof userLocation>;
export type ToolChoiceParam = z.infer<typeof toolChoiceParam>;
export type ThinkingParam = z.infer<typeof thinkingParam>;
export type SystemParam = z.infer<typeof systemParam>;
export type ContextManagementParam = z.infer<typeof contextManagementParam>;

/** An IANA time zone name that this runtime knows (Intl reads the same database). */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
