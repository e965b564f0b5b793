import { createRoot } from 'react-dom/client';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { GraphiQL } from 'graphiql';
import { useEditorContext, useExecutionContext, useSchemaStore } from '@graphiql/react';
import { createGraphiQLFetcher, getSelectedOperationName } from '@graphiql/toolkit';
import { Kind, parse } from 'graphql';
import 'graphiql/style.css';
import { scrubStored, strippingStorage } from './storage.mjs';
import { authFor, explainUnauthenticated, headersAuthorization } from './auth.mjs';

// The page's first run must succeed once a key is typed, so the default
// query is one the read-only demo key may run, and it says where keys come
// from: a newcomer has not read the README yet. Its lines fit the query
// editor at a 1280-pixel-wide window (about 50 characters; the browser
// test measures it), so nothing of it is cut at the editor's edge.
const defaultQuery = `# gpugraph: type an API key in the field
# above, then press ▶ (Ctrl-Enter).
# Demo keys: acme-reader reads, acme-operator
# may also restart. The server prints them at
# every start; the gpugraph README lists them.
# Any key works as Authorization: Bearer <key>.
query VmsNodesGpus {
  vms(limit: 5) {
    total
    vms {
      name
      status
      node {
        name
        gpus {
          index address health
          model { name }
        }
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

// operationsOf are the operations of a document, as GraphiQL lists them.
const operationsOf = (doc) => (doc ? doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION) : undefined);

function parsed(query) {
  try {
    return parse(query);
  } catch {
    return undefined; // the server names the syntax error
  }
}

// makeFetcher sends every request with the Authorization current() gives.
// GraphiQL fetches the schema again whenever it is handed a new fetcher,
// so the page makes one each time the key settles.
//
// GraphiQL reads the query editor's text when a run starts, but reads the
// operations in it (the operation name, the document it hands the
// fetcher, the tab's query that history records) only 100 ms after the
// last edit, a debounce. A run right after an edit came with the edited
// text and the previous operation's name: the server's "operation … not
// found", a subscription sent as a query, history holding the previous
// query. Every run goes through here, so the fetcher reads the document
// it sends: the operation name is chosen from it as GraphiQL chooses once
// its debounce has run (the name given if the document has it, else the
// one at the same place among the operations, else the first; the
// document GraphiQL last read is opts.documentAST), the toolkit gets it
// as documentAST, and onRun brings GraphiQL's tab up to date with it.
function makeFetcher(current, onAuthError, onRun) {
  return async (params, opts = {}) => {
    const headers = { ...(opts.headers || {}) };
    const authorization = current();
    if (authorization && !headersAuthorization(headers)) headers.Authorization = authorization;
    const doc = parsed(params.query);
    const operationName = doc
      ? getSelectedOperationName(operationsOf(opts.documentAST), params.operationName || undefined, operationsOf(doc))
      : params.operationName;
    onRun.current?.(params.query, operationName);
    const result = await inner({ ...params, operationName }, { ...opts, headers, documentAST: doc });
    return explainUnauthenticated(result, onAuthError);
  };
}

// Inside is rendered as a child of <GraphiQL>, within its providers, for
// what the page needs of GraphiQL's state:
// - the run of the current operation, for Ctrl-Enter in the key field;
// - onRun, which sets the active tab's query and operation name when a
//   run starts (the fetcher above says why); the schema fetch's query is
//   not the editor's and is left alone;
// - a failed schema fetch's error, which GraphiQL writes into the result
//   pane and never clears: it goes once a later fetch loads the schema,
//   so a 401 from before the key was typed does not stay under a loaded
//   schema.
function Inside({ runRef, onRunRef }) {
  const { run } = useExecutionContext({ nonNull: true });
  const { queryEditor, responseEditor, updateActiveTabValues } = useEditorContext({ nonNull: true });
  useEffect(() => {
    runRef.current = run;
    onRunRef.current = (query, operationName) => {
      if (queryEditor && query === queryEditor.getValue()) updateActiveTabValues({ query, operationName: operationName ?? null });
    };
  }, [run, runRef, onRunRef, queryEditor, updateActiveTabValues]);

  const fetchError = useSchemaStore((s) => s.fetchError);
  const schema = useSchemaStore((s) => s.schema);
  const shownError = useRef(null);
  useEffect(() => {
    if (fetchError) shownError.current = fetchError;
  }, [fetchError]);
  useEffect(() => {
    if (!schema || !responseEditor || shownError.current === null) return;
    // Only the error itself goes: a result run since stays.
    if (responseEditor.getValue() === shownError.current) responseEditor.setValue('');
    shownError.current = null;
  }, [schema, responseEditor]);
  return null;
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
  const runRef = useRef(null);
  const onRunRef = useRef(null);
  const fetcher = useMemo(() => makeFetcher(() => latest.current, setStatus, onRunRef), [settled]);
  useEffect(() => setStatus(''), [settled]);
  // A stable callback: GraphiQL fetches the schema again when it changes.
  const onSchemaChange = useCallback(() => setStatus('Schema loaded: Ctrl-Space completes, Ctrl-Enter runs.'), []);
  // Ctrl-Enter (Cmd-Enter) runs from the key field too, so a newcomer's
  // three actions are: open the page, type the key, run.
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && runRef.current) {
      e.preventDefault();
      runRef.current();
    }
  };

  return (
    <div className="gg-page">
      <form className="gg-keybar" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor="gg-key">API key</label>
        {/* Focused on load: the key is the first thing to type. */}
        <input
          id="gg-key"
          autoFocus
          type="password"
          autoComplete="off"
          spellCheck="false"
          placeholder="e.g. acme-reader (demo keys are printed at server start)"
          value={key}
          onChange={(e) => setKey(e.target.value.trim())}
          onKeyDown={onKeyDown}
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
        >
          <Inside runRef={runRef} onRunRef={onRunRef} />
        </GraphiQL>
      </div>
    </div>
  );
}

createRoot(document.getElementById('graphiql')).render(<Playground />);
