// A tiny model that speaks: under Qwen3's own chat template, greedy decoding (and sampling, the
// margin is that wide) writes the pieces a test chooses, such as a thought and a tool call in
// Qwen's syntax, so the engine's own parsing of a model's output runs in tests. The weights are a
// bigram table (scripted-weights.ts); the file is written and cached as tinyLlamaModel's are.
import { JSON_CLOSING_BIAS, tinyLlamaModel, type TinyLlamaOptions } from './tiny-llama.js';
import { CHAT_END_TOKEN } from './tiny-llama-vocabulary.js';

/** Qwen's control tokens for thinking and tool calls. */
export const QWEN_SPECIAL_TOKENS: readonly string[] = ['<think>', '</think>', '<tool_call>', '</tool_call>'];

/**
 * Qwen3's chat template, as Qwen3 models ship it (tokenizer_config.json, `chat_template`): the
 * tools section of the system turn, `<tool_call>` JSON in assistant turns, `<tool_response>` in
 * user turns, `<think>` kept only after the last user query, and `enable_thinking`.
 */
export const QWEN3_CHAT_TEMPLATE = String.raw`{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in content %}
                {%- set reasoning_content = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
                {%- set content = content.split('</think>')[-1].lstrip('\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}`;

/** What a scripted Qwen turn says: an optional thought, then text or a tool call. */
export interface QwenTurn {
  /** The thought, written between `<think>` and `</think>` (one piece). */
  thinking?: string;
  /** A tool call in Qwen's syntax: its name, and its arguments' JSON text in pieces (a piece a grammar refuses is replaced). */
  call?: { name: string; argumentPieces: readonly string[] };
  /** Text after the thought (one piece each). */
  text?: readonly string[];
}

/** The pieces of `turn` in Qwen3's syntax, up to and with the end of the turn. */
export function qwenTurnPieces(turn: QwenTurn): string[] {
  const pieces: string[] = [];
  if (turn.thinking !== undefined) pieces.push('<think>', `\n${turn.thinking}\n`, '</think>', '\n\n');
  pieces.push(...(turn.text ?? []));
  if (turn.call)
    pieces.push(
      '<tool_call>',
      '\n{"name": "',
      turn.call.name,
      // node-llama-cpp holds the name to a grammar that ends it with a newline, then writes the
      // rest of the call's syntax (`", "arguments": `) itself, in tokens that end with a space:
      // the arguments follow that token.
      ' ',
      ...turn.call.argumentPieces,
      '}\n',
      '</tool_call>',
    );
  pieces.push(CHAT_END_TOKEN);
  return pieces;
}

/**
 * A tiny model with Qwen3's chat template and control tokens whose decoding writes `pieces`
 * (qwenTurnPieces builds them; each piece but the last must be unique). Where a grammar refuses
 * the scripted token, JSON_CLOSING_BIAS decides, so that grammar-bound JSON ends soon.
 */
export function scriptedQwenModel(pieces: readonly string[], options: TinyLlamaOptions = {}): Promise<string> {
  return tinyLlamaModel({
    layers: 1,
    logitBias: JSON_CLOSING_BIAS,
    ...options,
    script: pieces,
    specialTokens: QWEN_SPECIAL_TOKENS,
    chatTemplate: QWEN3_CHAT_TEMPLATE,
  });
}
