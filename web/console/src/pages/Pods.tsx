import { useQuery } from '@urql/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from '../ApiError';
import { graphql } from '../gql';
import type { ConsolePodsQuery, PodMetricType, PodSortField, SortOrder } from '../gql/graphql';
import { finite, join, Plot } from '../Plot';
import './pods.css';

// The Run:ai face: the tenant's pods with the Pods API's own filters
// (filterBy strings, search, deleted, completed), sort and offset paging;
// a selected pod's containers, resources and node; its metrics over a
// window as plots. The list is one pods query, the count its total (what
// podsCount answers for the same filters).
const PodsQuery = graphql(`
  query ConsolePods(
    $filterBy: [String!]
    $search: String
    $sortBy: PodSortField
    $sortOrder: SortOrder
    $offset: Int
    $limit: Int
    $deleted: Boolean
    $completed: Boolean
  ) {
    pods(
      filterBy: $filterBy
      search: $search
      sortBy: $sortBy
      sortOrder: $sortOrder
      offset: $offset
      limit: $limit
      deleted: $deleted
      completed: $completed
    ) {
      total
      next
      pods {
        id
        name
        workloadId
        workloadName
        projectName
        clusterId
        nodeName
        currentNodePool
        k8sPhase
        priorityClassName
        createdAt
        completedAt
        deletedAt
        ip
        containers {
          name
          image
          startedAt
        }
        requestedResources {
          gpuRequestType
          gpu {
            request
            limit
          }
          gpuMemory {
            request
            limit
          }
          cpu {
            request
            limit
          }
          cpuMemory {
            request
            limit
          }
        }
        allocatedResources {
          gpu
          gpuMemory
          cpu
          cpuMemory
        }
        node {
          id
          name
          status
          nodePool
          agentVersion
        }
      }
    }
  }
`);

type PodRow = ConsolePodsQuery['pods']['pods'][number];

const sortFields: [PodSortField, string][] = [
  ['CREATED_AT', 'created'],
  ['NAME', 'name'],
  ['NODE_NAME', 'node'],
  ['K8S_PHASE', 'phase'],
  ['WORKLOAD_ID', 'workload'],
  ['CURRENT_NODEPOOL', 'node pool'],
  ['COMPLETED_AT', 'completed'],
  ['DELETED_AT', 'deleted'],
  ['CLUSTER_ID', 'cluster'],
  ['REVISION_ID', 'revision'],
];

// The list's columns: what each shows and the field it sorts by.
const columns: { title: string; sort?: PodSortField; cell: (p: PodRow) => string }[] = [
  { title: 'Name', sort: 'NAME', cell: (p) => p.name },
  { title: 'Phase', sort: 'K8S_PHASE', cell: (p) => p.k8sPhase },
  { title: 'Workload', sort: 'WORKLOAD_ID', cell: (p) => p.workloadName ?? p.workloadId },
  { title: 'Project', cell: (p) => p.projectName ?? '' },
  { title: 'Node', sort: 'NODE_NAME', cell: (p) => p.nodeName ?? '—' },
  { title: 'Created', sort: 'CREATED_AT', cell: (p) => when(p.createdAt) },
];

interface Filters {
  filterBy: string;
  search: string;
  deleted: boolean;
  completed: '' | 'true' | 'false';
}

const noFilters: Filters = { filterBy: '', search: '', deleted: false, completed: '' };

