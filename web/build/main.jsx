import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/style.css';

const fetcher = createGraphiQLFetcher({ url: '/graphql' });

// The API authorizes requests with a bearer token, so the headers pane starts
// open with that header half-written. Headers are not persisted by default so a
// pasted token does not linger in localStorage.
const defaultHeaders = JSON.stringify({ Authorization: 'Bearer ' }, null, 2);

createRoot(document.getElementById('graphiql')).render(
  <GraphiQL
    fetcher={fetcher}
    defaultHeaders={defaultHeaders}
    isHeadersEditorEnabled
    defaultEditorToolsVisibility="headers"
  />,
);
