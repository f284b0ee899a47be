/** The console's door: an admin key, checked against the service before any view opens. */
import { AdminApi, ApiError } from './admin-api.js';
import { html } from './html.js';
import { useState } from './preact-hooks.js';

export function KeyForm({ onAccepted }: { onAccepted: (api: AdminApi) => void }) {
  const [key, setKey] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [checking, setChecking] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setChecking(true);
    setProblem(undefined);
    const api = new AdminApi(key.trim());
    try {
      await api.get('/v1/admin/keys');
      onAccepted(api);
    } catch (error) {
      setProblem(
        error instanceof ApiError && error.status === 403
          ? 'This key is not an admin key: the console needs a key with "admin": true in the config.'
          : error instanceof ApiError && error.status === 401
            ? 'The service knows no such key.'
            : `The service did not answer: ${(error as Error).message}`,
      );
      setChecking(false);
    }
  };
  return html`
    <section class="panel login">
      <h2>mms console</h2>
      <p class="muted">An admin API key opens it. It is kept in this tab's memory only.</p>
      <form onSubmit=${submit}>
        <input
          id="admin-key"
          type="password"
          autocomplete="off"
          placeholder="admin API key"
          value=${key}
          onInput=${(event: Event) => setKey((event.target as HTMLInputElement).value)}
        />
        <button class="primary" type="submit" disabled=${checking || key.trim() === ''}>Open</button>
      </form>
      ${problem === undefined ? null : html`<p class="bad" id="key-problem">${problem}</p>`}
    </section>
  `;
}
