// Uses the generated types as a console would, so tsc checks more than the
// generated file's own syntax.
import type { VmsNodesGpusQuery, VmsNodesGpusQueryVariables, RestartMutationVariables, VmEventsSubscription } from './generated/types';

const vars: VmsNodesGpusQueryVariables = { limit: 5 };
const restart: RestartMutationVariables = { id: 'vm-restart-ok-running' };

export function gpuAddresses(q: VmsNodesGpusQuery): string[] {
  return q.vms.vms.flatMap((vm) => (vm.node ? vm.node.gpus.map((g) => `${vm.name}: ${g.address} ${g.health}`) : []));
}

export function volumes(q: VmsNodesGpusQuery): string[] {
  return q.vms.vms.flatMap((vm) => (vm.volume ? [`${vm.name}: ${vm.volume.id} ${vm.volume.sizeGb} GB at ${vm.volume.mountPath ?? 'its disk'} on ${vm.volume.node?.name ?? '?'}`] : []));
}

export function describe(e: VmEventsSubscription): string {
  return `${e.vmEvents.vmId} ${e.vmEvents.from} → ${e.vmEvents.to} (${e.vmEvents.transition})`;
}

export const example = { vars, restart };
