/**
 * The playground's reply, block by block (issue 37): text, thinking, a tool call with its input as
 * it grows, and server tools' results: search results as links, a fetched page's title and
 * text, code's output; then the usage.
 */
import { html } from './html.js';
import type { Reply, ReplyBlock } from './reply-blocks.js';

export function ReplyView({ reply }: { reply: Reply }) {
  return html`
    <div id="reply">
      ${reply.blocks.map((block) => html`<${Block} block=${block} />`)}
      ${reply.error === undefined ? null : html`<p class="bad" id="reply-error">${reply.error}</p>`}
      ${
        reply.usage === undefined
          ? null
          : html`<p class="usage" id="reply-usage">
              ${reply.stopReason === null ? 'streaming…' : `stop: ${reply.stopReason}`} · usage
              ${JSON.stringify(reply.usage)}
            </p>`
      }
    </div>
  `;
}

function Block({ block }: { block: ReplyBlock }) {
  switch (block.type) {
    case 'text':
      return html`<div class="block text">${block.text}</div>`;
    case 'thinking':
      return html`<div class="block thinking">${block.thinking}</div>`;
    case 'tool_use':
    case 'server_tool_use':
      return html`<div class="block tool" data-tool=${block.name}>
        <div class="label">${block.type === 'tool_use' ? 'tool call' : 'server tool call'}: ${block.name}</div>
        <pre>${pretty(block.input)}</pre>
      </div>`;
    case 'result':
      return html`<div class="block result" data-result=${block.tool}>
        <div class="label">${block.tool} result</div>
        <${ResultContent} tool=${block.tool} content=${block.content} />
      </div>`;
  }
}

interface SearchResult {
  type: string;
  url?: string;
  title?: string;
  page_age?: string;
}

function ResultContent({ tool, content }: { tool: string; content: unknown }) {
  if (!Array.isArray(content) && typeof content === 'object' && content !== null) {
    const object = content as Record<string, unknown>;
    if (typeof object.error_code === 'string') return html`<p class="bad">${object.error_code}</p>`;
    if (object.type === 'web_fetch_result') {
      const document = (object.content ?? {}) as { title?: string; source?: { data?: string } };
      return html`<p>
          <a href=${String(object.url)} target="_blank" rel="noreferrer">${document.title ?? String(object.url)}</a>
        </p>
        <pre>${(document.source?.data ?? '').slice(0, 2000)}</pre>`;
    }
    if (object.type === 'code_execution_result')
      return html`<pre>return code ${String(object.return_code)}</pre>
        <pre>${String(object.stdout ?? '')}</pre>
        ${object.stderr ? html`<pre class="bad">${String(object.stderr)}</pre>` : null}`;
  }
  if (tool === 'web_search' && Array.isArray(content))
    return html`<ol class="search-results">
      ${(content as SearchResult[])
        .filter((result) => result.type === 'web_search_result')
        .map(
          (result) =>
            html`<li>
              <a href=${result.url} target="_blank" rel="noreferrer">${result.title || result.url}</a>${
                result.page_age ? html` <span class="muted">${result.page_age}</span>` : null
              }
            </li>`,
        )}
    </ol>`;
  return html`<pre>${JSON.stringify(content, null, 2)}</pre>`;
}

/** The input JSON, indented once it parses; as it came while it is still growing. */
function pretty(input: string): string {
  try {
    return JSON.stringify(JSON.parse(input), null, 2);
  } catch {
    return input;
  }
}
