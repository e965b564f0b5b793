/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** What a user chooses for a new VM or pod; the server fills the rest of the VM object. */
export type CreateVmInput = {
  /** "pod" for a pod; absent for a plain VM. */
  capabilityTier?: string | null | undefined;
  /** Place it only on nodes of this cluster. */
  clusterId?: string | number | null | undefined;
  /** CPU cores of its node a VM holds while it runs (1–4096; required for a VM, optional for a pod). */
  cpuCores?: number | null | undefined;
  /** A VM's disk, in GB (1–1048576; required for a VM, optional for a pod). */
  diskSizeGb?: number | null | undefined;
  /** How many GPUs (1–64). */
  gpuCount?: number | null | undefined;
  /** The GPU model, an id of gpuModels. */
  gpuModelId?: string | number | null | undefined;
  /** The image a pod runs (required for a pod) or a VM boots. */
  imageUrl?: string | null | undefined;
  /** Its name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit. */
  name: string;
  /** Place it only on nodes of this node pool. */
  nodePool?: string | null | undefined;
  /** Its place in its organization's queue while pending: 0–1000, higher first, default 0. */
  priority?: number | null | undefined;
  /** Whether it is reachable from the internet (default false). */
  public?: boolean | null | undefined;
  /** false: when nothing fits now, answer VM_NO_CAPACITY (503, retryAfter) instead of creating it pending. Default true. */
  queue?: boolean | null | undefined;
  /** Memory of its node a VM holds while it runs, in GB (1–65536; required for a VM, optional for a pod). */
  ramGb?: number | null | undefined;
  /** OpenSSH public keys its guest authorizes (cloud-init), as authorized_keys writes them: "type base64 [comment]", one key an entry, at most 16; ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa of at least 2048 bits, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com. A VM's only; anything else is a BAD_REQUEST naming the entry. Kept with the VM and never shown back. */
  sshPublicKeys?: Array<string> | null | undefined;
  /** A pod's /workspace volume, in GB (1–1048576; required for a pod, refused for a VM). */
  volumeGb?: number | null | undefined;
};

/** Whether a GPU can be given to a VM or pod. */
export type GpuHealth =
  /** Failed (see failedReason): never given out. */
  | 'FAILED'
  /** Usable. */
  | 'HEALTHY';

/** What a ledger entry is. */
export type LedgerEntryKind =
  /** An operator's adjustment, of either sign. */
  | 'ADJUSTMENT'
  /** Granted by an operator. */
  | 'CREDIT'
  /** A debit of the metering pass. */
  | 'USAGE';

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

