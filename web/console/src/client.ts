import { Client, fetchExchange, mapExchange, subscriptionExchange, type CombinedError } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { createClient as createWSClient } from 'graphql-ws/client';

// Types the schema gives no id: graphcache stores each inside the object
// that holds it (a null key), except those with a field that names them.
// A page that queries another id-less type adds it here, or graphcache
// cannot tell two of them apart.
const embedded = [
  'AllocatedResources', 'BillingEventConnection', 'BillingEventEdge', 'Container', 'CreatedApplication',
  'CreatedKey', 'ExtendedResource', 'GpuConnection', 'GpuEdge', 'GpuHolder', 'GpuQuota', 'HistogramSeries',
  'HistogramValue', 'InstanceTypeCapacity', 'LedgerEntryConnection', 'LedgerEntryEdge', 'MatchExpression',
  'Measurement', 'MetricValue', 'NodeAffinityPreferred', 'NodeAffinityRequired', 'NodeChange',
  'NodeConnection', 'NodeEdge', 'NodeEnrollment', 'NodeList', 'NodeSelectorTerm', 'PageInfo',
  'PodConnection', 'PodEdge', 'PodList', 'PodMetrics', 'PodNodeAffinity', 'PodRequestResources',
  'PodToleration', 'PreferredNodeSelectorTerm', 'RequestResourceCores', 'RequestResourceQuantity',
  'Usage', 'UsageLine', 'VmConnection', 'VmConsole', 'VmEdge', 'VmList',
];

const keys: Record<string, (data: Record<string, unknown>) => string | null> = Object.fromEntries(
  embedded.map((t) => [t, () => null]),
);
// An instance type's name is its key (1 to 64 of [a-z0-9_], unique).
keys.InstanceType = (data) => (typeof data.name === 'string' ? data.name : null);

// isUnauthorized: the server refused the key itself (401), not a permission
// it lacks (403), which the page shows as it does any other error.
export function isUnauthorized(error: CombinedError): boolean {
  const status = (error.response as Response | undefined)?.status;
  return status === 401 || error.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');
}

// makeClient is one urql client for one key: queries and mutations POST to
// /graphql with Authorization: Bearer <key>; subscriptions go over one
// graphql-ws socket to /graphql, the key in connectionParams as an
// Authorization member, as the playground sends it. onUnauthorized runs
// with the server's refusal of the key.
export function makeClient(key: string, onUnauthorized: (error: CombinedError) => void): { client: Client; close: () => void } {
  const authorization = `Bearer ${key}`;
  const ws = createWSClient({
    url: `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/graphql`,
    connectionParams: { Authorization: authorization },
    lazy: true,
  });
  const client = new Client({
    url: '/graphql',
    fetchOptions: () => ({ headers: { Authorization: authorization } }),
    exchanges: [
      cacheExchange({ keys }),
      mapExchange({
        onError(error) {
          if (isUnauthorized(error)) onUnauthorized(error);
        },
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return {
            subscribe(sink) {
              const unsubscribe = ws.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return { client, close: () => void ws.dispose() };
}
