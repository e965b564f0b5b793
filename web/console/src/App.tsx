import type { CombinedError } from '@urql/core';
import { Provider } from '@urql/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from './ApiError';
import { makeClient } from './client';
import { useViewer } from './viewer';
import { normalizeKey, storedKey, storeKey } from './key';
import { followLink, hrefOf, pageOf, pages, useLocation } from './routes';

// App is the console's shell: without a key, the key form; with one, the
// header (the key's organization, a way to forget the key), the nav and
// the page the path names, all under one urql client made for that key.
export function App() {
  const [key, setKey] = useState(storedKey);
  const [refused, setRefused] = useState<CombinedError | null>(null);

  const use = (k: string) => {
    storeKey(k);
    setKey(k);
  };
  // One client per key; a new key drops the old one's cache and socket.
  const session = useMemo(
    () =>
      key
        ? makeClient(key, (error) => {
            setRefused(error);
            use('');
          })
        : null,
    [key],
  );
  useEffect(() => () => session?.close(), [session]);

  if (!session) return <KeyForm refused={refused} onKey={(k) => { setRefused(null); use(k); }} />;
  return (
    <Provider value={session.client}>
      <Shell onForget={() => use('')} />
    </Provider>
  );
}

function KeyForm({ refused, onKey }: { refused: CombinedError | null; onKey: (key: string) => void }) {
  const [typed, setTyped] = useState('');
  return (
    <main class="gg-keyform">
      <h1>gpugraph console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const k = normalizeKey(typed);
          if (k) onKey(k);
        }}
      >
        <label for="gg-key">API key</label>
        <input
          id="gg-key"
          name="key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
          aria-describedby="gg-key-help"
          autoFocus
        />
        <button type="submit">Open</button>
        <p id="gg-key-help">
          Sent as <code>Authorization: Bearer &lt;key&gt;</code>, kept for this tab only. Demo keys: acme-reader, acme-operator.
        </p>
      </form>
      {refused && <ApiError error={refused} />}
    </main>
  );
}

// Viewer names the key's organization and what the key holds (viewer
// needs no permission, so every key can greet its user).
function Viewer() {
  const { viewer: v, error } = useViewer();
  if (v) {
    return (
      <p class="gg-org">
        <strong>{v.organizationName}</strong> <code>{v.organizationId}</code>{' '}
        <span class="gg-perms">key {v.credentialId}: {v.permissions.join(', ')}</span>
      </p>
    );
  }
  if (error) {
    return (
      <div class="gg-org">
        <ApiError error={error} />
      </div>
    );
  }
  return <p class="gg-org">Organization…</p>;
}

function Shell({ onForget }: { onForget: () => void }) {
  const path = useLocation();
  const page = pageOf(path);
  const first = useRef(true);
  useEffect(() => {
    document.title = `${page ? page.title : 'Not found'} · gpugraph console`;
    // After a move between pages, focus the new page's heading so a
    // screen reader announces it and Tab goes on from there.
    if (first.current) first.current = false;
    else {
      const title = document.getElementById('page-title');
      title?.setAttribute('tabindex', '-1');
      title?.focus();
    }
  }, [page]);
  const Page = page?.component;
  return (
    <div class="gg-shell" onClick={followLink}>
      <a class="gg-skip" href="#gg-main">Skip to the page</a>
      <header class="gg-header">
        <span class="gg-brand">gpugraph</span>
        <Viewer />
        <button type="button" onClick={onForget}>Forget key</button>
      </header>
      <nav class="gg-nav" aria-label="Pages">
        <ul>
          {pages.map((p) => (
            <li key={p.path}>
              <a href={hrefOf(p)} aria-current={p === page ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="gg-main" class="gg-main" tabIndex={-1}>
        {Page ? (
          <Page />
        ) : (
          <section aria-labelledby="page-title">
            <h1 id="page-title">Not found</h1>
            <p>The console has no page at {path}.</p>
          </section>
        )}
      </main>
    </div>
  );
}