export function Pods() {
  const [typed, setTyped] = useState<Filters>(noFilters);
  const [applied, setApplied] = useState<Filters>(noFilters);
  const [sortBy, setSortBy] = useState<PodSortField>('CREATED_AT');
  const [sortOrder, setSortOrder] = useState<SortOrder>('DESC');
  const [limit, setLimit] = useState(50);
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);

  const variables = useMemo(
    () => ({
      // One string may join several filters with commas, as the API takes them.
      filterBy: applied.filterBy.trim() ? [applied.filterBy.trim()] : null,
      search: applied.search || null,
      deleted: applied.deleted || null,
      completed: applied.completed === '' ? null : applied.completed === 'true',
      sortBy,
      sortOrder,
      offset,
      limit,
    }),
    [applied, sortBy, sortOrder, offset, limit],
  );
  const [{ data, fetching, error }] = useQuery({ query: PodsQuery, variables });
  const list = data?.pods;
  const pod = list?.pods.find((p) => p.id === selected) ?? null;

  const apply = (f: Filters) => {
    setApplied(f);
    setOffset(0);
  };
  const sortOn = (field: PodSortField) => {
    if (field === sortBy) setSortOrder(sortOrder === 'ASC' ? 'DESC' : 'ASC');
    else {
      setSortBy(field);
      setSortOrder('ASC');
    }
    setOffset(0);
  };

  return (
    <section aria-labelledby="page-title" class="gg-pods">
      <h1 id="page-title">Pods</h1>
      <form
        class="gg-filters"
        aria-label="Filter pods"
        onSubmit={(e) => {
          e.preventDefault();
          apply(typed);
        }}
      >
        <label>
          Filter (filterBy)
          <input
            name="filterBy"
            value={typed.filterBy}
            placeholder="name=^sweep_lr, k8sPhase==Running"
            spellcheck={false}
            aria-describedby="gg-filter-help"
            onInput={(e) => setTyped({ ...typed, filterBy: e.currentTarget.value })}
          />
        </label>
        <label>
          Search
          <input
            name="search"
            type="search"
            value={typed.search}
            onInput={(e) => setTyped({ ...typed, search: e.currentTarget.value })}
          />
        </label>
        <label>
          Completed
          <select
            name="completed"
            value={typed.completed}
            onChange={(e) => {
              const f = { ...typed, completed: e.currentTarget.value as Filters['completed'] };
              setTyped(f);
              apply({ ...applied, completed: f.completed });
            }}
          >
            <option value="">both</option>
            <option value="true">completed only</option>
            <option value="false">not completed</option>
          </select>
        </label>
        <label class="gg-check">
          <input
            name="deleted"
            type="checkbox"
            checked={typed.deleted}
            onChange={(e) => {
              const f = { ...typed, deleted: e.currentTarget.checked };
              setTyped(f);
              apply({ ...applied, deleted: f.deleted });
            }}
          />
          Deleted pods only
        </label>
        <label>
          Sort by
          <select name="sortBy" value={sortBy} onChange={(e) => { setSortBy(e.currentTarget.value as PodSortField); setOffset(0); }}>
            {sortFields.map(([f, t]) => (
              <option key={f} value={f}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Order
          <select name="sortOrder" value={sortOrder} onChange={(e) => { setSortOrder(e.currentTarget.value as SortOrder); setOffset(0); }}>
            <option value="ASC">ascending</option>
            <option value="DESC">descending</option>
          </select>
        </label>
        <button type="submit">Apply</button>
        <p id="gg-filter-help" class="gg-help">
          <code>field op value</code>, ops <code>== != &lt;= &gt;= =@ !@ =^ =$</code>; several joined by commas are ANDed.
        </p>
      </form>

      {error && <ApiError error={error} />}
      {fetching && !list && <p role="status">Loading pods…</p>}
      {list && !error && (
        <>
          <p class="gg-count" role="status" data-total={list.total}>
            {list.total === 0
              ? 'No pod matches.'
              : `Pods ${offset + 1}–${offset + list.pods.length} of ${list.total}`}
          </p>
          <PodTable pods={list.pods} selected={selected} onSelect={setSelected} sortBy={sortBy} sortOrder={sortOrder} onSort={sortOn} />
          <nav class="gg-pager" aria-label="Pages of pods">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - limit))}>
              Previous
            </button>
            <button type="button" disabled={list.next == null} onClick={() => list.next != null && setOffset(list.next)}>
              Next
            </button>
            <label>
              Rows a page
              <select name="limit" value={limit} onChange={(e) => { setLimit(Number(e.currentTarget.value)); setOffset(0); }}>
                {[25, 50, 100, 500].map((n) => (
                  <option key={n} value={n}>{n}</option>
                ))}
              </select>
            </label>
          </nav>
        </>
      )}
      {pod && <PodDetail pod={pod} />}
    </section>
  );
}

