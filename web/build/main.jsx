import { createRoot } from 'react-dom/client';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';
import { scrubStored, strippingStorage } from './storage.mjs';
import { authFor, explainUnauthenticated, headersAuthorization } from './auth.mjs';

// The page's first run must succeed once a key is typed, so the default
// query is one the read-only demo key may run, and it says where keys come
// from: a newcomer has not read the README yet.
const defaultQuery = `# gpugraph: type an API key in the field above, then press ▶ (Ctrl-Enter).
# Keys: with the built-in demo data, the server prints them at every start
# (acme-reader reads, acme-operator may also restart); the gpugraph README
# lists them. Any key works as Authorization: Bearer <key>.
query VmsNodesGpus {
  vms(limit: 5) {
    total
    vms {
      name
      status
      node {
        name
        gpus { index address health model { name } }
      }
    }
  }
}
`;

// The headers editor starts as valid JSON with nothing in it: the key field
// is the labelled way in, and a header typed here takes precedence.
const defaultHeaders = '{}';

const wsURL = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/graphql`;

// Plain JSON answers (no incremental delivery: the server has none), so a
// refusal can be rewritten before GraphiQL shows it. The toolkit passes a
// subscription's headers as graphql-ws's connectionParams, which is where
// the server reads the key of a WebSocket.
const inner = createGraphiQLFetcher({ url: '/graphql', subscriptionUrl: wsURL, enableIncrementalDelivery: false });

// makeFetcher sends every request with the Authorization current() gives.
// GraphiQL fetches the schema again whenever it is handed a new fetcher,
// so the page makes one each time the key settles.
function makeFetcher(current, onAuthError) {
  return async (params, opts = {}) => {
    const headers = { ...(opts.headers || {}) };
    const authorization = current();
    if (authorization && !headersAuthorization(headers)) headers.Authorization = authorization;
    const result = await inner(params, { ...opts, headers });
    return explainUnauthenticated(result, onAuthError);
  };
}

// scrubbed once, before GraphiQL reads its state: entries written by an
// older page may still hold a key.
scrubStored(window.localStorage);
const storage = strippingStorage(window.localStorage);

function Playground() {
  const [key, setKey] = useState('');
  const [headersText, setHeadersText] = useState(defaultHeaders);
  const [status, setStatus] = useState('');
  const authorization = authFor(key, headersText);
  const latest = useRef(authorization);
  latest.current = authorization;
  // One schema fetch per key typed, not per keystroke.
  const [settled, setSettled] = useState(authorization);
  useEffect(() => {
    const t = setTimeout(() => setSettled(authorization), 300);
    return () => clearTimeout(t);
  }, [authorization]);
  const fetcher = useMemo(() => makeFetcher(() => latest.current, setStatus), [settled]);
  useEffect(() => setStatus(''), [settled]);
  // A stable callback: GraphiQL fetches the schema again when it changes.
  const onSchemaChange = useCallback(() => setStatus('Schema loaded: Ctrl-Space completes, Ctrl-Enter runs.'), []);

  return (
    <div className="gg-page">
      <form className="gg-keybar" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor="gg-key">API key</label>
        <input
          id="gg-key"
          type="password"
          autoComplete="off"
          spellCheck="false"
          placeholder="e.g. acme-reader (demo keys are printed at server start)"
          value={key}
          onChange={(e) => setKey(e.target.value.trim())}
        />
        <span id="gg-status" role="status">{status}</span>
      </form>
      <div className="gg-graphiql">
        <GraphiQL
          fetcher={fetcher}
          storage={storage}
          defaultQuery={defaultQuery}
          defaultHeaders={defaultHeaders}
          onEditHeaders={setHeadersText}
          isHeadersEditorEnabled
          shouldPersistHeaders={false}
          onSchemaChange={onSchemaChange}
        />
      </div>
    </div>
  );
}

createRoot(document.getElementById('graphiql')).render(<Playground />);
