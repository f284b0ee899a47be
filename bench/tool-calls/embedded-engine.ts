/**
 * Part (b) of bench/tool-calls.ts: Claude Code's recorded tool set offered to the embedded
 * engine, whose model is tiny and knows nothing. Random weights under tool_choice auto (they
 * hardly ever write Qwen's whole call opening, so few calls), and under tool_choice any (the
 * engine opens the call: its name and input are the random weights' noise, held by the grammar);
 * scripted weights under auto that open a call naming one tool and then babble: its input is
 * noise, and after it the script opens call after call whose name is noise too. Each tool_use
 * input is checked by Ajv against its tool's whole schema: the share that is valid is what
 * issue 35 promises to be 100 %.
 */
import { schemaViolation } from '@model-messages/protocol';
import {
  claudeCodeToolsWithoutProse,
  JSON_CLOSING_BIAS,
  parseSse,
  postJson,
  QWEN3_CHAT_TEMPLATE,
  QWEN_SPECIAL_TOKENS,
  scriptedQwenModel,
  startService,
  tinyLlamaModel,
} from '@model-messages/testing';

export interface EmbeddedResult {
  weights: string;
  requests: number;
  /** Requests that failed outright (not 200). */
  errors: number;
  calls: number;
  valid: number;
  /** Calls cut by max_tokens, kept as they came (unchecked, like every backend's). */
  cut: number;
  /** A few invalid inputs, for the notes. */
  invalid: string[];
}

/** Random weights; JSON_CLOSING_BIAS so that a grammar-held string ends soon. */
function randomModel(): Promise<string> {
  return tinyLlamaModel({
    layers: 1,
    contextLength: 8192,
    seed: 35,
    logitBias: JSON_CLOSING_BIAS,
    specialTokens: QWEN_SPECIAL_TOKENS,
    chatTemplate: QWEN3_CHAT_TEMPLATE,
  });
}

/** One scripted model per tool: it opens a call of that tool, and its input is babble. */
function scriptedModel(name: string): Promise<string> {
  return scriptedQwenModel(['<tool_call>', '\n{"name": "', ' "', name, '<|im_end|>'], { contextLength: 8192 });
}

export async function measureEmbedded(requests: number, log: (line: string) => void): Promise<EmbeddedResult[]> {
  const tools = claudeCodeToolsWithoutProse();
  const scripted = ['Read', 'Bash', 'Edit', 'Agent', 'Workflow', 'ReportFindings'].filter((name) =>
    tools.some((tool) => tool.name === name),
  );
  const models = [{ id: 'random', path: await randomModel() }];
  for (const name of scripted) models.push({ id: `opens-${name}`, path: await scriptedModel(name) });
  const service = await startService({
    models: models.map(({ id, path }) => ({
      id,
      tier: 'mid' as const,
      generation: 'older' as const,
      contextWindow: 8192,
      maxOutputTokens: 2048,
      backend: { type: 'llama-cpp' as const, model: path, threads: 1, chatWrapper: 'qwen' as const },
    })),
  });
  try {
    const results: EmbeddedResult[] = [];
    for (const weights of ['random, auto', 'random, any', 'scripted, auto']) {
      const result: EmbeddedResult = { weights, requests, errors: 0, calls: 0, valid: 0, cut: 0, invalid: [] };
      for (let index = 0; index < requests; index += 1) {
        const model = weights.startsWith('random') ? 'random' : `opens-${scripted[index % scripted.length]}`;
        const response = await postJson(service, '/v1/messages', {
          model,
          max_tokens: 300,
          ...(weights.endsWith('any') ? { tool_choice: { type: 'any' } } : {}),
          temperature: 1,
          // Every other request streamed: the input then arrives as input_json_delta pieces.
          stream: index % 2 === 1,
          messages: [{ role: 'user', content: 'Go on.' }],
          tools,
        });
        const reply = index % 2 === 1 ? await folded(response) : await response.json();
        if (response.status !== 200 || reply === undefined) {
          result.errors += 1;
          continue;
        }
        const { content, stop_reason } = reply as {
          content: Array<{ type: string; name?: string; input?: unknown }>;
          stop_reason: string;
        };
        const calls = content.filter((block) => block.type === 'tool_use');
        calls.forEach((call, at) => {
          if (stop_reason === 'max_tokens' && at === calls.length - 1) return void (result.cut += 1);
          result.calls += 1;
          const schema = tools.find((tool) => tool.name === call.name)?.input_schema;
          const violation = schema ? schemaViolation(schema, call.input) : `no tool named ${call.name}`;
          if (violation === undefined) result.valid += 1;
          else if (result.invalid.length < 5)
            result.invalid.push(`${call.name} ${JSON.stringify(call.input)}: ${violation}`);
        });
        if ((index + 1) % 50 === 0)
          log(`  ${weights}: ${index + 1}/${requests} requests, ${result.valid}/${result.calls} valid`);
      }
      results.push(result);
    }
    return results;
  } finally {
    await service.close();
  }
}

/** A streamed reply folded into its blocks as a client joins them; undefined on an error event. */
async function folded(response: Response): Promise<unknown> {
  const blocks: Array<{ type: string; name?: string; input?: unknown; json: string }> = [];
  let stopReason = '';
  for (const { data } of parseSse(await response.text())) {
    if (data.type === 'error') return undefined;
    if (data.type === 'content_block_start')
      blocks[data.index as number] = { ...(data.content_block as { type: string }), json: '' };
    if (data.type === 'content_block_delta' && (data.delta as { type: string }).type === 'input_json_delta')
      blocks[data.index as number]!.json += (data.delta as { partial_json: string }).partial_json;
    if (data.type === 'message_delta') stopReason = (data.delta as { stop_reason: string }).stop_reason;
  }
  for (const block of blocks)
    if (block.type === 'tool_use') block.input = block.json === '' ? {} : safeParse(block.json);
  return { content: blocks, stop_reason: stopReason };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return `unparseable: ${text}`;
  }
}
