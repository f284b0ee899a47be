/**
 * The operator's console (issue 37): asks for an admin key, then shows the service through its
 * admin endpoints in four views. The key is kept in this tab's memory only: a reload asks again.
 */
import { AdminApi } from './admin-api.js';
import { EnginesView } from './engines-view.js';
import { html } from './html.js';
import { KeyForm } from './key-form.js';
import { LiveView } from './live-view.js';
import { PlaygroundView } from './playground-view.js';
import { render } from './preact.js';
import { useState } from './preact-hooks.js';
import { UsageView } from './usage-view.js';

const VIEWS = [
  { id: 'live', title: 'Live', view: LiveView },
  { id: 'usage', title: 'Usage', view: UsageView },
  { id: 'engines', title: 'Engines', view: EnginesView },
  { id: 'playground', title: 'Playground', view: PlaygroundView },
] as const;

type ViewId = (typeof VIEWS)[number]['id'];

function Console() {
  const [api, setApi] = useState<AdminApi | undefined>(undefined);
  const [viewId, setViewId] = useState<ViewId>('live');
  if (api === undefined) return html`<${KeyForm} onAccepted=${setApi} />`;
  const current = VIEWS.find((view) => view.id === viewId)!;
  return html`
    <header class="bar">
      <h1>mms console</h1>
      <nav class="tabs" role="tablist">
        ${VIEWS.map(
          (view) =>
            html`<button
              role="tab"
              id=${`tab-${view.id}`}
              aria-selected=${view.id === viewId}
              onClick=${() => setViewId(view.id)}
            >
              ${view.title}
            </button>`,
        )}
      </nav>
      <button class="plain" onClick=${() => setApi(undefined)}>Forget the key</button>
    </header>
    <${current.view} api=${api} />
  `;
}

const container = document.getElementById('console')!;
// The page's "Loading" line goes: preact renders beside what it did not render itself.
container.replaceChildren();
render(html`<${Console} />`, container);
