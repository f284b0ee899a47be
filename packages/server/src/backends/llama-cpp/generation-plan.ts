/**
 * What one llama.cpp generation must produce for a request: prose, a forced tool's input, or
 * JSON for `output_config.format`; and which tools the model may call on its own.
 */
import type { ChatModelFunctions } from 'node-llama-cpp';
import { isCustomTool, ServiceError, type ConversationRequest, type CustomToolParam } from '@mms/protocol';
import type { MainOutput } from './response-emitter.js';
import type { StructuredTarget } from './structured-output.js';

export interface GenerationPlan {
  main: MainOutput;
  /** The schema whose grammar guides the main output: a forced tool's input, or the format when no tool is offered. */
  structured: StructuredTarget | undefined;
  /** `output_config.format`: a text answer is checked against it before the step ends. */
  format: StructuredTarget | undefined;
  /** Tools the model may call by its own chat format (tool_choice auto). */
  functions: ChatModelFunctions | undefined;
  /** The schemas of the strict tools among `functions`: an input that fails one is generated again under its grammar. */
  strictCalls: StructuredTarget[];
  /** Instruction added to the system prompt (a forced tool's or a format's contract). */
  systemText: string | undefined;
  /** At most one tool call (disable_parallel_tool_use). */
  singleCall: boolean;
}

export function planGeneration(request: ConversationRequest): GenerationPlan {
  const customTools = (request.tools ?? []).filter(isCustomTool);
  const choice = request.tool_choice;
  const singleCall = choice !== undefined && choice.type !== 'none' && choice.disable_parallel_tool_use === true;
  if (choice?.type === 'tool' || choice?.type === 'any') {
    const tool =
      choice.type === 'tool' ? customTools.find((candidate) => candidate.name === choice.name) : customTools[0];
    if (!tool)
      throw new ServiceError(
        'invalid_request',
        "tool_choice: the llama-cpp backend can force custom tools only; server tools run on the model's own decision",
      );
    return forcedToolPlan(tool, request, singleCall);
  }
  const schema = request.output_config?.format?.schema;
  const format: StructuredTarget | undefined = schema
    ? { schema, strict: false, kind: 'format', where: 'output_config.format.schema' }
    : undefined;
  const offered = choice?.type === 'none' ? [] : customTools;
  return {
    main: { kind: 'text' },
    // node-llama-cpp cannot combine a grammar with functions, and the schema would forbid the
    // calls anyway: with tools offered the format answer is generated free and checked after.
    structured: offered.length > 0 ? undefined : format,
    format,
    functions: offered.length > 0 ? toFunctions(offered) : undefined,
    strictCalls: offered.filter((tool) => tool.strict === true).map((tool) => inputTarget(tool, request)),
    // The grammar holds the answer to the schema's syntax; the model still needs its meaning, and
    // where no grammar applies, the instruction is all it has.
    systemText: schema
      ? `${offered.length > 0 ? 'Unless you call a tool, answer' : 'Answer'} with one JSON value only, matching this JSON Schema: ${JSON.stringify(schema)}`
      : undefined,
    singleCall,
  };
}

export function forcedToolPlan(
  tool: CustomToolParam,
  request: ConversationRequest,
  singleCall: boolean,
): GenerationPlan {
  return {
    main: { kind: 'tool', name: tool.name },
    structured: inputTarget(tool, request),
    format: undefined,
    functions: undefined,
    strictCalls: [],
    systemText: `Call the tool "${tool.name}" now: ${tool.description}\nAnswer with the tool's JSON input only. Its JSON Schema: ${JSON.stringify(tool.input_schema)}`,
    singleCall,
  };
}

function inputTarget(tool: CustomToolParam, request: ConversationRequest): StructuredTarget {
  const index = (request.tools ?? []).indexOf(tool);
  return {
    schema: tool.input_schema,
    strict: tool.strict === true,
    kind: 'tool-input',
    where: `tools.${index}.input_schema`,
  };
}

function toFunctions(tools: readonly CustomToolParam[]): ChatModelFunctions {
  // node-llama-cpp documents the schema to the model in its chat format; the inputs it parses
  // are re-validated against the full schema afterwards (generate-response.ts).
  return Object.fromEntries(
    tools.map((tool) => [tool.name, { description: tool.description, params: tool.input_schema as never }]),
  );
}