const rowHeight = 34;
const viewRows = 14;

// PodTable renders only the rows in view (plus a few), with spacer rows
// for the rest, so a page of 500 pods costs what 20 do. Each pod's name
// is a button: Tab reaches it, Enter selects the pod.
function PodTable(p: {
  pods: PodRow[];
  selected: string | null;
  onSelect: (id: string) => void;
  sortBy: PodSortField;
  sortOrder: SortOrder;
  onSort: (f: PodSortField) => void;
}) {
  const [top, setTop] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  // Another list (filters, sort, page) starts at its top: the old scroll
  // position may lie past its end, and a shrinking list fires no scroll.
  useEffect(() => {
    if (box.current) box.current.scrollTop = 0;
    setTop(0);
  }, [p.pods]);
  const first = Math.min(Math.max(0, Math.floor(top / rowHeight) - 4), Math.max(0, p.pods.length - viewRows));
  const last = Math.min(p.pods.length, first + viewRows + 8);
  return (
    <div
      ref={box}
      class="gg-pods-scroll"
      style={{ maxHeight: `${(viewRows + 1) * rowHeight}px` }}
      onScroll={(e) => setTop(e.currentTarget.scrollTop)}
    >
      <table class="gg-table gg-pods-table" aria-rowcount={p.pods.length + 1}>
        <caption class="gg-visually-hidden">Pods; the column buttons sort, a pod's name shows its details</caption>
        <thead>
          <tr aria-rowindex={1}>
            {columns.map((c) => (
              <th
                scope="col"
                key={c.title}
                aria-sort={c.sort === p.sortBy ? (p.sortOrder === 'ASC' ? 'ascending' : 'descending') : undefined}
              >
                {c.sort ? (
                  <button type="button" class="gg-sort" onClick={() => p.onSort(c.sort!)}>
                    {c.title}
                    {c.sort === p.sortBy ? (p.sortOrder === 'ASC' ? ' ▲' : ' ▼') : ''}
                  </button>
                ) : (
                  c.title
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {first > 0 && <tr aria-hidden="true" style={{ height: `${first * rowHeight}px` }} />}
          {p.pods.slice(first, last).map((pod, i) => (
            <tr key={pod.id} aria-rowindex={first + i + 2} class={pod.id === p.selected ? 'gg-selected' : undefined}>
              {columns.map((c, j) => (
                <td key={c.title}>
                  {j === 0 ? (
                    <button type="button" class="gg-link" data-pod={pod.id} aria-current={pod.id === p.selected ? 'true' : undefined} onClick={() => p.onSelect(pod.id)}>
                      {c.cell(pod)}
                    </button>
                  ) : (
                    c.cell(pod)
                  )}
                </td>
              ))}
            </tr>
          ))}
          {last < p.pods.length && <tr aria-hidden="true" style={{ height: `${(p.pods.length - last) * rowHeight}px` }} />}
        </tbody>
      </table>
    </div>
  );
}

function when(t: string | null | undefined): string {
  return t ? t.replace('T', ' ').replace(/\.\d+/, '').replace('Z', ' UTC') : '—';
}

function pair(r: { request?: number | string | null; limit?: number | string | null } | null | undefined): string {
  if (!r) return '—';
  return `${r.request ?? '—'} requested, ${r.limit ?? '—'} limit`;
}

// PodDetail is the selected pod: its containers, what it asked for and
// was given, its node, and its metrics.
function PodDetail({ pod }: { pod: PodRow }) {
  const req = pod.requestedResources;
  const alloc = pod.allocatedResources;
  return (
    <section class="gg-pod" aria-labelledby="gg-pod-title">
      <h2 id="gg-pod-title">{pod.name}</h2>
      <dl class="gg-facts">
        <dt>ID</dt>
        <dd><code>{pod.id}</code></dd>
        <dt>Phase</dt>
        <dd>{pod.k8sPhase}</dd>
        <dt>Workload</dt>
        <dd>{pod.workloadName ?? ''} <code>{pod.workloadId}</code></dd>
        <dt>Project</dt>
        <dd>{pod.projectName ?? '—'}</dd>
        <dt>Priority class</dt>
        <dd>{pod.priorityClassName}</dd>
        <dt>Created</dt>
        <dd>{when(pod.createdAt)}</dd>
        <dt>Completed</dt>
        <dd>{when(pod.completedAt)}</dd>
        {pod.deletedAt && (
          <>
            <dt>Deleted</dt>
            <dd>{when(pod.deletedAt)}</dd>
          </>
        )}
        <dt>Address</dt>
        <dd>{pod.ip ?? '—'}</dd>
      </dl>

      <h3>Node</h3>
      {pod.node ? (
        <dl class="gg-facts">
          <dt>Name</dt>
          <dd>{pod.node.name}</dd>
          <dt>Status</dt>
          <dd>{pod.node.status.toLowerCase()}</dd>
          <dt>Node pool</dt>
          <dd>{pod.currentNodePool ?? pod.node.nodePool}</dd>
          <dt>Agent</dt>
          <dd>{pod.node.agentVersion}</dd>
          <dt>Cluster</dt>
          <dd><code>{pod.clusterId}</code></dd>
        </dl>
      ) : (
        <p>{pod.nodeName ? `${pod.nodeName} (not in the inventory)` : 'Not scheduled yet.'}</p>
      )}

      <h3>Resources</h3>
      <table class="gg-table">
        <thead>
          <tr>
            <th scope="col">Resource</th>
            <th scope="col">Asked for</th>
            <th scope="col">Given</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">GPU{req?.gpuRequestType ? ` (${req.gpuRequestType})` : ''}</th>
            <td>{pair(req?.gpu)}</td>
            <td>{alloc?.gpu ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">GPU memory</th>
            <td>{pair(req?.gpuMemory)}</td>
            <td>{alloc?.gpuMemory ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">CPU cores</th>
            <td>{pair(req?.cpu)}</td>
            <td>{alloc?.cpu ?? '—'}</td>
          </tr>
          <tr>
            <th scope="row">Memory</th>
            <td>{pair(req?.cpuMemory)}</td>
            <td>{alloc?.cpuMemory ?? '—'}</td>
          </tr>
        </tbody>
      </table>

      <h3>Containers</h3>
      <table class="gg-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Image</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {pod.containers.map((c) => (
            <tr key={c.name}>
              <td>{c.name}</td>
              <td><code>{c.image}</code></td>
              <td>{when(c.startedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <PodMetrics pod={pod} />
    </section>
  );
}

const MetricsQuery = graphql(`
  query ConsolePodMetrics(
    $workloadId: ID!
    $podId: ID!
    $metricTypes: [PodMetricType!]!
    $start: Time!
    $end: Time!
    $numberOfSamples: Int
  ) {
    podMetrics(
      workloadId: $workloadId
      podId: $podId
      metricTypes: $metricTypes
      start: $start
      end: $end
      numberOfSamples: $numberOfSamples
    ) {
      measurements {
        type
        labels
        values {
          value
          timestamp
        }
      }
      histogram {
        type
        values {
          timestamp
          data
        }
      }
      omittedTypes
    }
  }
`);

// What the page plots; a type a pod cannot have (NIM on a training pod) is
// left out by the API and listed in omittedTypes.
const metricTypes: PodMetricType[] = [
  'GPU_UTILIZATION_PER_GPU',
  'GPU_MEMORY_USAGE_BYTES_PER_GPU',
  'NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES',
  'NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES',
];
const samples = 120;

const windows: [string, number][] = [
  ['last hour', 3600],
  ['last 6 h', 6 * 3600],
  ['last 24 h', 24 * 3600],
];

interface Window {
  start: string;
  end: string;
}

function lastSeconds(s: number): Window {
  const end = new Date();
  return { start: new Date(end.getTime() - s * 1000).toISOString(), end: end.toISOString() };
}

// A datetime-local input's value (local time, no zone) and back.
function localInput(iso: string): string {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

const secs = (t: string) => Date.parse(t) / 1000;
const percent = (v: number) => `${v.toFixed(v < 10 ? 1 : 0)} %`;
const gib = (v: number) => `${(v / 2 ** 30).toFixed(2)} GiB`;
const seconds = (v: number) => (v < 1 ? `${(v * 1000).toFixed(0)} ms` : `${v.toFixed(2)} s`);

function PodMetrics({ pod }: { pod: PodRow }) {
  const [choice, setChoice] = useState('3600');
  const [win, setWin] = useState<Window>(() => lastSeconds(3600));
  const [from, setFrom] = useState(() => localInput(win.start));
  const [to, setTo] = useState(() => localInput(win.end));
  const [{ data, fetching, error }] = useQuery({
    query: MetricsQuery,
    variables: { workloadId: pod.workloadId, podId: pod.id, metricTypes, start: win.start, end: win.end, numberOfSamples: samples },
  });
  const m = data?.podMetrics;

  const plots = useMemo(() => {
    if (!m) return null;
    const perGpu = (type: string) =>
      join(
        m.measurements
          .filter((s) => s.type === type)
          .map((s) => ({
            label: s.labels?.gpu != null ? `GPU ${s.labels.gpu}` : type,
            at: s.values.map((v) => secs(v.timestamp)),
            values: s.values.map((v) => finite(v.value)),
          })),
      );
    const percentiles = (type: string) => {
      const h = m.histogram?.find((s) => s.type === type);
      if (!h) return join([]);
      return join(
        ['p50', 'p90', 'p99'].map((q) => ({
          label: q,
          at: h.values.map((v) => secs(v.timestamp)),
          values: h.values.map((v) => finite(v.data[q])),
        })),
      );
    };
    return {
      util: perGpu('GPU_UTILIZATION_PER_GPU'),
      memory: perGpu('GPU_MEMORY_USAGE_BYTES_PER_GPU'),
      ttft: percentiles('NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES'),
      e2e: percentiles('NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES'),
    };
  }, [m]);

  return (
    <section
      class="gg-metrics"
      aria-labelledby="gg-metrics-title"
      data-start={win.start}
      data-end={win.end}
      data-samples={samples}
    >
      <h3 id="gg-metrics-title">Metrics</h3>
      <form
        class="gg-filters"
        aria-label="Metrics window"
        onSubmit={(e) => {
          e.preventDefault();
          if (choice !== 'custom') setWin(lastSeconds(Number(choice)));
          else setWin({ start: new Date(from).toISOString(), end: new Date(to).toISOString() });
        }}
      >
        <label>
          Window
          <select
            name="window"
            value={choice}
            onChange={(e) => {
              const c = e.currentTarget.value;
              setChoice(c);
              if (c !== 'custom') setWin(lastSeconds(Number(c)));
            }}
          >
            {windows.map(([t, s]) => (
              <option key={s} value={String(s)}>{t}</option>
            ))}
            <option value="custom">custom range</option>
          </select>
        </label>
        {choice === 'custom' && (
          <>
            <label>
              From
              <input name="from" type="datetime-local" required value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
            </label>
            <label>
              To
              <input name="to" type="datetime-local" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
            </label>
          </>
        )}
        <button type="submit">{choice === 'custom' ? 'Show' : 'Refresh'}</button>
        <p class="gg-help">
          {when(win.start)} to {when(win.end)}, up to {samples} samples a series.
        </p>
      </form>
      {error && <ApiError error={error} />}
      {fetching && !m && <p role="status">Loading metrics…</p>}
      {plots && (
        <div class="gg-plots">
          <Plot name="gpu-utilization" title="GPU utilization per GPU" {...plots.util} format={percent} />
          <Plot name="gpu-memory" title="GPU memory in use per GPU" {...plots.memory} format={gib} />
          {m!.histogram && m!.histogram.length > 0 && (
            <>
              <Plot name="nim-ttft" title="NIM time to first token (p50, p90, p99)" {...plots.ttft} format={seconds} />
              <Plot name="nim-e2e" title="NIM end-to-end request latency (p50, p90, p99)" {...plots.e2e} format={seconds} />
            </>
          )}
          {m!.omittedTypes.length > 0 && (
            <p class="gg-help">Not reported for this pod: {m!.omittedTypes.join(', ')}.</p>
          )}
        </div>
      )}
    </section>
  );
}
