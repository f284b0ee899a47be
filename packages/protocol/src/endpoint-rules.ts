/**
 * The rules of `POST /v1/messages` (spec: "Rules tied to this endpoint", Errors, Versioning) as
 * pure functions over a parsed request and the model it names. Each refusal is a ServiceError
 * whose message names the rule, so a caller can tell which one it broke.
 */
import { checkBlockRoles } from './block-roles.js';
import { callableFromCode, whyCallableFromCode } from './callable-from-code.js';
import { checkCompactionPoint, endsOnCompaction } from './compaction-point.js';
import { SERVER_TOOL_RESULT_TYPES } from './constants.js';
import { checkContextEdits } from './context-edit-rules.js';
import { parseDomainEntry } from './domain-entry.js';
import { checkEmptyContent } from './empty-content.js';
import { ServiceError } from './errors.js';
import type { ModelProfile } from './model-profile.js';
import type {
  ConversationRequest,
  CustomToolParam,
  MessageParam,
  MessageRequest,
  ToolParam,
} from './request-schema.js';
import { checkSchemaDocument, compileSchema } from './json-schema-validator.js';
import { checkServerToolRules } from './server-tool-rules.js';
import { findSchemaProblem } from './strict-schema.js';
import { checkToolPairing } from './tool-pairing.js';
import { toolReferences } from './tool-references.js';
import { isWebFetchTool, isWebSearchTool } from './tool-types.js';
import { usesTools } from './tool-use.js';

export function isCustomTool(tool: ToolParam): tool is CustomToolParam {
  return tool.type === undefined || tool.type === 'custom';
}

/** Every rule of a conversation on a model. Shared by count_tokens and messages. */
export function checkConversationRules(request: ConversationRequest, model: ModelProfile): void {
  checkTurnsPresent(request);
  checkBlockRoles(request.messages);
  checkEmptyContent(request.messages);
  checkToolSchemas(request);
  checkToolNames(request);
  checkServerToolRules(request);
  checkDomainLists(request);
  checkToolChoice(request);
  checkStrictThinking(request);
  checkForcedThinking(request);
  checkProgrammaticCalling(request);
  // Pairing before rule 4: a conversation's tool blocks count as tool use for rule 4, and one
  // whose blocks do not pair is better told so than told it ends on a prefill.
  checkToolPairing(request.messages);
  checkCompactionPoint(request.messages);
  checkPrefill(request);
  checkToolReferences(request);
  checkContextEdits(request);
  checkThinkingForModel(request, model);
}

/**
 * The conversation rules plus those of the output budget. Answers the request to run: the one
 * given, or, on a model that clamps, a copy whose max_tokens is lowered to the model's limit.
 * The lowering comes before the rules, so that they judge the budget the turn will have.
 */
export function checkMessageRules(request: MessageRequest, model: ModelProfile): MessageRequest {
  const granted = grantMaxTokens(request, model);
  checkConversationRules(granted, model);
  checkOutputBudget(granted, request.max_tokens, model);
  return granted;
}

/** Lowers a max_tokens above the limit to the limit, on a model configured to clamp. */
function grantMaxTokens(request: MessageRequest, model: ModelProfile): MessageRequest {
  if (model.maxTokens !== 'clamp' || request.max_tokens <= model.maxOutputTokens) return request;
  return { ...request, max_tokens: model.maxOutputTokens };
}

/** `system` messages are instructions beside a conversation: there must be one to stand beside. */
function checkTurnsPresent(request: ConversationRequest): void {
  if (request.messages.every((message) => message.role === 'system'))
    throw new ServiceError('invalid_request', 'messages: at least one user or assistant message is required');
}

/**
 * Rule 1, plus size and depth caps on every schema. A schema is compiled only where something
 * validates against it: a strict tool's input and the output format. A non-strict tool's schema
 * is only shown to the model, so it is checked against its meta-schema and never compiled (issue
 * 31: compiling such schemas was the whole cost of a crash).
 */
function checkToolSchemas(request: ConversationRequest): void {
  (request.tools ?? []).forEach((tool, index) => {
    if (!isCustomTool(tool)) return;
    const strict = tool.strict === true;
    checkSchema(tool.input_schema, `tools.${index}.input_schema`, strict, strict ? 'validated' : 'shown');
  });
  const format = request.output_config?.format;
  if (format) checkSchema(format.schema, 'output_config.format.schema', false, 'validated');
}

