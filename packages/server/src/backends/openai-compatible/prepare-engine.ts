/**
 * The start-up check of an openai-compatible backend: `GET <baseURL>/models` answers, and lists
 * the configured model. An engine that is not up yet (refused, timed out, 5xx: vLLM loading,
 * llama.cpp's 503 "Loading model") does not stop `mms serve`: engines often start after the
 * front, so the service starts, says so in its log, and answers 5xx for this model until the
 * engine is up. What cannot fix itself does stop it, with the fix in the message: the engine
 * refusing mms's key, or an engine that is up and serves other models (vLLM, SGLang, Ollama
 * answer 404 for a model they do not list; llama.cpp serves its loaded model whatever the
 * request names, and a generic server's list may be partial, so those two only warn).
 */
import { ServiceError } from '@model-messages/protocol';
import type { EngineClient } from './engine-client.js';
import type { OpenAiCompatibleBackendConfig } from './openai-compatible-config.js';

export async function prepareEngine(client: EngineClient, config: OpenAiCompatibleBackendConfig): Promise<string> {
  const where = `${config.engine} engine, model "${config.model}"`;
  if (config.apiKeyEnv && config.apiKey === undefined && !process.env[config.apiKeyEnv]) {
    throw new Error(`${where}: the environment variable ${config.apiKeyEnv} (backend.apiKeyEnv) is not set`);
  }
  let answer: { status: number; text: string };
  try {
    answer = await client.get(`${client.apiBase}/models`);
  } catch (error) {
    const reason = error instanceof ServiceError ? error.message : String(error);
    return `${where}: not reachable yet (${reason}); its requests fail until the engine answers`;
  }
  if (answer.status === 401 || answer.status === 403)
    throw new Error(`${where}: the engine refused mms's credentials (${answer.status}); check backend.apiKey`);
  if (answer.status !== 200)
    return `${where}: GET /models answered ${answer.status}; its requests may fail until the engine is ready`;
  const listed = modelEntries(answer.text);
  const entry = listed.find((candidate) => candidate.id === config.model);
  if (entry) return `${where}: ready${contextNote(entry)}`;
  const served = listed.map((candidate) => candidate.id).join(', ') || 'none';
  if (config.engine === 'llama.cpp' || config.engine === 'generic')
    return `${where}: not in the engine's model list (${served}); going on, the engine decides`;
  throw new Error(
    `${where}: the engine serves ${served}, not "${config.model}"; set backend.model to one of them${config.engine === 'ollama' ? ` or run ollama pull ${config.model}` : ''}`,
  );
}

function modelEntries(text: string): Array<{ id: string; max_model_len?: unknown }> {
  try {
    const data = (JSON.parse(text) as { data?: unknown }).data;
    return Array.isArray(data)
      ? data.filter((entry): entry is { id: string } => typeof (entry as { id?: unknown })?.id === 'string')
      : [];
  } catch {
    return [];
  }
}

/** vLLM lists each model's context length: worth a line when it is known. */
function contextNote(entry: { max_model_len?: unknown }): string {
  return typeof entry.max_model_len === 'number' ? ` (engine context ${entry.max_model_len} tokens)` : '';
}
