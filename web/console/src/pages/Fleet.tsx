import { useQuery, useSubscription } from '@urql/preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { graphql } from '../gql';
import type { ConsoleFleetNodeFragment } from '../gql/graphql';
import { ApiError } from '../ApiError';
import { useViewer } from '../viewer';

// A node as the page shows it. The same fields come with every node event,
// so graphcache replaces the node in place and its row moves by itself.
// Gpu.vm is the caller's organization's VM or pod only. Gpu.holder names
// whichever organization holds a GPU, answered only to the fleet's
// operator (nodes.admin): a tenant reads null there, and of the rest only
// the node's count of free GPUs (freeGpuCount), so the page shows a tenant
// counts, never who holds another's GPU.
graphql(`
  fragment ConsoleFleetNode on Node {
    id
    name
    clusterId
    nodePool
    status
    agentVersion
    leavingAt
    lastHeartbeatAt
    freeGpuCount
    gpus {
      id
      index
      address
      modelId
      health
      failedReason
      vm {
        id
        name
      }
      holder {
        organizationId
        vmId
      }
    }
  }
`);

const FleetQuery = graphql(`
  query ConsoleFleet {
    nodes {
      ...ConsoleFleetNode
    }
  }
`);

const FleetEvents = graphql(`
  subscription ConsoleFleetEvents {
    nodeEvents {
      id
      nodeId
      kind
      at
      node {
        ...ConsoleFleetNode
      }
    }
  }
`);

type FleetNode = ConsoleFleetNodeFragment;
type FleetGpu = FleetNode['gpus'][number];

// Every row is ROW_PX high (the CSS's --gg-fleet-row): the list renders only
// the rows in view, OVERSCAN more on each side, so a fleet of thousands
// of nodes costs as many DOM rows as the viewport holds.
const ROW_PX = 84;
const OVERSCAN = 4;

// How many organizations' colours the CSS has (.gg-gpu--org-0 … -5); more
// organizations than that share colours, their ids told apart in words.
const ORG_COLOURS = 6;

// Holders is how the page tells who holds what. An operator (nodes.admin)
// is answered every GPU's holder, so each other organization gets a colour
// of its own (in the order of their ids, so it stays put as GPUs change
// hands); a tenant is answered only its own, and sees the rest as counts.
type Holders = { operator: boolean; ownOrg: string | undefined; colour: Map<string, number> };

// Counts are what a node holds, as words say it: failed, the caller's own
// (healthy), free (the API's freeGpuCount) and the rest of the healthy
// GPUs: another organization's, whoever the API says that is or not.
type Counts = { gpus: number; failed: number; yours: number; free: number; others: number };

function countsOf(n: FleetNode): Counts {
  let failed = 0, yours = 0;
  for (const g of n.gpus) {
    if (g.health === 'FAILED') failed++;
    else if (g.vm) yours++;
  }
  const others = n.gpus.length - failed - yours - n.freeGpuCount;
  return { gpus: n.gpus.length, failed, yours, free: n.freeGpuCount, others };
}

export function Fleet() {
  const [{ data, fetching, error }, reexecute] = useQuery({ query: FleetQuery });
  const [live] = useSubscription({ query: FleetEvents });
  const { viewer, can } = useViewer();
  const nodes = data?.nodes;

  // A node that registered after the list was read is not in it: read the
  // list again rather than guess where it goes.
  const lastEvent = live.data?.nodeEvents;
  useEffect(() => {
    if (lastEvent && nodes && !nodes.some((n) => n.id === lastEvent.nodeId)) {
      reexecute({ requestPolicy: 'network-only' });
    }
  }, [lastEvent?.id]);

  const operator = can('nodes.admin');
  const ownOrg = viewer?.organizationId;
  const holders = useMemo<Holders>(() => {
    const orgs = new Set<string>();
    if (operator) {
      for (const n of nodes ?? []) {
        for (const g of n.gpus) {
          if (g.holder && g.holder.organizationId !== ownOrg) orgs.add(g.holder.organizationId);
        }
      }
    }
    const colour = new Map([...orgs].sort().map((o, i) => [o, i % ORG_COLOURS] as [string, number]));
    return { operator, ownOrg, colour };
  }, [nodes, operator, ownOrg]);

  return (
    <section aria-labelledby="page-title" class="gg-fleet">
      <h1 id="page-title">Fleet</h1>
      {error && <ApiError error={error} />}
      {live.error && !error && <ApiError error={live.error} />}
      {fetching && !data && <p role="status">Loading the fleet…</p>}
      {nodes && (
        <>
          <Summary nodes={nodes} holders={holders} />
          <Legend holders={holders} />
          <p class="gg-fleet-live" role="status">
            {lastEvent
              ? `Live: last node event ${lastEvent.id} (${lastEvent.kind.toLowerCase().replace('_', ' ')}) at ${lastEvent.at}`
              : 'Live: node events appear here as they happen.'}
          </p>
          <NodeRows nodes={nodes} holders={holders} />
        </>
      )}
    </section>
  );
}

