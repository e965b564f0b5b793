import { useMutation, useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../ApiError';
import { graphql } from '../gql';
import type { CreateVmInput } from '../gql/graphql';
import { useViewer } from '../viewer';
import { dollars, status, useRefetch, useVmEvents } from '../vm';

// Create a VM or pod: the instance type catalog with its price and what
// could be placed now per cluster and node pool, the create form, and the
// new VM as it stands, live (vmEvents): a queued one with its place and
// the reason it waits, until the scheduler places it.

const InstanceTypes = graphql(`
  query ConsoleInstanceTypes {
    instanceTypes {
      name
      description
      gpuCount
      gpuModel {
        id
        name
      }
      cpuCores
      ramGb
      diskSizeGb
      volumeGb
      pricePerHourCents
      capacity {
        clusterId
        nodePool
        available
      }
    }
  }
`);

const CreateVm = graphql(`
  mutation ConsoleCreateVm($input: CreateVmInput!) {
    createVm(input: $input) {
      ...ConsoleVmFields
    }
  }
`);

const CreatedVm = graphql(`
  query ConsoleCreatedVm($id: ID!) {
    vm(id: $id) {
      ...ConsoleVmFields
    }
  }
`);

type Type = NonNullable<ReturnType<typeof useTypes>['data']>['instanceTypes'][number];

function useTypes() {
  return useQuery({ query: InstanceTypes })[0];
}

// The form's fields, as typed: numbers stay text until the create, so an
// empty field is one left out of the input.
interface Form {
  name: string;
  kind: 'vm' | 'pod';
  type: string;
  gpuModelId: string;
  gpuCount: string;
  cpuCores: string;
  ramGb: string;
  diskSizeGb: string;
  imageUrl: string;
  volumeGb: string;
  where: string; // "" or "<clusterId>/<nodePool>"
  public: boolean;
  queue: boolean;
}

const empty: Form = {
  name: '', kind: 'vm', type: '', gpuModelId: '', gpuCount: '', cpuCores: '', ramGb: '', diskSizeGb: '',
  imageUrl: '', volumeGb: '', where: '', public: false, queue: true,
};

function fromType(f: Form, t: Type): Form {
  return {
    ...f, type: t.name, gpuModelId: t.gpuModel?.id ?? '', gpuCount: t.gpuCount ? String(t.gpuCount) : '',
    cpuCores: String(t.cpuCores), ramGb: String(t.ramGb), diskSizeGb: String(t.diskSizeGb),
    volumeGb: f.kind === 'pod' ? String(t.volumeGb) : f.volumeGb,
  };
}

// inputOf is the createVm input the form names; the API checks it.
function inputOf(f: Form): CreateVmInput {
  const n = (s: string) => (s.trim() === '' ? undefined : Number(s));
  const [clusterId, nodePool] = f.where ? f.where.split('/') : [undefined, undefined];
  return {
    name: f.name.trim(),
    capabilityTier: f.kind === 'pod' ? 'pod' : undefined,
    gpuModelId: f.gpuModelId || undefined,
    gpuCount: n(f.gpuCount),
    cpuCores: n(f.cpuCores),
    ramGb: n(f.ramGb),
    diskSizeGb: n(f.diskSizeGb),
    imageUrl: f.imageUrl.trim() || undefined,
    volumeGb: f.kind === 'pod' ? n(f.volumeGb) : undefined,
    public: f.public,
    queue: f.queue,
    clusterId: clusterId || undefined,
    nodePool: nodePool || undefined,
  };
}

export function Create() {
  const types = useTypes();
  // Any event may move the new VM in its queue (one ahead of it placed,
  // stopped or gone): a pending one is read again on each.
  const [events, setEvents] = useState(0);
  const eventsError = useVmEvents(() => setEvents((n) => n + 1));
  const [form, setForm] = useState<Form>(empty);
  const [created, setCreated] = useState<string | null>(null);
  const [result, create] = useMutation(CreateVm);
  // Creating needs compute.operate: a key without it is not offered the
  // submit (the API would refuse it), and is told why.
  const operate = useViewer().can('compute.operate');
  const list = types.data?.instanceTypes ?? [];
  const models = new Map<string, string>();
  const places = new Set<string>();
  for (const t of list) {
    if (t.gpuModel) models.set(t.gpuModel.id, t.gpuModel.name);
    for (const c of t.capacity) places.add(`${c.clusterId}/${c.nodePool}`);
  }
  const set = <K extends keyof Form>(k: K, v: Form[K]) => setForm((f) => ({ ...f, [k]: v }));
  const use = (t: Type) => {
    setForm((f) => fromType(f, t));
    document.getElementById('gg-create-name')?.focus();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!operate) return;
    const r = await create({ input: inputOf(form) });
    if (r.data) setCreated(r.data.createVm.id);
  };
  const num = (k: 'gpuCount' | 'cpuCores' | 'ramGb' | 'diskSizeGb' | 'volumeGb', label: string) => (
    <label>
      {label}
      <input id={`gg-create-${k}`} type="number" min="0" inputMode="numeric" value={form[k]} onInput={(e) => set(k, e.currentTarget.value)} />
    </label>
  );

  return (
    <section aria-labelledby="page-title" class="gg-create">
      <h1 id="page-title">Create</h1>
      {eventsError && <ApiError error={eventsError} />}

      <h2 id="gg-types-title">Instance types</h2>
      {types.error && <ApiError error={types.error} />}
      {types.fetching && !types.data && <p role="status">Loading instance types…</p>}
      {types.data && (
        <table class="gg-table gg-types" aria-labelledby="gg-types-title">
          <thead>
            <tr>
              <th scope="col">Type</th>
              <th scope="col">GPUs</th>
              <th scope="col">CPU, RAM, disk</th>
              <th scope="col">Price</th>
              <th scope="col">Could be placed now</th>
              <th scope="col"><span class="gg-sr">Choose</span></th>
            </tr>
          </thead>
          <tbody>
            {list.map((t) => (
              <tr key={t.name} data-type={t.name} class={form.type === t.name ? 'gg-chosen' : undefined}>
                <td><code>{t.name}</code></td>
                <td>{t.gpuCount ? `${t.gpuCount} × ${t.gpuModel?.name ?? ''}` : 'CPU only'}</td>
                <td>
                  {t.cpuCores} cores, {t.ramGb} GB, {t.diskSizeGb} GB
                </td>
                <td>{dollars(t.pricePerHourCents)}/h</td>
                <td class="gg-capacity">
                  {t.capacity.length === 0
                    ? 'no node pool has its GPUs'
                    : t.capacity.map((c) => (
                        <span key={`${c.clusterId}/${c.nodePool}`} data-place={`${c.clusterId}/${c.nodePool}`}>
                          {c.clusterId}/{c.nodePool}: {c.available}
                        </span>
                      ))}
                </td>
                <td>
                  <button type="button" aria-label={`Use ${t.name}`} onClick={() => use(t)}>
                    Use
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2 id="gg-form-title">New VM or pod</h2>
      <form class="gg-create-form" aria-labelledby="gg-form-title" onSubmit={submit}>
        <label>
          Name
          <input id="gg-create-name" required value={form.name} onInput={(e) => set('name', e.currentTarget.value)} />
        </label>
        <label>
          Kind
          <select id="gg-create-kind" value={form.kind} onChange={(e) => set('kind', e.currentTarget.value as Form['kind'])}>
            <option value="vm">VM</option>
            <option value="pod">Pod</option>
          </select>
        </label>
        <label>
          Instance type
          <select
            id="gg-create-type"
            value={form.type}
            onChange={(e) => {
              const t = list.find((x) => x.name === e.currentTarget.value);
              setForm((f) => (t ? fromType(f, t) : { ...f, type: '' }));
            }}
          >
            <option value="">none: the parts below</option>
            {list.map((t) => (
              <option key={t.name} value={t.name}>
                {t.name} ({dollars(t.pricePerHourCents)}/h)
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Parts</legend>
          <label>
            GPU model
            <select id="gg-create-gpuModelId" value={form.gpuModelId} onChange={(e) => set('gpuModelId', e.currentTarget.value)}>
              <option value="">none (CPU only)</option>
              {[...models].map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          </label>
          {num('gpuCount', 'GPUs')}
          {num('cpuCores', 'CPU cores')}
          {num('ramGb', 'RAM (GB)')}
          {num('diskSizeGb', 'Disk (GB)')}
        </fieldset>
        <label>
          Image
          <input id="gg-create-imageUrl" value={form.imageUrl} onInput={(e) => set('imageUrl', e.currentTarget.value)} />
        </label>
        {form.kind === 'pod' && num('volumeGb', 'Volume (GB)')}
        <label>
          Where
          <select id="gg-create-where" value={form.where} onChange={(e) => set('where', e.currentTarget.value)}>
            <option value="">any cluster and node pool</option>
            {[...places].sort().map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label class="gg-check">
          <input id="gg-create-public" type="checkbox" checked={form.public} onChange={(e) => set('public', e.currentTarget.checked)} />
          Public
        </label>
        <label class="gg-check">
          <input id="gg-create-queue" type="checkbox" checked={form.queue} onChange={(e) => set('queue', e.currentTarget.checked)} />
          Queue it when nothing fits now
        </label>
        {operate ? (
          <button type="submit" disabled={result.fetching}>
            Create
          </button>
        ) : (
          <p class="gg-create-cannot">This key cannot create: it lacks compute.operate.</p>
        )}
      </form>
      {result.error && <ApiError error={result.error} />}
      {created && <Created id={created} events={events} />}
    </section>
  );
}

// Created is the new VM as it stands, kept current by the page's vmEvents;
// while it is pending, each event reads it again for its place.
function Created({ id, events }: { id: string; events: number }) {
  const [{ data, error }, again] = useQuery({ query: CreatedVm, variables: { id } });
  const vm = data?.vm;
  useRefetch(vm?.status === 'PENDING' ? events : -1, again);
  return (
    <section class="gg-created" aria-labelledby="gg-created-title" aria-live="polite" data-vm-id={id} data-status={vm ? status(vm.status) : undefined}>
      <h2 id="gg-created-title">Created {vm?.name ?? id}</h2>
      {error && <ApiError error={error} />}
      {vm && (
        <dl>
          <dt>ID</dt>
          <dd><code>{vm.id}</code></dd>
          <dt>Status</dt>
          <dd class="gg-created-status">{status(vm.status)}</dd>
          <dt>Stage</dt>
          <dd class="gg-created-stage">{vm.provisioningStage}</dd>
          {vm.queuePosition != null && (
            <>
              <dt>Place in the queue</dt>
              <dd class="gg-created-queue">{vm.queuePosition}</dd>
            </>
          )}
          {vm.statusReason && (
            <>
              <dt>{vm.status === 'PENDING' ? 'Waits because' : 'Reason'}</dt>
              <dd class="gg-created-reason">{vm.statusReason}</dd>
            </>
          )}
          <dt>Node</dt>
          <dd>{vm.node?.name ?? '—'}</dd>
          <dt>Price</dt>
          <dd>{dollars(vm.pricePerHourCents)}/h</dd>
        </dl>
      )}
    </section>
  );
}