/** A pod metric Run:ai reports, as its metricType parameter names it. */
export type PodMetricType =
  /** Memory in use, in bytes. */
  | 'CPU_MEMORY_USAGE_BYTES'
  /** CPU in use, in cores. */
  | 'CPU_USAGE_CORES'
  /** FP16 engine activity of each GPU (DCGM), a fraction. */
  | 'GPU_FP16_ENGINE_ACTIVITY_PER_GPU'
  /** FP32 engine activity of each GPU (DCGM), a fraction. */
  | 'GPU_FP32_ENGINE_ACTIVITY_PER_GPU'
  /** FP64 engine activity of each GPU (DCGM), a fraction. */
  | 'GPU_FP64_ENGINE_ACTIVITY_PER_GPU'
  /** Graphics engine activity of each GPU (DCGM), a fraction. */
  | 'GPU_GRAPHICS_ENGINE_ACTIVITY_PER_GPU'
  /** Memory bandwidth utilization of each GPU (DCGM), a fraction. */
  | 'GPU_MEMORY_BANDWIDTH_UTILIZATION_PER_GPU'
  /** GPU memory in use over its GPUs, in bytes. */
  | 'GPU_MEMORY_USAGE_BYTES'
  /** GPU memory in use on each GPU, in bytes. */
  | 'GPU_MEMORY_USAGE_BYTES_PER_GPU'
  /** NVLink bytes received per second by each GPU. */
  | 'GPU_NVLINK_RECEIVED_BANDWIDTH_PER_GPU'
  /** NVLink bytes sent per second by each GPU. */
  | 'GPU_NVLINK_TRANSMITTED_BANDWIDTH_PER_GPU'
  /** PCIe bytes received per second by each GPU. */
  | 'GPU_PCIE_RECEIVED_BANDWIDTH_PER_GPU'
  /** PCIe bytes sent per second by each GPU. */
  | 'GPU_PCIE_TRANSMITTED_BANDWIDTH_PER_GPU'
  /** Streaming multiprocessor activity of each GPU (DCGM), a fraction. */
  | 'GPU_SM_ACTIVITY_PER_GPU'
  /** Streaming multiprocessor occupancy of each GPU (DCGM), a fraction. */
  | 'GPU_SM_OCCUPANCY_PER_GPU'
  /** GPU memory swapped to host memory, per GPU, in bytes. */
  | 'GPU_SWAP_MEMORY_BYTES_PER_GPU'
  /** Tensor core activity of each GPU (DCGM), a fraction. */
  | 'GPU_TENSOR_ACTIVITY_PER_GPU'
  /** GPU utilization over its GPUs, in percent. */
  | 'GPU_UTILIZATION'
  /** GPU utilization of each GPU, in percent. */
  | 'GPU_UTILIZATION_PER_GPU'
  /** NVIDIA NIM: end-to-end request latency, a histogram. */
  | 'NIM_E2E_REQUEST_LATENCY_SECONDS'
  /** NVIDIA NIM: end-to-end request latency, p50, p90 and p99. */
  | 'NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES'
  /** NVIDIA NIM: KV cache in use, in percent. */
  | 'NIM_GPU_CACHE_USAGE_PERC'
  /** NVIDIA NIM: requests being served. */
  | 'NIM_NUM_REQUESTS_RUNNING'
  /** NVIDIA NIM: requests waiting. */
  | 'NIM_NUM_REQUESTS_WAITING'
  /** NVIDIA NIM: the most requests served at once. */
  | 'NIM_NUM_REQUEST_MAX'
  /** NVIDIA NIM: requests that failed, in all. */
  | 'NIM_REQUEST_FAILURE_TOTAL'
  /** NVIDIA NIM: requests that succeeded, in all. */
  | 'NIM_REQUEST_SUCCESS_TOTAL'
  /** NVIDIA NIM: time to the first token, a histogram. */
  | 'NIM_TIME_TO_FIRST_TOKEN_SECONDS'
  /** NVIDIA NIM: time to the first token, p50, p90 and p99. */
  | 'NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES'
  /** NVLink bytes per second over its GPUs, both ways. */
  | 'NVLINK_BANDWIDTH_TOTAL'
  /** NVLink bytes per second of each GPU, both ways. */
  | 'NVLINK_BANDWIDTH_TOTAL_PER_GPU';

/** The fields pods sort by (Run:ai sortBy). */
export type PodSortField =
  /** By cluster. */
  | 'CLUSTER_ID'
  /** By completion. */
  | 'COMPLETED_AT'
  /** By creation (the default). */
  | 'CREATED_AT'
  /** By node pool (Run:ai spells it currentNodepool). */
  | 'CURRENT_NODEPOOL'
  /** By deletion. */
  | 'DELETED_AT'
  /** By Kubernetes phase. */
  | 'K8S_PHASE'
  /** By name. */
  | 'NAME'
  /** By node. */
  | 'NODE_NAME'
  /** By inference revision. */
  | 'REVISION_ID'
  /** By workload. */
  | 'WORKLOAD_ID';

/** A sort direction. */
export type SortOrder =
  /** Ascending, nulls last (the default). */
  | 'ASC'
  /** Descending: the exact reverse of ascending. */
  | 'DESC';

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

export type ConsoleInstanceTypesQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleInstanceTypesQuery = { instanceTypes: Array<{ name: string, description: string, gpuCount: number, cpuCores: number, ramGb: number, diskSizeGb: number, volumeGb: number, pricePerHourCents: number, gpuModel: { id: string, name: string } | null, capacity: Array<{ clusterId: string, nodePool: string, available: number }> }> };

export type ConsoleCreateVmMutationVariables = Exact<{
  input: CreateVmInput;
}>;


export type ConsoleCreateVmMutation = { createVm: { id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null } };

export type ConsoleCreatedVmQueryVariables = Exact<{
  id: string | number;
}>;


export type ConsoleCreatedVmQuery = { vm: { id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null } | null };

export type ConsoleFleetNodeFragment = { id: string, name: string, clusterId: string, nodePool: string, status: NodeStatus, agentVersion: string, leavingAt: string | null, lastHeartbeatAt: string | null, freeGpuCount: number, gpus: Array<{ id: string, index: number, address: string, modelId: string, health: GpuHealth, failedReason: string | null, vm: { id: string, name: string } | null, holder: { organizationId: string, vmId: string } | null }> };

export type ConsoleFleetQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleFleetQuery = { nodes: Array<{ id: string, name: string, clusterId: string, nodePool: string, status: NodeStatus, agentVersion: string, leavingAt: string | null, lastHeartbeatAt: string | null, freeGpuCount: number, gpus: Array<{ id: string, index: number, address: string, modelId: string, health: GpuHealth, failedReason: string | null, vm: { id: string, name: string } | null, holder: { organizationId: string, vmId: string } | null }> }> };

export type ConsoleFleetEventsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type ConsoleFleetEventsSubscription = { nodeEvents: { id: string, nodeId: string, kind: NodeEventKind, at: string, node: { id: string, name: string, clusterId: string, nodePool: string, status: NodeStatus, agentVersion: string, leavingAt: string | null, lastHeartbeatAt: string | null, freeGpuCount: number, gpus: Array<{ id: string, index: number, address: string, modelId: string, health: GpuHealth, failedReason: string | null, vm: { id: string, name: string } | null, holder: { organizationId: string, vmId: string } | null }> } | null } };

export type ConsolePodsQueryVariables = Exact<{
  filterBy?: Array<string> | string | null | undefined;
  search?: string | null | undefined;
  sortBy?: PodSortField | null | undefined;
  sortOrder?: SortOrder | null | undefined;
  offset?: number | null | undefined;
  limit?: number | null | undefined;
  deleted?: boolean | null | undefined;
  completed?: boolean | null | undefined;
}>;


export type ConsolePodsQuery = { pods: { total: number, next: number | null, pods: Array<{ id: string, name: string, workloadId: string, workloadName: string | null, projectName: string | null, clusterId: string, nodeName: string | null, currentNodePool: string | null, k8sPhase: string, priorityClassName: string, createdAt: string, completedAt: string | null, deletedAt: string | null, ip: string | null, containers: Array<{ name: string, image: string, startedAt: string | null }>, requestedResources: { gpuRequestType: string | null, gpu: { request: number | null, limit: number | null } | null, gpuMemory: { request: string | null, limit: string | null } | null, cpu: { request: number | null, limit: number | null } | null, cpuMemory: { request: string | null, limit: string | null } | null } | null, allocatedResources: { gpu: number | null, gpuMemory: string | null, cpu: number | null, cpuMemory: string | null } | null, node: { id: string, name: string, status: NodeStatus, nodePool: string, agentVersion: string } | null }> } };

export type ConsolePodMetricsQueryVariables = Exact<{
  workloadId: string | number;
  podId: string | number;
  metricTypes: Array<PodMetricType> | PodMetricType;
  start: string;
  end: string;
  numberOfSamples?: number | null | undefined;
}>;


