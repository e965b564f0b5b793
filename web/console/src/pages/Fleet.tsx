import { useQuery, useSubscription } from '@urql/preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { graphql } from '../gql';
import type { ConsoleFleetNodeFragment } from '../gql/graphql';
import { ApiError } from '../ApiError';

// A node as the page shows it. The same fields come with every node event,
// so graphcache replaces the node in place and its row moves by itself.
// Gpu.vm is the caller's organization's VM or pod only: the API names no
// other organization's holder (nodes are shared inventory), so neither
// does this page.
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

export function Fleet() {
  const [{ data, fetching, error }, reexecute] = useQuery({ query: FleetQuery });
  const [live] = useSubscription({ query: FleetEvents });
  const nodes = data?.nodes;

  // A node that registered after the list was read is not in it: read the
  // list again rather than guess where it goes.
  const lastEvent = live.data?.nodeEvents;
  useEffect(() => {
    if (lastEvent && nodes && !nodes.some((n) => n.id === lastEvent.nodeId)) {
      reexecute({ requestPolicy: 'network-only' });
    }
  }, [lastEvent?.id]);

  return (
    <section aria-labelledby="page-title" class="gg-fleet">
      <h1 id="page-title">Fleet</h1>
      {error && <ApiError error={error} />}
      {live.error && !error && <ApiError error={live.error} />}
      {fetching && !data && <p role="status">Loading the fleet…</p>}
      {nodes && (
        <>
          <Summary nodes={nodes} />
          <Legend />
          <p class="gg-fleet-live" role="status">
            {lastEvent
              ? `Live: last node event ${lastEvent.id} (${lastEvent.kind.toLowerCase().replace('_', ' ')}) at ${lastEvent.at}`
              : 'Live: node events appear here as they happen.'}
          </p>
          <NodeRows nodes={nodes} />
        </>
      )}
    </section>
  );
}

// Summary counts what the list holds: nodes by status, GPUs by health and
// by whether the caller's organization holds them.
function Summary({ nodes }: { nodes: FleetNode[] }) {
  const byStatus = new Map<string, number>();
  let gpus = 0, failed = 0, yours = 0;
  for (const n of nodes) {
    byStatus.set(n.status, (byStatus.get(n.status) ?? 0) + 1);
    for (const g of n.gpus) {
      gpus++;
      if (g.health === 'FAILED') failed++;
      if (g.vm) yours++;
    }
  }
  const statuses = [...byStatus].map(([s, c]) => `${c} ${s.toLowerCase()}`).join(', ');
  return (
    <p class="gg-fleet-summary">
      {nodes.length} nodes ({statuses}) · {gpus} GPUs: {failed} failed, {yours} held by your organization,{' '}
      {gpus - yours} not held by it
    </p>
  );
}

function Legend() {
  return (
    <ul class="gg-fleet-legend" aria-label="Legend">
      <li><span class="gg-gpu-swatch gg-gpu--free" aria-hidden="true" /> healthy, not yours: free or another organization's (the API names only your organization's holders)</li>
      <li><span class="gg-gpu-swatch gg-gpu--yours" aria-hidden="true" /> held by your organization's VM or pod</li>
      <li><span class="gg-gpu-swatch gg-gpu--failed" aria-hidden="true" /> failed: never given out (PCI address and reason)</li>
    </ul>
  );
}

// NodeRows is the virtualized list: a focusable scroll region (Tab reaches
// it; arrows, Page Up/Down, Home and End move through it) that renders
// only the rows in view.
function NodeRows({ nodes }: { nodes: FleetNode[] }) {
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
            <NodeRow key={n.id} node={n} pos={first + i + 1} size={nodes.length} />
          ))}
        </ul>
      </div>
    </div>
  );
}

function NodeRow({ node, pos, size }: { node: FleetNode; pos: number; size: number }) {
  return (
    <li class="gg-fleet-row" aria-posinset={pos} aria-setsize={size} data-node={node.name}>
      <div class="gg-fleet-node">
        <strong class="gg-fleet-name">{node.name}</strong>{' '}
        <span class={`gg-node-status gg-node-status--${node.status.toLowerCase()}`}>{node.status.toLowerCase()}</span>
        {node.leavingAt && <span class="gg-fleet-leaving">leaving at {node.leavingAt}</span>}
        <small class="gg-fleet-meta" title={`cluster ${node.clusterId}`}>
          agent {node.agentVersion} · pool {node.nodePool} · cluster {node.clusterId}
        </small>
      </div>
      <ul class="gg-gpus" aria-label={`GPUs of ${node.name}`}>
        {node.gpus.map((g) => (
          <GpuCell key={g.id} gpu={g} />
        ))}
      </ul>
    </li>
  );
}

// GpuCell shows a GPU's state in words beside its colour: its health, who
// holds it (your VM or pod by name; otherwise only "not yours"), its PCI
// address and, when it failed, why.
function GpuCell({ gpu }: { gpu: FleetGpu }) {
  const failed = gpu.health === 'FAILED';
  const kind = failed ? 'failed' : gpu.vm ? 'yours' : 'free';
  const holder = gpu.vm ? `yours: ${gpu.vm.name}` : 'not yours';
  const reason = failed && gpu.failedReason ? `(${gpu.failedReason})` : '';
  return (
    <li class={`gg-gpu gg-gpu--${kind}`} title={`GPU ${gpu.index} ${gpu.modelId}: ${failed ? 'failed' : 'healthy'}, ${holder}, ${gpu.address} ${reason}`.trimEnd()}>
      <span class="gg-gpu-line">
        GPU {gpu.index} <b>{failed ? 'failed' : 'healthy'}</b>
      </span>
      <span class="gg-gpu-line">{holder}</span>
      <code class="gg-gpu-line gg-gpu-where">
        {gpu.address}
        {reason && <> <span class="gg-gpu-reason">{reason}</span></>}
      </code>
    </li>
  );
}
