/**
 * What one engine request must produce and how the engine is held to it: which tools it sees,
 * how a forced tool or `output_config.format` is enforced (the engine's own tool_choice, its
 * guided decoding, or a check in mms), and what mms checks afterwards. Pure.
 */
import type { ConversationRequest } from '@mms/protocol';
import type { ChatToolChoice } from './chat-types.js';
import type { EngineProfile } from './engine-profiles.js';
import { offeredTools, type OfferedTool } from './offered-tools.js';

/** What the engine's text content is. */
export type ContentRole =
  | { kind: 'text' }
  /** The JSON input of one tool, generated under guided decoding: it becomes that tool's block. */
  | { kind: 'tool-input'; tool: OfferedTool }
  /** `{"name": ..., "input": ...}` for one of several tools (tool_choice any without tool_choice support). */
  | { kind: 'tool-envelope'; tools: OfferedTool[] };

export interface ChatPlan {
  /** Sent as functions. */
  tools: OfferedTool[];
  toolChoice: ChatToolChoice | undefined;
  parallelToolCalls: boolean | undefined;
  /** Sent through the engine's guided-decoding field. */
  guidedSchema: Record<string, unknown> | undefined;
  content: ContentRole;
  /** Added to the system prompt. */
  instruction: string | undefined;
  /** The text answer must be JSON matching this schema (output_config.format). */
  formatCheck: { schema: Record<string, unknown>; where: string } | undefined;
  /** Nothing of the step reaches the client until mms checked it, so a failed answer can be retried unseen. */
  holdAll: boolean;
  /** The engine itself holds tool calls to their schemas (a named or required call it guides). */
  guidedCalls: boolean;
}

const FORMAT_WHERE = 'output_config.format.schema';

export function planChat(request: ConversationRequest, profile: EngineProfile): ChatPlan {
  const offered = offeredTools(request);
  const choice = request.tool_choice;
  const parallelToolCalls =
    choice !== undefined && choice.type !== 'none' && choice.disable_parallel_tool_use === true ? false : undefined;
  if (offered.length > 0 && (choice?.type === 'tool' || choice?.type === 'any')) {
    const target =
      choice.type === 'tool'
        ? offered.find((tool) => tool.name === choice.name)
        : offered.length === 1
          ? offered[0]
          : undefined;
    return target
      ? forcedPlan(target, offered, profile, parallelToolCalls)
      : anyToolPlan(offered, profile, parallelToolCalls);
  }
  const base = textPlan(request, profile);
  if (offered.length === 0) return base;
  if (choice?.type === 'none') return profile.toolChoiceModes ? { ...base, tools: offered, toolChoice: 'none' } : base;
  // Tools the model may call: a format cannot be guided too (the schema would forbid the calls).
  const toolChoice = profile.toolChoiceModes && choice?.type === 'auto' ? 'auto' : undefined;
  const held = base.formatCheck !== undefined;
  return { ...base, tools: offered, toolChoice, parallelToolCalls, guidedSchema: undefined, holdAll: held };
}

function textPlan(request: ConversationRequest, profile: EngineProfile): ChatPlan {
  const schema = request.output_config?.format?.schema;
  const plan = emptyPlan();
  if (!schema) return plan;
  const guided = profile.guidedField !== undefined;
  return {
    ...plan,
    guidedSchema: guided ? schema : undefined,
    instruction: `Answer with one JSON value only, matching this JSON Schema: ${JSON.stringify(schema)}`,
    formatCheck: { schema, where: FORMAT_WHERE },
    holdAll: !guided,
  };
}

/** A forced call of one tool: the engine's named tool_choice where it has one, else guided decoding of its input. */
export function forcedPlan(
  target: OfferedTool,
  offered: OfferedTool[],
  profile: EngineProfile,
  parallelToolCalls: boolean | undefined,
): ChatPlan {
  if (profile.namedToolChoice) {
    return {
      ...emptyPlan(),
      tools: offered,
      toolChoice: { type: 'function', function: { name: target.name } },
      parallelToolCalls,
      guidedCalls: profile.forcedCallsGuided,
    };
  }
  return {
    ...emptyPlan(),
    guidedSchema: profile.guidedField ? target.schema : undefined,
    content: { kind: 'tool-input', tool: target },
    instruction: `Call the tool "${target.name}" now: ${target.description}\nAnswer with the tool's JSON input only. Its JSON Schema: ${JSON.stringify(target.schema)}`,
    guidedCalls: profile.guidedField !== undefined,
  };
}

function anyToolPlan(offered: OfferedTool[], profile: EngineProfile, parallelToolCalls: boolean | undefined): ChatPlan {
  if (profile.toolChoiceModes)
    return {
      ...emptyPlan(),
      tools: offered,
      toolChoice: 'required',
      parallelToolCalls,
      guidedCalls: profile.forcedCallsGuided,
    };
  const schema = {
    anyOf: offered.map((tool) => ({
      type: 'object',
      properties: { name: { const: tool.name }, input: tool.schema },
      required: ['name', 'input'],
      additionalProperties: false,
    })),
  };
  const list = offered
    .map((tool) => `- "${tool.name}": ${tool.description} Input schema: ${JSON.stringify(tool.schema)}`)
    .join('\n');
  return {
    ...emptyPlan(),
    guidedSchema: profile.guidedField ? schema : undefined,
    content: { kind: 'tool-envelope', tools: offered },
    instruction: `Call one of these tools now, answering with JSON only: {"name": <tool name>, "input": <its input>}.\n${list}`,
    guidedCalls: profile.guidedField !== undefined,
  };
}

function emptyPlan(): ChatPlan {
  return {
    tools: [],
    toolChoice: undefined,
    parallelToolCalls: undefined,
    guidedSchema: undefined,
    content: { kind: 'text' },
    instruction: undefined,
    formatCheck: undefined,
    holdAll: false,
    guidedCalls: false,
  };
}