export type ConsolePodMetricsQuery = { podMetrics: { omittedTypes: Array<PodMetricType>, measurements: Array<{ type: string, labels: Record<string, string> | null, values: Array<{ value: string, timestamp: string }> }>, histogram: Array<{ type: string, values: Array<{ timestamp: string, data: Record<string, string> }> }> | null } };

export type ConsoleUsageTotalsFragment = { from: string, to: string, total: number, lines: Array<{ key: string, seconds: number, gpuSeconds: number, cost: number }> };

export type ConsoleBillingQueryVariables = Exact<{
  from: string;
  to: string;
}>;


export type ConsoleBillingQuery = { organization: { id: string, name: string, prepaid: boolean, balance: number, burnRatePerHour: number, runwayHours: number | null, spendLimitPerHour: number | null, lowBalanceThresholdHours: number | null, byDay: { from: string, to: string, total: number, lines: Array<{ key: string, seconds: number, gpuSeconds: number, cost: number }> }, byModel: { from: string, to: string, total: number, lines: Array<{ key: string, seconds: number, gpuSeconds: number, cost: number }> } } };

export type ConsoleLedgerQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
}>;


export type ConsoleLedgerQuery = { organization: { id: string, ledger: { nodes: Array<{ id: string, kind: LedgerEntryKind, amount: number, reason: string, createdAt: string }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } } };

export type ConsoleVmsQueryVariables = Exact<{
  offset: number;
  limit: number;
}>;


export type ConsoleVmsQuery = { vms: { total: number, vms: Array<{ id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null }> } };

export type ConsoleVmDetailQueryVariables = Exact<{
  id: string | number;
}>;


export type ConsoleVmDetailQuery = { vm: { imageUrl: string, resourceSize: string, id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, console: { text: string, bytes: number, capturedAt: string | null } | null, node: { id: string, name: string } | null } | null };

export type ConsoleRestartVmMutationVariables = Exact<{
  id: string | number;
}>;


export type ConsoleRestartVmMutation = { restartVm: { id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null } };

export type ConsoleStopVmMutationVariables = Exact<{
  id: string | number;
}>;


export type ConsoleStopVmMutation = { stopVm: { id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null } };

export type ConsoleTerminateVmMutationVariables = Exact<{
  id: string | number;
}>;


export type ConsoleTerminateVmMutation = { terminateVm: { id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null } };

export type ConsoleViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleViewerQuery = { viewer: { credentialId: string, organizationId: string, organizationName: string, permissions: Array<string> } };

export type ConsoleVmFieldsFragment = { id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null };

export type ConsoleVmEventsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type ConsoleVmEventsSubscription = { vmEvents: { id: string, vmId: string, to: VmStatus, vm: { id: string, name: string, status: VmStatus, statusReason: string, provisioningStage: string, capabilityTier: string, gpuCount: number, gpuModelName: string | null, pricePerHourCents: number, costSoFar: number | null, queuePosition: number | null, endpointUrl: string, createdAt: string | null, node: { id: string, name: string } | null } | null } };