// Summary counts what the list holds: nodes by status, GPUs by what the
// cells show (failed, yours, free, another organization's); an operator
// also reads the others by organization.
function Summary({ nodes, holders }: { nodes: FleetNode[]; holders: Holders }) {
  const byStatus = new Map<string, number>();
  const all: Counts = { gpus: 0, failed: 0, yours: 0, free: 0, others: 0 };
  const byOrg = new Map<string, number>();
  for (const n of nodes) {
    byStatus.set(n.status, (byStatus.get(n.status) ?? 0) + 1);
    const c = countsOf(n);
    all.gpus += c.gpus; all.failed += c.failed; all.yours += c.yours; all.free += c.free; all.others += c.others;
    if (holders.operator) {
      for (const g of n.gpus) {
        const o = g.health === 'HEALTHY' && !g.vm ? g.holder?.organizationId : undefined;
        if (o) byOrg.set(o, (byOrg.get(o) ?? 0) + 1);
      }
    }
  }
  const statuses = [...byStatus].map(([s, c]) => `${c} ${s.toLowerCase()}`).join(', ');
  const orgs = [...byOrg].sort(([a], [b]) => (a < b ? -1 : 1)).map(([o, c]) => `${o} ${c}`).join(', ');
  return (
    <p class="gg-fleet-summary">
      {nodes.length} nodes ({statuses}) · {all.gpus} GPUs: {all.failed} failed, {all.yours} held by your organization,{' '}
      {all.free} free, {all.others} held by other organizations{orgs && ` (${orgs})`}
    </p>
  );
}

function Legend({ holders }: { holders: Holders }) {
  return (
    <ul class="gg-fleet-legend" aria-label="Legend">
      <li><span class="gg-gpu-swatch gg-gpu--yours" aria-hidden="true" /> held by your organization's VM or pod (its name)</li>
      {holders.operator ? (
        <>
          <li><span class="gg-gpu-swatch gg-gpu--free" aria-hidden="true" /> healthy and free</li>
          {[...holders.colour].map(([org, i]) => (
            <li key={org}><span class={`gg-gpu-swatch gg-gpu--org-${i}`} aria-hidden="true" /> held by {org} (its VM or pod id)</li>
          ))}
        </>
      ) : (
        <li>
          <span class="gg-gpu-swatch gg-gpu--notyours" aria-hidden="true" /> healthy, not yours: free or another
          organization's. The API tells your key only how many of a node's GPUs are free, not which, so these cells are
          not told apart: each node's counts are beside its name
        </li>
      )}
      <li><span class="gg-gpu-swatch gg-gpu--failed" aria-hidden="true" /> failed: never given out (PCI address and reason)</li>
    </ul>
  );
}

