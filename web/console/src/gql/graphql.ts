/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** Whether a GPU can be given to a VM or pod. */
export type GpuHealth =
  /** Failed (see failedReason): never given out. */
  | 'FAILED'
  /** Usable. */
  | 'HEALTHY';

/** What a node event changed. */
export type NodeEventKind =
  /** One of its GPUs' health changed (gpuId, fromHealth, toHealth, failedReason). */
  | 'GPU_HEALTH'
  /** The node's leavingAt was set or cleared (fromLeavingAt, toLeavingAt). */
  | 'LEAVING_AT'
  /** The node's status changed (fromStatus, toStatus). */
  | 'STATUS';

/** Whether a node takes work. */
export type NodeStatus =
  /** Its agent stopped reporting; its running VMs and pods are interrupted. */
  | 'OFFLINE'
  /** Reporting and taking work. */
  | 'ONLINE'
  /** Decommissioned: gone from the fleet. */
  | 'REMOVED';

/** Where a VM or pod stands in its lifecycle (OpenRelay statuses). */
export type VmStatus =
  /** Placed and starting. */
  | 'DEPLOYING'
  /** Failed to start or crashed. */
  | 'FAILED'
  /** Its node went offline or its capacity was reclaimed; resumes when the node returns. */
  | 'INTERRUPTED'
  /** Created, not placed yet. */
  | 'PENDING'
  /** Running. */
  | 'RUNNING'
  /** Stopped: holds its disk or volume only. */
  | 'STOPPED'
  /** Terminated: holds nothing, final. */
  | 'TERMINATED';

export type ConsoleOrganizationQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleOrganizationQuery = { organization: { id: string, name: string } };

export type ConsoleFleetNodeFragment = { id: string, name: string, clusterId: string, nodePool: string, status: NodeStatus, agentVersion: string, leavingAt: string | null, lastHeartbeatAt: string | null, gpus: Array<{ id: string, index: number, address: string, modelId: string, health: GpuHealth, failedReason: string | null, vm: { id: string, name: string } | null }> };

export type ConsoleFleetQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleFleetQuery = { nodes: Array<{ id: string, name: string, clusterId: string, nodePool: string, status: NodeStatus, agentVersion: string, leavingAt: string | null, lastHeartbeatAt: string | null, gpus: Array<{ id: string, index: number, address: string, modelId: string, health: GpuHealth, failedReason: string | null, vm: { id: string, name: string } | null }> }> };

export type ConsoleFleetEventsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type ConsoleFleetEventsSubscription = { nodeEvents: { id: string, nodeId: string, kind: NodeEventKind, at: string, node: { id: string, name: string, clusterId: string, nodePool: string, status: NodeStatus, agentVersion: string, leavingAt: string | null, lastHeartbeatAt: string | null, gpus: Array<{ id: string, index: number, address: string, modelId: string, health: GpuHealth, failedReason: string | null, vm: { id: string, name: string } | null }> } | null } };

export type ConsoleVmsQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleVmsQuery = { vms: { total: number, vms: Array<{ id: string, name: string, status: VmStatus }> } };

export const ConsoleFleetNodeFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleFleetNode"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Node"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"leavingAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"failedReason"}},{"kind":"Field","name":{"kind":"Name","value":"vm"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleFleetNodeFragment, unknown>;
export const ConsoleOrganizationDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleOrganization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleOrganizationQuery, ConsoleOrganizationQueryVariables>;
export const ConsoleFleetDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleFleet"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleFleetNode"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleFleetNode"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Node"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"leavingAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"failedReason"}},{"kind":"Field","name":{"kind":"Name","value":"vm"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleFleetQuery, ConsoleFleetQueryVariables>;
export const ConsoleFleetEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ConsoleFleetEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodeEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"nodeId"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleFleetNode"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleFleetNode"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Node"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"leavingAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"failedReason"}},{"kind":"Field","name":{"kind":"Name","value":"vm"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleFleetEventsSubscription, ConsoleFleetEventsSubscriptionVariables>;
export const ConsoleVmsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleVms"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vms"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"vms"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleVmsQuery, ConsoleVmsQueryVariables>;