export const ConsoleFleetNodeFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleFleetNode"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Node"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"leavingAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"freeGpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"failedReason"}},{"kind":"Field","name":{"kind":"Name","value":"vm"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"holder"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organizationId"}},{"kind":"Field","name":{"kind":"Name","value":"vmId"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleFleetNodeFragment, unknown>;
export const ConsoleUsageTotalsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleUsageTotals"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Usage"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"lines"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"seconds"}},{"kind":"Field","name":{"kind":"Name","value":"gpuSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"cost"}}]}}]}}]} as unknown as DocumentNode<ConsoleUsageTotalsFragment, unknown>;
export const ConsoleVmFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleVmFieldsFragment, unknown>;
export const ConsoleInstanceTypesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleInstanceTypes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"instanceTypes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"cpuCores"}},{"kind":"Field","name":{"kind":"Name","value":"ramGb"}},{"kind":"Field","name":{"kind":"Name","value":"diskSizeGb"}},{"kind":"Field","name":{"kind":"Name","value":"volumeGb"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"available"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleInstanceTypesQuery, ConsoleInstanceTypesQueryVariables>;
export const ConsoleCreateVmDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleCreateVm"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateVmInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createVm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleCreateVmMutation, ConsoleCreateVmMutationVariables>;
export const ConsoleCreatedVmDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleCreatedVm"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleCreatedVmQuery, ConsoleCreatedVmQueryVariables>;
export const ConsoleFleetDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleFleet"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleFleetNode"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleFleetNode"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Node"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"leavingAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"freeGpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"failedReason"}},{"kind":"Field","name":{"kind":"Name","value":"vm"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"holder"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organizationId"}},{"kind":"Field","name":{"kind":"Name","value":"vmId"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleFleetQuery, ConsoleFleetQueryVariables>;
export const ConsoleFleetEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ConsoleFleetEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodeEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"nodeId"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleFleetNode"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleFleetNode"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Node"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"leavingAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"freeGpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"modelId"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"failedReason"}},{"kind":"Field","name":{"kind":"Name","value":"vm"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"holder"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organizationId"}},{"kind":"Field","name":{"kind":"Name","value":"vmId"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleFleetEventsSubscription, ConsoleFleetEventsSubscriptionVariables>;
export const ConsolePodsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsolePods"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filterBy"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"search"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sortBy"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"PodSortField"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sortOrder"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"SortOrder"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"offset"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"deleted"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"completed"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pods"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filterBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filterBy"}}},{"kind":"Argument","name":{"kind":"Name","value":"search"},"value":{"kind":"Variable","name":{"kind":"Name","value":"search"}}},{"kind":"Argument","name":{"kind":"Name","value":"sortBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sortBy"}}},{"kind":"Argument","name":{"kind":"Name","value":"sortOrder"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sortOrder"}}},{"kind":"Argument","name":{"kind":"Name","value":"offset"},"value":{"kind":"Variable","name":{"kind":"Name","value":"offset"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}},{"kind":"Argument","name":{"kind":"Name","value":"deleted"},"value":{"kind":"Variable","name":{"kind":"Name","value":"deleted"}}},{"kind":"Argument","name":{"kind":"Name","value":"completed"},"value":{"kind":"Variable","name":{"kind":"Name","value":"completed"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"next"}},{"kind":"Field","name":{"kind":"Name","value":"pods"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"workloadId"}},{"kind":"Field","name":{"kind":"Name","value":"workloadName"}},{"kind":"Field","name":{"kind":"Name","value":"projectName"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodeName"}},{"kind":"Field","name":{"kind":"Name","value":"currentNodePool"}},{"kind":"Field","name":{"kind":"Name","value":"k8sPhase"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClassName"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"completedAt"}},{"kind":"Field","name":{"kind":"Name","value":"deletedAt"}},{"kind":"Field","name":{"kind":"Name","value":"ip"}},{"kind":"Field","name":{"kind":"Name","value":"containers"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"startedAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requestedResources"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuRequestType"}},{"kind":"Field","name":{"kind":"Name","value":"gpu"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpuMemory"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"cpu"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"cpuMemory"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"allocatedResources"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpu"}},{"kind":"Field","name":{"kind":"Name","value":"gpuMemory"}},{"kind":"Field","name":{"kind":"Name","value":"cpu"}},{"kind":"Field","name":{"kind":"Name","value":"cpuMemory"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ConsolePodsQuery, ConsolePodsQueryVariables>;
export const ConsolePodMetricsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsolePodMetrics"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"workloadId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"podId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"metricTypes"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PodMetricType"}}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"start"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"end"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"numberOfSamples"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"podMetrics"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"workloadId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"workloadId"}}},{"kind":"Argument","name":{"kind":"Name","value":"podId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"podId"}}},{"kind":"Argument","name":{"kind":"Name","value":"metricTypes"},"value":{"kind":"Variable","name":{"kind":"Name","value":"metricTypes"}}},{"kind":"Argument","name":{"kind":"Name","value":"start"},"value":{"kind":"Variable","name":{"kind":"Name","value":"start"}}},{"kind":"Argument","name":{"kind":"Name","value":"end"},"value":{"kind":"Variable","name":{"kind":"Name","value":"end"}}},{"kind":"Argument","name":{"kind":"Name","value":"numberOfSamples"},"value":{"kind":"Variable","name":{"kind":"Name","value":"numberOfSamples"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"measurements"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"labels"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"timestamp"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"histogram"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"timestamp"}},{"kind":"Field","name":{"kind":"Name","value":"data"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"omittedTypes"}}]}}]}}]} as unknown as DocumentNode<ConsolePodMetricsQuery, ConsolePodMetricsQueryVariables>;
export const ConsoleBillingDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleBilling"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"prepaid"}},{"kind":"Field","name":{"kind":"Name","value":"balance"}},{"kind":"Field","name":{"kind":"Name","value":"burnRatePerHour"}},{"kind":"Field","name":{"kind":"Name","value":"runwayHours"}},{"kind":"Field","name":{"kind":"Name","value":"spendLimitPerHour"}},{"kind":"Field","name":{"kind":"Name","value":"lowBalanceThresholdHours"}},{"kind":"Field","alias":{"kind":"Name","value":"byDay"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"EnumValue","value":"DAY"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleUsageTotals"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"byModel"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"EnumValue","value":"GPU_MODEL"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleUsageTotals"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleUsageTotals"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Usage"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"lines"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"seconds"}},{"kind":"Field","name":{"kind":"Name","value":"gpuSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"cost"}}]}}]}}]} as unknown as DocumentNode<ConsoleBillingQuery, ConsoleBillingQueryVariables>;
export const ConsoleLedgerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleLedger"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"ledger"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleLedgerQuery, ConsoleLedgerQueryVariables>;
export const ConsoleVmsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleVms"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"offset"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vms"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"offset"},"value":{"kind":"Variable","name":{"kind":"Name","value":"offset"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"vms"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleVmsQuery, ConsoleVmsQueryVariables>;
export const ConsoleVmDetailDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleVmDetail"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}},{"kind":"Field","name":{"kind":"Name","value":"imageUrl"}},{"kind":"Field","name":{"kind":"Name","value":"resourceSize"}},{"kind":"Field","name":{"kind":"Name","value":"console"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"text"}},{"kind":"Field","name":{"kind":"Name","value":"bytes"}},{"kind":"Field","name":{"kind":"Name","value":"capturedAt"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleVmDetailQuery, ConsoleVmDetailQueryVariables>;
export const ConsoleRestartVmDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleRestartVm"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"restartVm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleRestartVmMutation, ConsoleRestartVmMutationVariables>;
export const ConsoleStopVmDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleStopVm"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"stopVm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleStopVmMutation, ConsoleStopVmMutationVariables>;
export const ConsoleTerminateVmDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ConsoleTerminateVm"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"terminateVm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleTerminateVmMutation, ConsoleTerminateVmMutationVariables>;
export const ConsoleViewerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleViewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"credentialId"}},{"kind":"Field","name":{"kind":"Name","value":"organizationId"}},{"kind":"Field","name":{"kind":"Name","value":"organizationName"}},{"kind":"Field","name":{"kind":"Name","value":"permissions"}}]}}]}}]} as unknown as DocumentNode<ConsoleViewerQuery, ConsoleViewerQueryVariables>;
export const ConsoleVmEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ConsoleVmEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vmEvents"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"vmId"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"vm"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleVmFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleVmFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"VM"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"statusReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisioningStage"}},{"kind":"Field","name":{"kind":"Name","value":"capabilityTier"}},{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModelName"}},{"kind":"Field","name":{"kind":"Name","value":"pricePerHourCents"}},{"kind":"Field","name":{"kind":"Name","value":"costSoFar"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"endpointUrl"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleVmEventsSubscription, ConsoleVmEventsSubscriptionVariables>;