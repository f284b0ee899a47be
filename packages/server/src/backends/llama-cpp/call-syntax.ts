/**
 * A function call in the model's own chat format, as node-llama-cpp's chat wrapper declares it
 * (`settings.functions.call`): Qwen's `<tool_call>\n{"name": "NAME", "arguments": INPUT}\n</tool_call>`,
 * Llama 3.1's `<function=NAME>INPUT</function><|eom_id|>`, gpt-oss's ` to=functions.NAME<|constrain|>json<|message|>INPUT<|call|>`.
 * Issue 35: node-llama-cpp constrains a call's name once the model opens it, and mms generates
 * its input under the tool's own grammar, so the text before and after the input is written
 * here, in the wrapper's words, as node-llama-cpp itself writes it (`{{functionName}}` replaced
 * in plain text, never inside special tokens).
 */
import { LlamaText, type ChatWrapper } from 'node-llama-cpp';

export interface CallSyntax {
  /** The call up to its input: the wrapper's prefix, the name and the text before the input. */
  opening(name: string): LlamaText;
  /** What closes a call after its input. */
  closing(name: string): LlamaText;
  /**
   * The wrapper writes several calls in one turn (`functions.parallelism`); without it, as
   * node-llama-cpp does, the turn ends after one call.
   */
  parallel: boolean;
}

export function callSyntax(wrapper: ChatWrapper): CallSyntax {
  const { call, parallelism } = wrapper.settings.functions;
  return {
    opening: (name) => LlamaText([call.prefix, name, named(call.paramsPrefix, name)]),
    closing: (name) => named(call.suffix, name),
    parallel: parallelism !== undefined,
  };
}

function named(text: string | LlamaText, name: string): LlamaText {
  return LlamaText(text).mapValues((value) =>
    typeof value === 'string' ? value.replaceAll('{{functionName}}', name) : value,
  );
}
