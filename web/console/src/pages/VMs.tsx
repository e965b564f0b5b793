import type { CombinedError } from '@urql/core';
import { useMutation, useQuery } from '@urql/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from '../ApiError';
import { graphql } from '../gql';
import { useViewer } from '../viewer';
import type { VmStatus } from '../gql/graphql';
import { dollars, status, useRefetch, useVmEvents, type VmRow } from '../vm';

// The organization's VMs and pods, newest first, live: the vmEvents
// subscription writes each changed VM into graphcache, which re-renders
// its row in place; an event of a VM the list does not hold yet (created
// elsewhere) reloads the list. Filtering is done here, on the rows loaded,
// so a row whose status changes moves in or out of the filter at once.
// Only the rows in view are rendered (fixed row height), so a list of
// thousands scrolls as one of ten.

// PAGE is the most rows the API answers at once; the list loads the rest
// page by page.
const PAGE = 500;
// ROW is each row's height in px (console.css sets the same).
const ROW = 40;
// OVERSCAN rows are rendered beyond each edge of the view.
const OVERSCAN = 8;

const VmsPage = graphql(`
  query ConsoleVms($offset: Int!, $limit: Int!) {
    vms(offset: $offset, limit: $limit) {
      total
      vms {
        ...ConsoleVmFields
      }
    }
  }
`);

const VmDetail = graphql(`
  query ConsoleVmDetail($id: ID!) {
    vm(id: $id) {
      ...ConsoleVmFields
      imageUrl
      resourceSize
      console {
        text
        bytes
        capturedAt
      }
    }
  }
`);

const Restart = graphql(`
  mutation ConsoleRestartVm($id: ID!) {
    restartVm(id: $id) {
      ...ConsoleVmFields
    }
  }
`);

const Stop = graphql(`
  mutation ConsoleStopVm($id: ID!) {
    stopVm(id: $id) {
      ...ConsoleVmFields
    }
  }
`);

const Terminate = graphql(`
  mutation ConsoleTerminateVm($id: ID!) {
    terminateVm(id: $id) {
      ...ConsoleVmFields
    }
  }
`);

const statuses: VmStatus[] = ['PENDING', 'DEPLOYING', 'RUNNING', 'STOPPED', 'FAILED', 'INTERRUPTED', 'TERMINATED'];

type Verb = 'Restart' | 'Stop' | 'Terminate';

// Which actions a row offers, by its status: what the lifecycle can do to
// it. Whether the key may is the API's to answer (a 403 shown as it is).
function verbsOf(s: VmStatus): Verb[] {
  if (s === 'TERMINATED') return [];
  if (s === 'RUNNING' || s === 'DEPLOYING' || s === 'INTERRUPTED') return ['Restart', 'Stop', 'Terminate'];
  return ['Restart', 'Terminate'];
}

// An action's answer, shown above the list until the next one.
interface Outcome {
  verb: Verb;
  vm: { id: string; name: string };
  error?: CombinedError;
  after?: VmRow;
}

