/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** What a ledger entry is. */
export type LedgerEntryKind =
  /** An operator's adjustment, of either sign. */
  | 'ADJUSTMENT'
  /** Granted by an operator. */
  | 'CREDIT'
  /** A debit of the metering pass. */
  | 'USAGE';

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

export type ConsoleOrganizationQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleOrganizationQuery = { organization: { id: string, name: string } };

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

export type ConsoleVmsQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleVmsQuery = { vms: { total: number, vms: Array<{ id: string, name: string, status: VmStatus }> } };

export const ConsoleUsageTotalsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleUsageTotals"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Usage"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"lines"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"seconds"}},{"kind":"Field","name":{"kind":"Name","value":"gpuSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"cost"}}]}}]}}]} as unknown as DocumentNode<ConsoleUsageTotalsFragment, unknown>;
export const ConsoleOrganizationDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleOrganization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ConsoleOrganizationQuery, ConsoleOrganizationQueryVariables>;
export const ConsolePodsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsolePods"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filterBy"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"search"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sortBy"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"PodSortField"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sortOrder"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"SortOrder"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"offset"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"deleted"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"completed"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pods"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filterBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filterBy"}}},{"kind":"Argument","name":{"kind":"Name","value":"search"},"value":{"kind":"Variable","name":{"kind":"Name","value":"search"}}},{"kind":"Argument","name":{"kind":"Name","value":"sortBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sortBy"}}},{"kind":"Argument","name":{"kind":"Name","value":"sortOrder"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sortOrder"}}},{"kind":"Argument","name":{"kind":"Name","value":"offset"},"value":{"kind":"Variable","name":{"kind":"Name","value":"offset"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}},{"kind":"Argument","name":{"kind":"Name","value":"deleted"},"value":{"kind":"Variable","name":{"kind":"Name","value":"deleted"}}},{"kind":"Argument","name":{"kind":"Name","value":"completed"},"value":{"kind":"Variable","name":{"kind":"Name","value":"completed"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"next"}},{"kind":"Field","name":{"kind":"Name","value":"pods"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"workloadId"}},{"kind":"Field","name":{"kind":"Name","value":"workloadName"}},{"kind":"Field","name":{"kind":"Name","value":"projectName"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"nodeName"}},{"kind":"Field","name":{"kind":"Name","value":"currentNodePool"}},{"kind":"Field","name":{"kind":"Name","value":"k8sPhase"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClassName"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"completedAt"}},{"kind":"Field","name":{"kind":"Name","value":"deletedAt"}},{"kind":"Field","name":{"kind":"Name","value":"ip"}},{"kind":"Field","name":{"kind":"Name","value":"containers"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"startedAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requestedResources"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuRequestType"}},{"kind":"Field","name":{"kind":"Name","value":"gpu"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpuMemory"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"cpu"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"cpuMemory"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"allocatedResources"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpu"}},{"kind":"Field","name":{"kind":"Name","value":"gpuMemory"}},{"kind":"Field","name":{"kind":"Name","value":"cpu"}},{"kind":"Field","name":{"kind":"Name","value":"cpuMemory"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"nodePool"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ConsolePodsQuery, ConsolePodsQueryVariables>;
export const ConsolePodMetricsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsolePodMetrics"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"workloadId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"podId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"metricTypes"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PodMetricType"}}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"start"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"end"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"numberOfSamples"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"podMetrics"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"workloadId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"workloadId"}}},{"kind":"Argument","name":{"kind":"Name","value":"podId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"podId"}}},{"kind":"Argument","name":{"kind":"Name","value":"metricTypes"},"value":{"kind":"Variable","name":{"kind":"Name","value":"metricTypes"}}},{"kind":"Argument","name":{"kind":"Name","value":"start"},"value":{"kind":"Variable","name":{"kind":"Name","value":"start"}}},{"kind":"Argument","name":{"kind":"Name","value":"end"},"value":{"kind":"Variable","name":{"kind":"Name","value":"end"}}},{"kind":"Argument","name":{"kind":"Name","value":"numberOfSamples"},"value":{"kind":"Variable","name":{"kind":"Name","value":"numberOfSamples"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"measurements"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"labels"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"timestamp"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"histogram"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"values"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"timestamp"}},{"kind":"Field","name":{"kind":"Name","value":"data"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"omittedTypes"}}]}}]}}]} as unknown as DocumentNode<ConsolePodMetricsQuery, ConsolePodMetricsQueryVariables>;
export const ConsoleBillingDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleBilling"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Time"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"prepaid"}},{"kind":"Field","name":{"kind":"Name","value":"balance"}},{"kind":"Field","name":{"kind":"Name","value":"burnRatePerHour"}},{"kind":"Field","name":{"kind":"Name","value":"runwayHours"}},{"kind":"Field","name":{"kind":"Name","value":"spendLimitPerHour"}},{"kind":"Field","name":{"kind":"Name","value":"lowBalanceThresholdHours"}},{"kind":"Field","alias":{"kind":"Name","value":"byDay"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"EnumValue","value":"DAY"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleUsageTotals"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"byModel"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"EnumValue","value":"GPU_MODEL"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ConsoleUsageTotals"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ConsoleUsageTotals"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Usage"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"from"}},{"kind":"Field","name":{"kind":"Name","value":"to"}},{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"lines"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"seconds"}},{"kind":"Field","name":{"kind":"Name","value":"gpuSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"cost"}}]}}]}}]} as unknown as DocumentNode<ConsoleBillingQuery, ConsoleBillingQueryVariables>;
export const ConsoleLedgerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleLedger"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"organization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"ledger"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleLedgerQuery, ConsoleLedgerQueryVariables>;
export const ConsoleVmsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleVms"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vms"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"vms"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleVmsQuery, ConsoleVmsQueryVariables>;