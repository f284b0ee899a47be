/**
 * The model's chat wrapper, seen through a turn that has calls in it (issue 35). node-llama-cpp
 * renders a history's function calls only with their results, so a call this turn is still
 * writing cannot be history: LlamaChat is handed the history up to the call, and this wrapper
 * appends what the turn wrote since (`tail`: a call opened up to its input, or calls already
 * whole) to every context it renders, so that the model goes on exactly after it.
 *
 * It also documents the offered tools whatever LlamaChat passes: LlamaChat is given the tools by
 * name only (generate-response.ts), so that its own function calling stops once a call's name is
 * written and mms generates the input under the tool's grammar; the prompt still describes each
 * tool's parameters, as it did when node-llama-cpp generated them, and so stays the prompt that
 * was tokenized and counted (loaded-model.ts).
 *
 * A derived object rather than a class of its own: every other method and setting is the
 * wrapper's, as node-llama-cpp reads them (segments, stop triggers, function syntax).
 */
import { LlamaText, type ChatModelFunctions, type ChatWrapper } from 'node-llama-cpp';

export function continuedChatWrapper(
  wrapper: ChatWrapper,
  documented: ChatModelFunctions | undefined,
  tail: LlamaText = LlamaText([]),
): ChatWrapper {
  const continued = Object.create(wrapper) as ChatWrapper;
  continued.generateContextState = (options) => {
    const state = wrapper.generateContextState({
      ...options,
      availableFunctions: documented,
      documentFunctionParams: true,
    });
    return { ...state, contextText: LlamaText([state.contextText, tail]) };
  };
  return continued;
}
