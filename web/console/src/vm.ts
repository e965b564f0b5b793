import { useSubscription } from '@urql/preact';
import { useEffect, useRef } from 'preact/hooks';
import { graphql } from './gql';
import type { ConsoleVmEventsSubscription, ConsoleVmFieldsFragment } from './gql/graphql';

// The fields of a VM or pod that the VMs and Create pages show: the list's
// row, and the new VM after a create. One fragment, so that the events'
// vm (below) refreshes every field graphcache holds for either page.
export const VmFields = graphql(`
  fragment ConsoleVmFields on VM {
    id
    name
    status
    statusReason
    provisioningStage
    capabilityTier
    gpuCount
    gpuModelName
    pricePerHourCents
    costSoFar
    queuePosition
    endpointUrl
    createdAt
    node {
      id
      name
    }
  }
`);

export type VmRow = ConsoleVmFieldsFragment;

// The organization's status changes from now on, each with its VM as it
// stands: graphcache writes that VM over the one it holds, so every query
// showing it re-renders with no refetch.
const VmEvents = graphql(`
  subscription ConsoleVmEvents {
    vmEvents {
      id
      vmId
      to
      vm {
        ...ConsoleVmFields
      }
    }
  }
`);

export type VmEvent = ConsoleVmEventsSubscription['vmEvents'];

// useVmEvents keeps the organization's VMs in the cache current while the
// page that calls it is shown, calling onEvent with each event.
export function useVmEvents(onEvent?: (e: VmEvent) => void) {
  const [{ error }] = useSubscription({ query: VmEvents }, (_prev: VmEvent | undefined, data) => {
    onEvent?.(data.vmEvents);
    return data.vmEvents;
  });
  return error;
}

// status is how a page prints a status: the API's enum in lower case.
export function status(s: string): string {
  return s.toLowerCase();
}

// dollars prints cents as US dollars.
export function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

// useRefetch asks the network again (past graphcache) each time tick
// changes after the first render: for what an event changes but does not
// carry (a console's new bytes, another VM's place in the queue).
export function useRefetch(tick: number, again: (o: { requestPolicy: 'network-only' }) => void) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else again({ requestPolicy: 'network-only' });
  }, [tick]);
}