function checkSchema(schema: unknown, where: string, strict: boolean, use: 'validated' | 'shown'): void {
  const problem = findSchemaProblem(schema, { strict });
  if (problem) {
    const code = problem.keyword ? 'strict_schema_keyword' : 'invalid_request';
    throw new ServiceError(code, `${[where, problem.path].filter(Boolean).join('.')}: ${problem.message}`);
  }
  // Only after the caps: a schema Ajv cannot compile is refused here, not when a backend uses it.
  if (use === 'validated') compileSchema(schema, where);
  else checkSchemaDocument(schema, where);
}

function checkToolNames(request: ConversationRequest): void {
  const seen = new Set<string>();
  for (const tool of request.tools ?? []) {
    if (seen.has(tool.name))
      throw new ServiceError('invalid_request', `tools: tool names must be unique; "${tool.name}" appears twice`);
    seen.add(tool.name);
  }
}

/**
 * `allowed_domains` and `blocked_domains` of web search and web fetch: the public API takes one
 * or the other, never both on one tool, and an entry is a bare domain (optionally with a path),
 * never a URL with a scheme.
 */
function checkDomainLists(request: ConversationRequest): void {
  (request.tools ?? []).forEach((tool, index) => {
    if (!isWebSearchTool(tool) && !isWebFetchTool(tool)) return;
    if (tool.allowed_domains != null && tool.blocked_domains != null) {
      throw new ServiceError(
        'invalid_request',
        `tools.${index}: allowed_domains and blocked_domains cannot be used together on "${tool.name}"; give one of them`,
      );
    }
    for (const field of ['allowed_domains', 'blocked_domains'] as const) {
      (tool[field] ?? []).forEach((entry, position) => {
        if (!parseDomainEntry(entry)) {
          throw new ServiceError(
            'invalid_request',
            `tools.${index}.${field}.${position}: "${entry}" is not a domain; give a host without a scheme, such as example.com or example.com/blog`,
          );
        }
      });
    }
  });
}

function checkToolChoice(request: ConversationRequest): void {
  const choice = request.tool_choice;
  if (!choice || choice.type === 'auto' || choice.type === 'none') return;
  const tools = request.tools ?? [];
  if (tools.length === 0) {
    throw new ServiceError('invalid_request', `tool_choice: type "${choice.type}" needs at least one tool in tools`);
  }
  if (choice.type === 'tool' && !tools.some((tool) => tool.name === choice.name)) {
    throw new ServiceError(
      'invalid_request',
      `tool_choice.name: "${choice.name}" is not among the tools (${tools.map((tool) => tool.name).join(', ')})`,
    );
  }
}

/** The tool a forced tool_choice makes the model call, when it is strict. */
function forcedStrictTool(request: ConversationRequest): CustomToolParam | undefined {
  const choice = request.tool_choice;
  const strictTools = (request.tools ?? []).filter(isCustomTool).filter((tool) => tool.strict === true);
  if (choice?.type === 'tool') return strictTools.find((tool) => tool.name === choice.name);
  if (choice?.type === 'any') return strictTools[0];
  return undefined;
}

/** Rule 2. `disabled` is not "set": the newer small tier receives it on structured calls. */
function checkStrictThinking(request: ConversationRequest): void {
  if (!request.thinking || request.thinking.type === 'disabled') return;
  const tool = forcedStrictTool(request);
  if (tool) {
    throw new ServiceError(
      'rule_refused',
      `Rule 2: thinking (${request.thinking.type}) cannot be combined with a tool_choice that forces the strict tool "${tool.name}"; drop thinking or the forced strict tool`,
    );
  }
}

/**
 * The public API refuses thinking with any tool_choice that forces a call (`tool` or `any`), strict
 * tool or not: a model made to call at once has no turn to think in. Rule 2 is the spec's case of
 * it (a forced strict tool), checked first with its own message (issue 32).
 */
function checkForcedThinking(request: ConversationRequest): void {
  const thinking = request.thinking;
  const choice = request.tool_choice;
  if (!thinking || thinking.type === 'disabled' || (choice?.type !== 'tool' && choice?.type !== 'any')) return;
  throw new ServiceError(
    'invalid_request',
    `thinking (${thinking.type}) cannot be combined with tool_choice "${choice.type}", which forces tool use; use tool_choice "auto" or "none", or leave thinking out`,
  );
}