export function VMs() {
  const [first, reloadFirst] = useQuery({ query: VmsPage, variables: { offset: 0, limit: PAGE } });
  const [more, setMore] = useState<Record<number, VmRow[]>>({});
  const [reload, setReload] = useState(0);
  const [filter, setFilter] = useState<VmStatus | ''>('');
  const [search, setSearch] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const total = first.data?.vms.total ?? 0;
  const rows = useMemo(() => {
    const all = [...(first.data?.vms.vms ?? [])];
    for (let off = PAGE; off < total; off += PAGE) all.push(...(more[off] ?? []));
    return all;
  }, [first.data, more, total]);
  const known = useRef(new Set<string>());
  known.current = new Set(rows.map((r) => r.id));

  const [openChanged, setOpenChanged] = useState(0);
  const openRef = useRef(open);
  openRef.current = open;
  const eventsError = useVmEvents((e) => {
    if (e.vmId === openRef.current) setOpenChanged((n) => n + 1);
    if (!known.current.has(e.vmId)) {
      reloadFirst({ requestPolicy: 'network-only' });
      setReload((n) => n + 1);
    }
  });

  const needle = search.trim().toLowerCase();
  const shown = rows.filter(
    (r) => (!filter || r.status === filter) && (!needle || r.name.toLowerCase().includes(needle) || r.id.toLowerCase().includes(needle)),
  );
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);

  // Restart, stop and terminate need compute.operate: a key without it is
  // offered no action (the API would refuse each).
  const viewer = useViewer();
  const operate = viewer.can('compute.operate');
  const [, restart] = useMutation(Restart);
  const [, stop] = useMutation(Stop);
  const [, terminate] = useMutation(Terminate);
  const act = async (verb: Verb, vm: { id: string; name: string }) => {
    const run = verb === 'Restart' ? restart : verb === 'Stop' ? stop : terminate;
    const r = await run({ id: vm.id });
    const d = r.data as Record<string, VmRow | undefined> | undefined;
    setOutcome({ verb, vm, error: r.error, after: d && (d.restartVm ?? d.stopVm ?? d.terminateVm) });
  };

  const pages = [];
  for (let off = PAGE; off < total; off += PAGE) {
    pages.push(<MoreRows key={off} offset={off} reload={reload} onRows={(o, r) => setMore((m) => ({ ...m, [o]: r }))} />);
  }

  return (
    <section aria-labelledby="page-title" class="gg-vms">
      <h1 id="page-title">VMs</h1>
      {pages}
      {first.error && <ApiError error={first.error} />}
      {eventsError && <ApiError error={eventsError} />}
      {first.fetching && !first.data && <p role="status">Loading VMs…</p>}
      <div class="gg-vms-filters">
        <label>
          Status{' '}
          <select id="gg-vms-status" value={filter} onChange={(e) => setFilter(e.currentTarget.value as VmStatus | '')}>
            <option value="">all ({rows.length})</option>
            {statuses.map((s) => (
              <option key={s} value={s}>
                {status(s)} ({counts.get(s) ?? 0})
              </option>
            ))}
          </select>
        </label>
        <label>
          Name or id{' '}
          <input id="gg-vms-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
      </div>
      {viewer.viewer && !operate && (
        <p class="gg-vms-cannot">This key cannot restart, stop or terminate: it lacks compute.operate.</p>
      )}
      <div class="gg-vms-outcome" aria-live="polite">
        {outcome && <OutcomeLine outcome={outcome} />}
      </div>
      {open && <Detail id={open} changed={openChanged} onClose={() => setOpen(null)} onAct={operate ? act : undefined} />}
      {first.data && (
        <VirtualTable
          rows={shown}
          caption={`${total} VMs and pods of this organization${shown.length !== rows.length ? `, ${shown.length} shown` : ''}`}
          onOpen={setOpen}
          onAct={operate ? act : undefined}
        />
      )}
    </section>
  );
}

// MoreRows loads the page of the list at offset (past the first) and hands
// its rows up, again on each change of reload and whenever graphcache
// updates one of them.
function MoreRows({ offset, reload, onRows }: { offset: number; reload: number; onRows: (offset: number, rows: VmRow[]) => void }) {
  const [r, again] = useQuery({ query: VmsPage, variables: { offset, limit: PAGE } });
  useRefetch(reload, again);
  useEffect(() => {
    if (r.data) onRows(offset, r.data.vms.vms);
  }, [r.data]);
  return r.error ? <ApiError error={r.error} /> : null;
}

function OutcomeLine({ outcome }: { outcome: Outcome }) {
  const { verb, vm, error, after } = outcome;
  return (
    <div class="gg-vms-outcome-line" data-vm-id={vm.id} data-verb={verb}>
      <strong>
        {verb} {vm.name}
      </strong>
      {error ? (
        <ApiError error={error} />
      ) : (
        after && (
          <span>
            {' '}
            answered: {status(after.status)}
            {after.statusReason && ` (${after.statusReason})`}
          </span>
        )
      )}
    </div>
  );
}

type Act = (verb: Verb, vm: { id: string; name: string }) => void;

function Actions({ vm, onAct }: { vm: VmRow; onAct: Act }) {
  return (
    <>
      {verbsOf(vm.status).map((v) => (
        <button key={v} type="button" class="gg-act" aria-label={`${v} ${vm.name}`} onClick={() => onAct(v, vm)}>
          {v}
        </button>
      ))}
    </>
  );
}