// NodeRows is the virtualized list: a focusable scroll region (Tab reaches
// it; arrows, Page Up/Down, Home and End move through it) that renders
// only the rows in view.
function NodeRows({ nodes, holders }: { nodes: FleetNode[]; holders: Holders }) {
  const scroller = useRef<HTMLDivElement>(null);
  // The first row in view: a scroll within a row renders nothing again.
  const [topRow, setTopRow] = useState(0);
  const [height, setHeight] = useState(600);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const first = Math.max(0, topRow - OVERSCAN);
  const last = Math.min(nodes.length, topRow + Math.ceil(height / ROW_PX) + 1 + OVERSCAN);
  const shown = useMemo(() => nodes.slice(first, last), [nodes, first, last]);

  const onKeyDown = (e: KeyboardEvent) => {
    const el = scroller.current;
    if (!el) return;
    const page = Math.max(ROW_PX, el.clientHeight - ROW_PX);
    const to: Record<string, number> = {
      ArrowDown: el.scrollTop + ROW_PX,
      ArrowUp: el.scrollTop - ROW_PX,
      PageDown: el.scrollTop + page,
      PageUp: el.scrollTop - page,
      Home: 0,
      End: el.scrollHeight,
    };
    if (!(e.key in to) || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    el.scrollTop = to[e.key];
  };

  return (
    <div
      ref={scroller}
      class="gg-fleet-scroll"
      tabIndex={0}
      role="region"
      aria-label={`Nodes, ${nodes.length} rows: arrows, Page Up/Down, Home and End scroll`}
      onScroll={(e) => setTopRow(Math.floor(e.currentTarget.scrollTop / ROW_PX))}
      onKeyDown={onKeyDown}
    >
      <div style={{ height: `${nodes.length * ROW_PX}px`, position: 'relative' }}>
        <ul class="gg-fleet-rows" style={{ transform: `translateY(${first * ROW_PX}px)` }}>
          {shown.map((n, i) => (
            <NodeRow key={n.id} node={n} holders={holders} pos={first + i + 1} size={nodes.length} />
          ))}
        </ul>
      </div>
    </div>
  );
}

function NodeRow({ node, holders, pos, size }: { node: FleetNode; holders: Holders; pos: number; size: number }) {
  const c = countsOf(node);
  return (
    <li class="gg-fleet-row" aria-posinset={pos} aria-setsize={size} data-node={node.name}>
      <div class="gg-fleet-node">
        <strong class="gg-fleet-name">{node.name}</strong>{' '}
        <span class={`gg-node-status gg-node-status--${node.status.toLowerCase()}`}>{node.status.toLowerCase()}</span>
        {node.leavingAt && <span class="gg-fleet-leaving">leaving at {node.leavingAt}</span>}
        <span class="gg-fleet-counts" title={`${c.free} free, ${c.others} healthy held by other organizations`}>
          {c.free} free · {c.others} held by others
        </span>
        <small class="gg-fleet-meta" title={`cluster ${node.clusterId}`}>
          agent {node.agentVersion} · pool {node.nodePool} · cluster {node.clusterId}
        </small>
      </div>
      <ul class="gg-gpus" aria-label={`GPUs of ${node.name}`}>
        {node.gpus.map((g) => (
          <GpuCell key={g.id} gpu={g} holders={holders} />
        ))}
      </ul>
    </li>
  );
}

// GpuCell shows a GPU's state in words beside its colour: its health, who
// holds it (your VM or pod by name; for an operator, another
// organization's by its id and the VM's; for a tenant only "not yours"),
// its PCI address and, when it failed, why.
function GpuCell({ gpu, holders }: { gpu: FleetGpu; holders: Holders }) {
  const failed = gpu.health === 'FAILED';
  const other = holders.operator && !gpu.vm ? gpu.holder : null;
  const kind = failed
    ? 'failed'
    : gpu.vm
      ? 'yours'
      : !holders.operator
        ? 'notyours'
        : other
          ? `org-${holders.colour.get(other.organizationId) ?? 0}`
          : 'free';
  const holder = gpu.vm
    ? `yours: ${gpu.vm.name}`
    : other
      ? `${other.organizationId}: ${other.vmId}`
      : holders.operator
        ? 'free'
        : 'not yours';
  const reason = failed && gpu.failedReason ? `(${gpu.failedReason})` : '';
  return (
    <li class={`gg-gpu gg-gpu--${kind}`} title={`GPU ${gpu.index} ${gpu.modelId}: ${failed ? 'failed' : 'healthy'}, ${holder}, ${gpu.address} ${reason}`.trimEnd()}>
      <span class="gg-gpu-line">
        GPU {gpu.index} <b>{failed ? 'failed' : 'healthy'}</b>
      </span>
      {other ? (
        <>
          <span class="gg-gpu-line gg-gpu-org">{other.organizationId}</span>
          <span class="gg-gpu-line gg-gpu-vm">{other.vmId}</span>
        </>
      ) : (
        <span class="gg-gpu-line">{holder}</span>
      )}
      <code class="gg-gpu-line gg-gpu-where">
        {gpu.address}
        {reason && <> <span class="gg-gpu-reason">{reason}</span></>}
      </code>
    </li>
  );
}
