/**
 * What one llama.cpp generation must produce for a model call (its output target): prose, a
 * forced tool's input, one call among several tools, or JSON for `output_config.format`; which
 * schema's grammar guides it; and which tools the model may call itself.
 */
import type { ChatModelFunctions } from 'node-llama-cpp';
import type { FormatTarget, ModelPrompt, OfferedTool } from '../call/model-call.js';
import { forcedToolInstruction, targetInstruction, toolEnvelopeSchema } from '../call/output-instructions.js';
import type { MainOutput } from './response-emitter.js';
import type { StructuredTarget } from './structured-output.js';

export interface GenerationPlan {
  main: MainOutput;
  /** The schema whose grammar guides the main output: a forced tool's input, the envelope of several, or the format when no tool may be called. */
  structured: StructuredTarget | undefined;
  /** `output_config.format`: a text answer is checked against it before the step ends. */
  format: FormatTarget | undefined;
  /** Tools the model may call by its own chat format (tool_choice auto), as the prompt documents them. */
  functions: ChatModelFunctions | undefined;
  /**
   * The same tools by name only, as LlamaChat is given them (issue 35): its function calling then
   * stops once a call's name is written, and the input is generated under the tool's own grammar
   * (template-calls.ts); the prompt still documents `functions` (continued-chat-wrapper.ts).
   */
  functionNames: ChatModelFunctions | undefined;
  /** The strict tools among `functions`: their grammar must compile exactly, which is checked before generating. */
  strictCalls: StructuredTarget[];
  /** Instruction added to the system prompt (the output target's, call-builder/output-target.ts). */
  instruction: string | undefined;
}

export function planGeneration(prompt: ModelPrompt): GenerationPlan {
  const output = prompt.output;
  const instruction = targetInstruction(output, prompt.tools);
  if (output.kind === 'tool') return forcedToolPlan(output.tool);
  if (output.kind === 'any-tool') {
    return {
      main: { kind: 'envelope', tools: prompt.tools },
      // Each call's input is checked against its own tool afterwards, generated again under its
      // own grammar on a failure: the envelope's grammar may be only the shape of an object.
      structured: { schema: toolEnvelopeSchema(prompt.tools), strict: false, kind: 'tool-input', where: 'tools' },
      format: undefined,
      functions: undefined,
      functionNames: undefined,
      strictCalls: prompt.tools.filter((tool) => tool.strict).map(inputTarget),
      instruction,
    };
  }
  const format = output.format;
  const callable = output.toolsAllowed ? prompt.tools : [];
  return {
    main: { kind: 'text' },
    // node-llama-cpp cannot combine a grammar with functions, and the schema would forbid the
    // calls anyway: with tools offered the format answer is generated free and checked after.
    structured: format && callable.length === 0 ? { ...format, strict: false, kind: 'format' } : undefined,
    format,
    functions: callable.length > 0 ? toFunctions(callable) : undefined,
    functionNames: callable.length > 0 ? namesOf(callable) : undefined,
    strictCalls: callable.filter((tool) => tool.strict).map(inputTarget),
    instruction,
  };
}

export function forcedToolPlan(tool: OfferedTool): GenerationPlan {
  return {
    main: { kind: 'tool', tool },
    structured: inputTarget(tool),
    format: undefined,
    functions: undefined,
    functionNames: undefined,
    strictCalls: [],
    instruction: forcedToolInstruction(tool),
  };
}

export function inputTarget(tool: OfferedTool): StructuredTarget {
  return { schema: tool.inputSchema, strict: tool.strict, kind: 'tool-input', where: tool.where };
}

function toFunctions(tools: readonly OfferedTool[]): ChatModelFunctions {
  // node-llama-cpp documents the schema to the model in its chat format.
  return Object.fromEntries(
    tools.map((tool) => [tool.name, { description: tool.description, params: tool.inputSchema as never }]),
  );
}

/** Without `params`, node-llama-cpp ends a call at its name (maxParallelFunctionCalls 1). */
function namesOf(tools: readonly OfferedTool[]): ChatModelFunctions {
  return Object.fromEntries(tools.map((tool) => [tool.name, { description: tool.description }]));
}