/** Rule 3: a tool code may call (callable-from-code.ts) beside a strict tool or disable_parallel_tool_use. */
function checkProgrammaticCalling(request: ConversationRequest): void {
  const tools = request.tools ?? [];
  const eligible = tools.find(callableFromCode);
  if (!eligible) return;
  const strictTool = tools.filter(isCustomTool).find((tool) => tool.strict === true);
  const choice = request.tool_choice;
  const disablesParallel = choice !== undefined && choice.type !== 'none' && choice.disable_parallel_tool_use === true;
  if (!strictTool && !disablesParallel) return;
  const conflict = strictTool ? `the strict tool "${strictTool.name}"` : 'tool_choice.disable_parallel_tool_use';
  throw new ServiceError(
    'rule_refused',
    `Rule 3: "${eligible.name}" ${whyCallableFromCode(eligible)}, and that cannot be combined with ${conflict}; set allowed_callers: ["direct"]`,
  );
}

/**
 * Rule 4: a request that uses tools (tool-use.ts) ends on a user turn. A paused turn sent back to
 * be resumed is not a prefill (docs/decisions/0006): it ends on a server tool's result, which only
 * the service writes (the service verifies that it did: signing/signed-blocks-check.ts), so no
 * caller can use it to put words in the model's mouth. Nor is a reply that paused after its
 * compaction (issue 34): the model goes on from the summary, whose signature the service checks.
 */
function checkPrefill(request: ConversationRequest): void {
  const last = request.messages.at(-1);
  if (last?.role === 'assistant' && !isPausedTurn(last) && !endsOnCompaction(last) && usesTools(request)) {
    throw new ServiceError(
      'rule_refused',
      'Rule 4: a prefill (a final assistant turn) cannot be combined with tool use; end the messages on a user turn',
    );
  }
}

/** A `tool_reference` (a client's tool search, or the service's own) loads a tool of the request: it must name one. */
function checkToolReferences(request: ConversationRequest): void {
  const names = new Set((request.tools ?? []).map((tool) => tool.name));
  for (const reference of toolReferences(request.messages))
    if (!names.has(reference.toolName))
      throw new ServiceError(
        'invalid_request',
        `${reference.where}: tool_reference names "${reference.toolName}", which is not among the tools`,
      );
}

/** Rule 5 and Versioning: thinking per model generation. */
function checkThinkingForModel(request: ConversationRequest, model: ModelProfile): void {
  const type = request.thinking?.type;
  if (type === 'adaptive' && model.tier === 'small' && model.generation === 'older') {
    throw new ServiceError(
      'rule_refused',
      `Rule 5: thinking "adaptive" is not supported by ${model.id} (small tier, older generation)`,
    );
  }
  if (type === 'disabled' && model.tier !== 'small' && model.generation === 'newer') {
    throw new ServiceError(
      'rule_refused',
      `Rule 5: thinking "disabled" is rejected by ${model.id} (${model.tier} tier, newer generation); leave thinking unset or use "adaptive"`,
    );
  }
}

/**
 * No silent clamping: a budget the model cannot honour is refused, unless the model clamps, and
 * then the reply says so. A thinking budget that no longer fits under a lowered max_tokens is
 * refused rather than lowered too: the caller chose it against the max_tokens it sent, and the
 * message names both values so that it can choose again.
 */
function checkOutputBudget(granted: MessageRequest, requestedMaxTokens: number, model: ModelProfile): void {
  if (granted.max_tokens > model.maxOutputTokens) {
    throw new ServiceError(
      'invalid_request',
      `max_tokens: ${granted.max_tokens} > ${model.maxOutputTokens}, which is the maximum allowed number of output tokens for ${model.id}`,
    );
  }
  const thinking = granted.thinking;
  if (thinking?.type === 'enabled' && thinking.budget_tokens >= granted.max_tokens) {
    const lowered =
      granted.max_tokens === requestedMaxTokens
        ? ''
        : `, lowered from ${requestedMaxTokens} to the maximum allowed number of output tokens for ${model.id}`;
    throw new ServiceError(
      'invalid_request',
      `thinking.budget_tokens: ${thinking.budget_tokens} must be less than max_tokens (${granted.max_tokens}${lowered})`,
    );
  }
}

const SERVER_RESULT_TYPES: ReadonlySet<string> = new Set(SERVER_TOOL_RESULT_TYPES);

/** An assistant turn that ends on a server tool's result: a `pause_turn` reply sent back to resume it. */
export function isPausedTurn(message: MessageParam): boolean {
  if (message.role !== 'assistant' || typeof message.content === 'string') return false;
  const last = message.content.at(-1);
  return last !== undefined && SERVER_RESULT_TYPES.has(last.type);
}
