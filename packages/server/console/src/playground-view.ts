/**
 * Playground (issue 37): pick a model, write a system prompt and messages, offer server tools (and
 * client tools as JSON), send with a key (the admin key unless another is given), and watch the
 * reply stream in. It is an ordinary POST /v1/messages with `stream: true`, so the request shows
 * in Live and counts against the key's limits like any other.
 */
import type { AdminApi } from './admin-api.js';
import { html } from './html.js';
import { useEffect, useState } from './preact-hooks.js';
import { applyEvent, EMPTY_REPLY, type Reply } from './reply-blocks.js';
import { ReplyView } from './reply-view.js';

/** The server tools as the service names them (packages/protocol/src/constants.ts). */
const SERVER_TOOLS = [
  { name: 'web_search', type: 'web_search_20260209' },
  { name: 'web_fetch', type: 'web_fetch_20260209' },
  { name: 'code_execution', type: 'code_execution_20260521' },
] as const;

interface Turn {
  role: 'user' | 'assistant';
  text: string;
}

export function PlaygroundView({ api }: { api: AdminApi }) {
  const [key, setKey] = useState('');
  const [models, setModels] = useState<string[]>([]);
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [turns, setTurns] = useState<Turn[]>([{ role: 'user', text: '' }]);
  const [serverTools, setServerTools] = useState<string[]>([]);
  const [clientTools, setClientTools] = useState('');
  const [maxTokens, setMaxTokens] = useState(1024);
  const [thinking, setThinking] = useState(false);
  const [reply, setReply] = useState<Reply>(EMPTY_REPLY);
  const [sending, setSending] = useState<AbortController | undefined>(undefined);
  const sendingKey = key.trim() === '' ? api.key : key.trim();
  useEffect(() => {
    api.models(sendingKey).then(
      (ids) => {
        setModels(ids);
        setModel((chosen) => (ids.includes(chosen) ? chosen : (ids[0] ?? '')));
      },
      () => setModels([]),
    );
  }, [api, sendingKey]);
  const setTurn = (index: number, turn: Partial<Turn>) =>
    setTurns(turns.map((existing, at) => (at === index ? { ...existing, ...turn } : existing)));
  const send = async () => {
    const controller = new AbortController();
    setSending(controller);
    let current = EMPTY_REPLY;
    setReply(current);
    try {
      const tools: unknown[] = SERVER_TOOLS.filter((tool) => serverTools.includes(tool.name)).map((tool) => ({
        ...tool,
      }));
      if (clientTools.trim() !== '') tools.push(...(JSON.parse(clientTools) as unknown[]));
      const body: Record<string, unknown> = {
        model,
        max_tokens: maxTokens,
        messages: turns.map((turn) => ({ role: turn.role, content: turn.text })),
      };
      if (system.trim() !== '') body.system = system;
      if (tools.length > 0) body.tools = tools;
      if (thinking) body.thinking = { type: 'enabled', budget_tokens: Math.max(1024, Math.floor(maxTokens / 2)) };
      await api.sendMessage(
        sendingKey,
        body,
        (event) => {
          current = applyEvent(current, event.event, event.data);
          setReply(current);
        },
        controller.signal,
      );
    } catch (error) {
      if (!controller.signal.aborted) setReply({ ...current, error: (error as Error).message });
    } finally {
      setSending(undefined);
    }
  };
  const value = (event: Event) => (event.target as HTMLInputElement).value;
  return html`
    <div class="playground">
      <section class="panel">
        <label class="field"
          ><span>key (empty: the admin key)</span>
          <input
            id="playground-key"
            type="password"
            autocomplete="off"
            value=${key}
            onInput=${(event: Event) => setKey(value(event))}
          />
        </label>
        <label class="field"
          ><span>model</span>
          <select id="playground-model" value=${model} onChange=${(event: Event) => setModel(value(event))}>
            ${models.map((id) => html`<option value=${id}>${id}</option>`)}
          </select>
        </label>
        <label class="field"
          ><span>system prompt</span>
          <textarea
            id="playground-system"
            rows="3"
            value=${system}
            onInput=${(event: Event) => setSystem(value(event))}
          ></textarea>
        </label>
        ${turns.map(
          (turn, index) => html`
            <div class="message">
              <div class="row">
                <select
                  value=${turn.role}
                  onChange=${(event: Event) => setTurn(index, { role: value(event) as Turn['role'] })}
                >
                  <option value="user">user</option>
                  <option value="assistant">assistant</option>
                </select>
                ${turns.length > 1 ? html`<button class="plain" onClick=${() => setTurns(turns.filter((_, at) => at !== index))}>remove</button>` : null}
              </div>
              <textarea
                class="playground-message"
                rows="3"
                value=${turn.text}
                onInput=${(event: Event) => setTurn(index, { text: value(event) })}
              ></textarea>
            </div>
          `,
        )}
        <button
          class="plain"
          onClick=${() => setTurns([...turns, { role: turns.at(-1)?.role === 'user' ? 'assistant' : 'user', text: '' }])}
        >
          add a message
        </button>
        <div class="field" style=${{ marginTop: '12px' }}>
          <span>server tools</span>
          <div class="row">
            ${SERVER_TOOLS.map(
              (tool) =>
                html`<label
                  ><input
                    type="checkbox"
                    id=${`tool-${tool.name}`}
                    checked=${serverTools.includes(tool.name)}
                    onChange=${() => setServerTools(serverTools.includes(tool.name) ? serverTools.filter((name) => name !== tool.name) : [...serverTools, tool.name])}
                  />
                  ${tool.name}</label
                >`,
            )}
          </div>
        </div>
        <label class="field"
          ><span>client tools (a JSON list of tool definitions)</span>
          <textarea
            id="playground-tools"
            rows="3"
            placeholder='[{"name": "get_weather", "description": "...", "input_schema": {"type": "object"}}]'
            value=${clientTools}
            onInput=${(event: Event) => setClientTools(value(event))}
          ></textarea>
        </label>
        <div class="row">
          <label
            >max_tokens
            <input
              type="number"
              min="1"
              style=${{ width: '90px' }}
              value=${maxTokens}
              onInput=${(event: Event) => setMaxTokens(Number(value(event)))}
          /></label>
          <label><input type="checkbox" checked=${thinking} onChange=${() => setThinking(!thinking)} /> thinking</label>
          ${
            sending === undefined
              ? html`<button class="primary" id="playground-send" disabled=${model === ''} onClick=${() => void send()}>
                  Send
                </button>`
              : html`<button class="plain" onClick=${() => sending.abort()}>Stop</button>`
          }
        </div>
      </section>
      <section class="panel">
        <h2>Reply</h2>
        ${reply === EMPTY_REPLY ? html`<p class="muted">The reply streams here.</p>` : html`<${ReplyView} reply=${reply} />`}
      </section>
    </div>
  `;
}