// VirtualTable renders the rows in view of its scrolling region, and two
// spacer rows that keep the scrollbar the whole list's.
// Without onAct (a key that may not act) the table has no Actions column.
function VirtualTable({ rows, caption, onOpen, onAct }: { rows: VmRow[]; caption: string; onOpen: (id: string) => void; onAct?: Act }) {
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(ROW * 12);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight);
    measure();
    const o = new ResizeObserver(measure);
    o.observe(el);
    return () => o.disconnect();
  }, []);
  const frame = useRef(0);
  const onScroll = () => {
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => setTop(box.current?.scrollTop ?? 0));
  };
  const start = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const end = Math.min(rows.length, Math.ceil((top + height) / ROW) + OVERSCAN);
  const cols = onAct ? 9 : 8;
  return (
    <div class="gg-vms-scroll" ref={box} onScroll={onScroll} tabIndex={0} role="region" aria-label="VMs and pods, scrollable">
      <table class="gg-table gg-vms-table" aria-rowcount={rows.length + 1}>
        <caption>{caption}</caption>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Reason</th>
            <th scope="col">Stage</th>
            <th scope="col">GPUs</th>
            <th scope="col">Price</th>
            <th scope="col">Cost so far</th>
            <th scope="col">Node</th>
            {onAct && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {start > 0 && (
            <tr class="gg-spacer" aria-hidden="true" style={{ height: `${start * ROW}px` }}>
              <td colSpan={cols} />
            </tr>
          )}
          {rows.slice(start, end).map((vm, i) => (
            <tr key={vm.id} class="gg-vm-row" data-vm-id={vm.id} data-status={status(vm.status)} aria-rowindex={start + i + 2}>
              <td class="gg-vm-name">
                <button type="button" class="gg-link" title={vm.id} onClick={() => onOpen(vm.id)}>
                  {vm.name}
                </button>
              </td>
              <td class="gg-vm-status">{status(vm.status)}</td>
              <td class="gg-vm-reason" title={vm.statusReason}>
                {vm.statusReason}
              </td>
              <td class="gg-vm-stage">{vm.provisioningStage}</td>
              <td title={gpusOf(vm)}>{gpusOf(vm)}</td>
              <td>{dollars(vm.pricePerHourCents)}/h</td>
              <td class="gg-vm-cost">{vm.costSoFar == null ? '—' : dollars(vm.costSoFar)}</td>
              <td class="gg-vm-node">{vm.node?.name ?? '—'}</td>
              {onAct && (
                <td class="gg-vm-actions">
                  <Actions vm={vm} onAct={onAct} />
                </td>
              )}
            </tr>
          ))}
          {end < rows.length && (
            <tr class="gg-spacer" aria-hidden="true" style={{ height: `${(rows.length - end) * ROW}px` }}>
              <td colSpan={cols} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

function gpusOf(vm: VmRow): string {
  const what = vm.capabilityTier === 'pod' ? 'pod' : 'VM';
  if (!vm.gpuCount) return `${what}, CPU`;
  return `${what}, ${vm.gpuCount} × ${vm.gpuModelName ?? 'GPU'}`;
}

// Detail is one VM with what the list leaves out: its address, its image
// and the tail of its serial console, read again on each of its events
// (changed) and on Reload (its node pushes the console as it grows).
function Detail({ id, changed, onClose, onAct }: { id: string; changed: number; onClose: () => void; onAct?: Act }) {
  const [{ data, error, fetching }, again] = useQuery({ query: VmDetail, variables: { id } });
  const vm = data?.vm;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [id]);
  useRefetch(changed, again);
  return (
    <section class="gg-vm-detail" aria-labelledby="gg-vm-detail-title" data-vm-id={id}>
      <h2 id="gg-vm-detail-title" tabIndex={-1} ref={heading}>
        {vm ? vm.name : id}
      </h2>
      {error && <ApiError error={error} />}
      {fetching && !data && <p role="status">Loading {id}…</p>}
      {data && !vm && <p>No VM or pod {id} in this organization.</p>}
      {vm && (
        <>
          <dl>
            <dt>ID</dt>
            <dd><code>{vm.id}</code></dd>
            <dt>Status</dt>
            <dd>
              {status(vm.status)}
              {vm.statusReason && ` (${vm.statusReason})`}, {vm.provisioningStage}
              {vm.queuePosition != null && `, place ${vm.queuePosition} in the queue`}
            </dd>
            <dt>Size</dt>
            <dd>{vm.resourceSize || gpusOf(vm)}</dd>
            <dt>Image</dt>
            <dd>{vm.imageUrl || '—'}</dd>
            <dt>Endpoint</dt>
            <dd class="gg-vm-endpoint">{vm.endpointUrl ? <a href={vm.endpointUrl}>{vm.endpointUrl}</a> : '—'}</dd>
          </dl>
          <h3>Console</h3>
          {vm.console ? (
            vm.console.bytes > 0 ? (
              <>
                <p>
                  {vm.console.bytes} bytes{vm.console.capturedAt && `, captured ${vm.console.capturedAt}`}
                </p>
                <pre class="gg-vm-console" tabIndex={0} aria-label={`Serial console of ${vm.name}`}>
                  {vm.console.text}
                </pre>
              </>
            ) : (
              <p>Nothing captured yet.</p>
            )
          ) : (
            <p>A pod has no serial console.</p>
          )}
          {onAct && (
            <p>
              <Actions vm={vm} onAct={onAct} />
            </p>
          )}
        </>
      )}
      <p>
        <button type="button" onClick={() => again({ requestPolicy: 'network-only' })}>
          Reload {vm ? vm.name : id}
        </button>{' '}
        <button type="button" onClick={onClose}>
          Close {vm ? vm.name : id}
        </button>
      </p>
    </section>
  );
}
