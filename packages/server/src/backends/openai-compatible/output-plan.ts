/**
 * What one engine request must produce and how the engine is held to it: which tools it sees,
 * how a forced tool or `output_config.format` is enforced (the engine's own tool_choice, its
 * guided decoding, or a check in mms), and what mms checks afterwards. Pure.
 */
import type { FormatTarget, ModelPrompt, OfferedTool } from '../call/model-call.js';
import { forcedToolInstruction, targetInstruction, toolEnvelopeSchema } from '../call/output-instructions.js';
import { notOfferedError } from '../call/tool-calls.js';
import type { ChatToolChoice } from './chat-types.js';
import type { EngineProfile } from './engine-profiles.js';

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
  formatCheck: FormatTarget | undefined;
  /** Nothing of the step reaches the client until mms checked it, so a failed answer can be retried unseen. */
  holdAll: boolean;
  /** The engine itself holds tool calls to their schemas (a named or required call it guides). */
  guidedCalls: boolean;
}

export function planChat(prompt: ModelPrompt, profile: EngineProfile): ChatPlan {
  const offered = prompt.tools;
  const output = prompt.output;
  const parallelToolCalls = prompt.singleCall ? false : undefined;
  if (output.kind === 'tool') return forcedPlan(output.tool, offered, profile, parallelToolCalls);
  if (output.kind === 'any-tool') return anyToolPlan(prompt, profile, parallelToolCalls);
  const base = textPlan(prompt, output.format, profile);
  if (offered.length === 0) return base;
  if (!output.toolsAllowed) return profile.toolChoiceModes ? { ...base, tools: offered, toolChoice: 'none' } : base;
  // Tools the model may call: a format cannot be guided too (the schema would forbid the calls).
  const toolChoice = profile.toolChoiceModes ? 'auto' : undefined;
  const held = base.formatCheck !== undefined;
  return { ...base, tools: offered, toolChoice, parallelToolCalls, guidedSchema: undefined, holdAll: held };
}

function textPlan(prompt: ModelPrompt, format: FormatTarget | undefined, profile: EngineProfile): ChatPlan {
  const plan = emptyPlan();
  if (!format) return plan;
  const guided = profile.guidedField !== undefined;
  return {
    ...plan,
    guidedSchema: guided ? format.schema : undefined,
    instruction: targetInstruction(prompt.output, prompt.tools),
    formatCheck: format,
    holdAll: !guided,
  };
}

/** A forced call of one tool: the engine's named tool_choice where it has one, else guided decoding of its input. */
export function forcedPlan(
  target: OfferedTool,
  offered: readonly OfferedTool[],
  profile: EngineProfile,
  parallelToolCalls: boolean | undefined,
): ChatPlan {
  if (profile.namedToolChoice) {
    return {
      ...emptyPlan(),
      tools: [...offered],
      toolChoice: { type: 'function', function: { name: target.name } },
      parallelToolCalls,
      guidedCalls: profile.forcedCallsGuided,
    };
  }
  return {
    ...emptyPlan(),
    guidedSchema: profile.guidedField ? target.inputSchema : undefined,
    content: { kind: 'tool-input', tool: target },
    instruction: forcedToolInstruction(target),
    guidedCalls: profile.guidedField !== undefined,
  };
}

/**
 * The plan of a repair (issue 35): one call's input asked for alone, under the engine's
 * structured-output option where it has one (vLLM's and SGLang's `response_format` json_schema,
 * llama.cpp server's `json_schema`, Ollama's `format` through `response_format`), so that the
 * engine holds the answer to the tool's schema; a generic server gets the forced call, checked.
 */
export function repairPlan(target: OfferedTool, offered: readonly OfferedTool[], profile: EngineProfile): ChatPlan {
  if (!profile.guidedField) return forcedPlan(target, offered, profile, false);
  return {
    ...emptyPlan(),
    guidedSchema: target.inputSchema,
    content: { kind: 'tool-input', tool: target },
    instruction: forcedToolInstruction(target),
    guidedCalls: true,
  };
}

function anyToolPlan(prompt: ModelPrompt, profile: EngineProfile, parallelToolCalls: boolean | undefined): ChatPlan {
  const offered = prompt.tools;
  if (profile.toolChoiceModes) {
    return {
      ...emptyPlan(),
      tools: offered,
      toolChoice: 'required',
      parallelToolCalls,
      guidedCalls: profile.forcedCallsGuided,
    };
  }
  return {
    ...emptyPlan(),
    guidedSchema: profile.guidedField ? toolEnvelopeSchema(offered) : undefined,
    content: { kind: 'tool-envelope', tools: offered },
    instruction: targetInstruction(prompt.output, offered),
    guidedCalls: profile.guidedField !== undefined,
  };
}

/**
 * The offered tool a call of the engine names: one of the plan's functions, or, for a call made
 * through the content (guided decoding), the forced tool or one of the envelope's. A name the
 * request did not offer is refused (a 502): the client must never see a call of a tool it does
 * not have.
 */
export function plannedTool(plan: ChatPlan, name: string): OfferedTool {
  const content = plan.content;
  const tool =
    plan.tools.find((candidate) => candidate.name === name) ??
    (content.kind === 'tool-input' ? content.tool : undefined) ??
    (content.kind === 'tool-envelope' ? content.tools.find((candidate) => candidate.name === name) : undefined);
  if (!tool) throw notOfferedError(name);
  return tool;
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
