/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query ConsoleInstanceTypes {\n    instanceTypes {\n      name\n      description\n      gpuCount\n      gpuModel {\n        id\n        name\n      }\n      cpuCores\n      ramGb\n      diskSizeGb\n      volumeGb\n      pricePerHourCents\n      capacity {\n        clusterId\n        nodePool\n        available\n      }\n    }\n  }\n": typeof types.ConsoleInstanceTypesDocument,
    "\n  mutation ConsoleCreateVm($input: CreateVmInput!) {\n    createVm(input: $input) {\n      ...ConsoleVmFields\n    }\n  }\n": typeof types.ConsoleCreateVmDocument,
    "\n  query ConsoleCreatedVm($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": typeof types.ConsoleCreatedVmDocument,
    "\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    freeGpuCount\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n      holder {\n        organizationId\n        vmId\n      }\n    }\n  }\n": typeof types.ConsoleFleetNodeFragmentDoc,
    "\n  query ConsoleFleet {\n    nodes {\n      ...ConsoleFleetNode\n    }\n  }\n": typeof types.ConsoleFleetDocument,
    "\n  subscription ConsoleFleetEvents {\n    nodeEvents {\n      id\n      nodeId\n      kind\n      at\n      node {\n        ...ConsoleFleetNode\n      }\n    }\n  }\n": typeof types.ConsoleFleetEventsDocument,
    "\n  query ConsolePods(\n    $filterBy: [String!]\n    $search: String\n    $sortBy: PodSortField\n    $sortOrder: SortOrder\n    $offset: Int\n    $limit: Int\n    $deleted: Boolean\n    $completed: Boolean\n  ) {\n    pods(\n      filterBy: $filterBy\n      search: $search\n      sortBy: $sortBy\n      sortOrder: $sortOrder\n      offset: $offset\n      limit: $limit\n      deleted: $deleted\n      completed: $completed\n    ) {\n      total\n      next\n      pods {\n        id\n        name\n        workloadId\n        workloadName\n        projectName\n        clusterId\n        nodeName\n        currentNodePool\n        k8sPhase\n        priorityClassName\n        createdAt\n        completedAt\n        deletedAt\n        ip\n        containers {\n          name\n          image\n          startedAt\n        }\n        requestedResources {\n          gpuRequestType\n          gpu {\n            request\n            limit\n          }\n          gpuMemory {\n            request\n            limit\n          }\n          cpu {\n            request\n            limit\n          }\n          cpuMemory {\n            request\n            limit\n          }\n        }\n        allocatedResources {\n          gpu\n          gpuMemory\n          cpu\n          cpuMemory\n        }\n        node {\n          id\n          name\n          status\n          nodePool\n          agentVersion\n        }\n      }\n    }\n  }\n": typeof types.ConsolePodsDocument,
    "\n  query ConsolePodMetrics(\n    $workloadId: ID!\n    $podId: ID!\n    $metricTypes: [PodMetricType!]!\n    $start: Time!\n    $end: Time!\n    $numberOfSamples: Int\n  ) {\n    podMetrics(\n      workloadId: $workloadId\n      podId: $podId\n      metricTypes: $metricTypes\n      start: $start\n      end: $end\n      numberOfSamples: $numberOfSamples\n    ) {\n      measurements {\n        type\n        labels\n        values {\n          value\n          timestamp\n        }\n      }\n      histogram {\n        type\n        values {\n          timestamp\n          data\n        }\n      }\n      omittedTypes\n    }\n  }\n": typeof types.ConsolePodMetricsDocument,
    "\n  fragment ConsoleUsageTotals on Usage {\n    from\n    to\n    total\n    lines {\n      key\n      seconds\n      gpuSeconds\n      cost\n    }\n  }\n": typeof types.ConsoleUsageTotalsFragmentDoc,
    "\n  query ConsoleBilling($from: Time!, $to: Time!) {\n    organization {\n      id\n      name\n      prepaid\n      balance\n      burnRatePerHour\n      runwayHours\n      spendLimitPerHour\n      lowBalanceThresholdHours\n      byDay: usage(from: $from, to: $to, groupBy: DAY) {\n        ...ConsoleUsageTotals\n      }\n      byModel: usage(from: $from, to: $to, groupBy: GPU_MODEL) {\n        ...ConsoleUsageTotals\n      }\n    }\n  }\n": typeof types.ConsoleBillingDocument,
    "\n  query ConsoleLedger($first: Int, $after: String) {\n    organization {\n      id\n      ledger(first: $first, after: $after) {\n        nodes {\n          id\n          kind\n          amount\n          reason\n          createdAt\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": typeof types.ConsoleLedgerDocument,
    "\n  query ConsoleVms($offset: Int!, $limit: Int!) {\n    vms(offset: $offset, limit: $limit) {\n      total\n      vms {\n        ...ConsoleVmFields\n      }\n    }\n  }\n": typeof types.ConsoleVmsDocument,
    "\n  query ConsoleVmDetail($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n      imageUrl\n      resourceSize\n      console {\n        text\n        bytes\n        capturedAt\n      }\n    }\n  }\n": typeof types.ConsoleVmDetailDocument,
    "\n  mutation ConsoleRestartVm($id: ID!) {\n    restartVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": typeof types.ConsoleRestartVmDocument,
    "\n  mutation ConsoleStopVm($id: ID!) {\n    stopVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": typeof types.ConsoleStopVmDocument,
    "\n  mutation ConsoleTerminateVm($id: ID!) {\n    terminateVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": typeof types.ConsoleTerminateVmDocument,
    "\n  query ConsoleViewer {\n    viewer {\n      credentialId\n      organizationId\n      organizationName\n      permissions\n    }\n  }\n": typeof types.ConsoleViewerDocument,
    "\n  fragment ConsoleVmFields on VM {\n    id\n    name\n    status\n    statusReason\n    provisioningStage\n    capabilityTier\n    gpuCount\n    gpuModelName\n    pricePerHourCents\n    costSoFar\n    queuePosition\n    endpointUrl\n    createdAt\n    node {\n      id\n      name\n    }\n  }\n": typeof types.ConsoleVmFieldsFragmentDoc,
    "\n  subscription ConsoleVmEvents {\n    vmEvents {\n      id\n      vmId\n      to\n      vm {\n        ...ConsoleVmFields\n      }\n    }\n  }\n": typeof types.ConsoleVmEventsDocument,
};
const documents: Documents = {
    "\n  query ConsoleInstanceTypes {\n    instanceTypes {\n      name\n      description\n      gpuCount\n      gpuModel {\n        id\n        name\n      }\n      cpuCores\n      ramGb\n      diskSizeGb\n      volumeGb\n      pricePerHourCents\n      capacity {\n        clusterId\n        nodePool\n        available\n      }\n    }\n  }\n": types.ConsoleInstanceTypesDocument,
    "\n  mutation ConsoleCreateVm($input: CreateVmInput!) {\n    createVm(input: $input) {\n      ...ConsoleVmFields\n    }\n  }\n": types.ConsoleCreateVmDocument,
    "\n  query ConsoleCreatedVm($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": types.ConsoleCreatedVmDocument,
    "\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    freeGpuCount\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n      holder {\n        organizationId\n        vmId\n      }\n    }\n  }\n": types.ConsoleFleetNodeFragmentDoc,
    "\n  query ConsoleFleet {\n    nodes {\n      ...ConsoleFleetNode\n    }\n  }\n": types.ConsoleFleetDocument,
    "\n  subscription ConsoleFleetEvents {\n    nodeEvents {\n      id\n      nodeId\n      kind\n      at\n      node {\n        ...ConsoleFleetNode\n      }\n    }\n  }\n": types.ConsoleFleetEventsDocument,
    "\n  query ConsolePods(\n    $filterBy: [String!]\n    $search: String\n    $sortBy: PodSortField\n    $sortOrder: SortOrder\n    $offset: Int\n    $limit: Int\n    $deleted: Boolean\n    $completed: Boolean\n  ) {\n    pods(\n      filterBy: $filterBy\n      search: $search\n      sortBy: $sortBy\n      sortOrder: $sortOrder\n      offset: $offset\n      limit: $limit\n      deleted: $deleted\n      completed: $completed\n    ) {\n      total\n      next\n      pods {\n        id\n        name\n        workloadId\n        workloadName\n        projectName\n        clusterId\n        nodeName\n        currentNodePool\n        k8sPhase\n        priorityClassName\n        createdAt\n        completedAt\n        deletedAt\n        ip\n        containers {\n          name\n          image\n          startedAt\n        }\n        requestedResources {\n          gpuRequestType\n          gpu {\n            request\n            limit\n          }\n          gpuMemory {\n            request\n            limit\n          }\n          cpu {\n            request\n            limit\n          }\n          cpuMemory {\n            request\n            limit\n          }\n        }\n        allocatedResources {\n          gpu\n          gpuMemory\n          cpu\n          cpuMemory\n        }\n        node {\n          id\n          name\n          status\n          nodePool\n          agentVersion\n        }\n      }\n    }\n  }\n": types.ConsolePodsDocument,
    "\n  query ConsolePodMetrics(\n    $workloadId: ID!\n    $podId: ID!\n    $metricTypes: [PodMetricType!]!\n    $start: Time!\n    $end: Time!\n    $numberOfSamples: Int\n  ) {\n    podMetrics(\n      workloadId: $workloadId\n      podId: $podId\n      metricTypes: $metricTypes\n      start: $start\n      end: $end\n      numberOfSamples: $numberOfSamples\n    ) {\n      measurements {\n        type\n        labels\n        values {\n          value\n          timestamp\n        }\n      }\n      histogram {\n        type\n        values {\n          timestamp\n          data\n        }\n      }\n      omittedTypes\n    }\n  }\n": types.ConsolePodMetricsDocument,
    "\n  fragment ConsoleUsageTotals on Usage {\n    from\n    to\n    total\n    lines {\n      key\n      seconds\n      gpuSeconds\n      cost\n    }\n  }\n": types.ConsoleUsageTotalsFragmentDoc,
    "\n  query ConsoleBilling($from: Time!, $to: Time!) {\n    organization {\n      id\n      name\n      prepaid\n      balance\n      burnRatePerHour\n      runwayHours\n      spendLimitPerHour\n      lowBalanceThresholdHours\n      byDay: usage(from: $from, to: $to, groupBy: DAY) {\n        ...ConsoleUsageTotals\n      }\n      byModel: usage(from: $from, to: $to, groupBy: GPU_MODEL) {\n        ...ConsoleUsageTotals\n      }\n    }\n  }\n": types.ConsoleBillingDocument,
    "\n  query ConsoleLedger($first: Int, $after: String) {\n    organization {\n      id\n      ledger(first: $first, after: $after) {\n        nodes {\n          id\n          kind\n          amount\n          reason\n          createdAt\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": types.ConsoleLedgerDocument,
    "\n  query ConsoleVms($offset: Int!, $limit: Int!) {\n    vms(offset: $offset, limit: $limit) {\n      total\n      vms {\n        ...ConsoleVmFields\n      }\n    }\n  }\n": types.ConsoleVmsDocument,
    "\n  query ConsoleVmDetail($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n      imageUrl\n      resourceSize\n      console {\n        text\n        bytes\n        capturedAt\n      }\n    }\n  }\n": types.ConsoleVmDetailDocument,
    "\n  mutation ConsoleRestartVm($id: ID!) {\n    restartVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": types.ConsoleRestartVmDocument,
    "\n  mutation ConsoleStopVm($id: ID!) {\n    stopVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": types.ConsoleStopVmDocument,
    "\n  mutation ConsoleTerminateVm($id: ID!) {\n    terminateVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n": types.ConsoleTerminateVmDocument,
    "\n  query ConsoleViewer {\n    viewer {\n      credentialId\n      organizationId\n      organizationName\n      permissions\n    }\n  }\n": types.ConsoleViewerDocument,
    "\n  fragment ConsoleVmFields on VM {\n    id\n    name\n    status\n    statusReason\n    provisioningStage\n    capabilityTier\n    gpuCount\n    gpuModelName\n    pricePerHourCents\n    costSoFar\n    queuePosition\n    endpointUrl\n    createdAt\n    node {\n      id\n      name\n    }\n  }\n": types.ConsoleVmFieldsFragmentDoc,
    "\n  subscription ConsoleVmEvents {\n    vmEvents {\n      id\n      vmId\n      to\n      vm {\n        ...ConsoleVmFields\n      }\n    }\n  }\n": types.ConsoleVmEventsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleInstanceTypes {\n    instanceTypes {\n      name\n      description\n      gpuCount\n      gpuModel {\n        id\n        name\n      }\n      cpuCores\n      ramGb\n      diskSizeGb\n      volumeGb\n      pricePerHourCents\n      capacity {\n        clusterId\n        nodePool\n        available\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleInstanceTypes {\n    instanceTypes {\n      name\n      description\n      gpuCount\n      gpuModel {\n        id\n        name\n      }\n      cpuCores\n      ramGb\n      diskSizeGb\n      volumeGb\n      pricePerHourCents\n      capacity {\n        clusterId\n        nodePool\n        available\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleCreateVm($input: CreateVmInput!) {\n    createVm(input: $input) {\n      ...ConsoleVmFields\n    }\n  }\n"): (typeof documents)["\n  mutation ConsoleCreateVm($input: CreateVmInput!) {\n    createVm(input: $input) {\n      ...ConsoleVmFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleCreatedVm($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"): (typeof documents)["\n  query ConsoleCreatedVm($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    freeGpuCount\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n      holder {\n        organizationId\n        vmId\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    freeGpuCount\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n      holder {\n        organizationId\n        vmId\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleFleet {\n    nodes {\n      ...ConsoleFleetNode\n    }\n  }\n"): (typeof documents)["\n  query ConsoleFleet {\n    nodes {\n      ...ConsoleFleetNode\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleFleetEvents {\n    nodeEvents {\n      id\n      nodeId\n      kind\n      at\n      node {\n        ...ConsoleFleetNode\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription ConsoleFleetEvents {\n    nodeEvents {\n      id\n      nodeId\n      kind\n      at\n      node {\n        ...ConsoleFleetNode\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsolePods(\n    $filterBy: [String!]\n    $search: String\n    $sortBy: PodSortField\n    $sortOrder: SortOrder\n    $offset: Int\n    $limit: Int\n    $deleted: Boolean\n    $completed: Boolean\n  ) {\n    pods(\n      filterBy: $filterBy\n      search: $search\n      sortBy: $sortBy\n      sortOrder: $sortOrder\n      offset: $offset\n      limit: $limit\n      deleted: $deleted\n      completed: $completed\n    ) {\n      total\n      next\n      pods {\n        id\n        name\n        workloadId\n        workloadName\n        projectName\n        clusterId\n        nodeName\n        currentNodePool\n        k8sPhase\n        priorityClassName\n        createdAt\n        completedAt\n        deletedAt\n        ip\n        containers {\n          name\n          image\n          startedAt\n        }\n        requestedResources {\n          gpuRequestType\n          gpu {\n            request\n            limit\n          }\n          gpuMemory {\n            request\n            limit\n          }\n          cpu {\n            request\n            limit\n          }\n          cpuMemory {\n            request\n            limit\n          }\n        }\n        allocatedResources {\n          gpu\n          gpuMemory\n          cpu\n          cpuMemory\n        }\n        node {\n          id\n          name\n          status\n          nodePool\n          agentVersion\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConsolePods(\n    $filterBy: [String!]\n    $search: String\n    $sortBy: PodSortField\n    $sortOrder: SortOrder\n    $offset: Int\n    $limit: Int\n    $deleted: Boolean\n    $completed: Boolean\n  ) {\n    pods(\n      filterBy: $filterBy\n      search: $search\n      sortBy: $sortBy\n      sortOrder: $sortOrder\n      offset: $offset\n      limit: $limit\n      deleted: $deleted\n      completed: $completed\n    ) {\n      total\n      next\n      pods {\n        id\n        name\n        workloadId\n        workloadName\n        projectName\n        clusterId\n        nodeName\n        currentNodePool\n        k8sPhase\n        priorityClassName\n        createdAt\n        completedAt\n        deletedAt\n        ip\n        containers {\n          name\n          image\n          startedAt\n        }\n        requestedResources {\n          gpuRequestType\n          gpu {\n            request\n            limit\n          }\n          gpuMemory {\n            request\n            limit\n          }\n          cpu {\n            request\n            limit\n          }\n          cpuMemory {\n            request\n            limit\n          }\n        }\n        allocatedResources {\n          gpu\n          gpuMemory\n          cpu\n          cpuMemory\n        }\n        node {\n          id\n          name\n          status\n          nodePool\n          agentVersion\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsolePodMetrics(\n    $workloadId: ID!\n    $podId: ID!\n    $metricTypes: [PodMetricType!]!\n    $start: Time!\n    $end: Time!\n    $numberOfSamples: Int\n  ) {\n    podMetrics(\n      workloadId: $workloadId\n      podId: $podId\n      metricTypes: $metricTypes\n      start: $start\n      end: $end\n      numberOfSamples: $numberOfSamples\n    ) {\n      measurements {\n        type\n        labels\n        values {\n          value\n          timestamp\n        }\n      }\n      histogram {\n        type\n        values {\n          timestamp\n          data\n        }\n      }\n      omittedTypes\n    }\n  }\n"): (typeof documents)["\n  query ConsolePodMetrics(\n    $workloadId: ID!\n    $podId: ID!\n    $metricTypes: [PodMetricType!]!\n    $start: Time!\n    $end: Time!\n    $numberOfSamples: Int\n  ) {\n    podMetrics(\n      workloadId: $workloadId\n      podId: $podId\n      metricTypes: $metricTypes\n      start: $start\n      end: $end\n      numberOfSamples: $numberOfSamples\n    ) {\n      measurements {\n        type\n        labels\n        values {\n          value\n          timestamp\n        }\n      }\n      histogram {\n        type\n        values {\n          timestamp\n          data\n        }\n      }\n      omittedTypes\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ConsoleUsageTotals on Usage {\n    from\n    to\n    total\n    lines {\n      key\n      seconds\n      gpuSeconds\n      cost\n    }\n  }\n"): (typeof documents)["\n  fragment ConsoleUsageTotals on Usage {\n    from\n    to\n    total\n    lines {\n      key\n      seconds\n      gpuSeconds\n      cost\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleBilling($from: Time!, $to: Time!) {\n    organization {\n      id\n      name\n      prepaid\n      balance\n      burnRatePerHour\n      runwayHours\n      spendLimitPerHour\n      lowBalanceThresholdHours\n      byDay: usage(from: $from, to: $to, groupBy: DAY) {\n        ...ConsoleUsageTotals\n      }\n      byModel: usage(from: $from, to: $to, groupBy: GPU_MODEL) {\n        ...ConsoleUsageTotals\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleBilling($from: Time!, $to: Time!) {\n    organization {\n      id\n      name\n      prepaid\n      balance\n      burnRatePerHour\n      runwayHours\n      spendLimitPerHour\n      lowBalanceThresholdHours\n      byDay: usage(from: $from, to: $to, groupBy: DAY) {\n        ...ConsoleUsageTotals\n      }\n      byModel: usage(from: $from, to: $to, groupBy: GPU_MODEL) {\n        ...ConsoleUsageTotals\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleLedger($first: Int, $after: String) {\n    organization {\n      id\n      ledger(first: $first, after: $after) {\n        nodes {\n          id\n          kind\n          amount\n          reason\n          createdAt\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleLedger($first: Int, $after: String) {\n    organization {\n      id\n      ledger(first: $first, after: $after) {\n        nodes {\n          id\n          kind\n          amount\n          reason\n          createdAt\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleVms($offset: Int!, $limit: Int!) {\n    vms(offset: $offset, limit: $limit) {\n      total\n      vms {\n        ...ConsoleVmFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleVms($offset: Int!, $limit: Int!) {\n    vms(offset: $offset, limit: $limit) {\n      total\n      vms {\n        ...ConsoleVmFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleVmDetail($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n      imageUrl\n      resourceSize\n      console {\n        text\n        bytes\n        capturedAt\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleVmDetail($id: ID!) {\n    vm(id: $id) {\n      ...ConsoleVmFields\n      imageUrl\n      resourceSize\n      console {\n        text\n        bytes\n        capturedAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleRestartVm($id: ID!) {\n    restartVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"): (typeof documents)["\n  mutation ConsoleRestartVm($id: ID!) {\n    restartVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleStopVm($id: ID!) {\n    stopVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"): (typeof documents)["\n  mutation ConsoleStopVm($id: ID!) {\n    stopVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ConsoleTerminateVm($id: ID!) {\n    terminateVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"): (typeof documents)["\n  mutation ConsoleTerminateVm($id: ID!) {\n    terminateVm(id: $id) {\n      ...ConsoleVmFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConsoleViewer {\n    viewer {\n      credentialId\n      organizationId\n      organizationName\n      permissions\n    }\n  }\n"): (typeof documents)["\n  query ConsoleViewer {\n    viewer {\n      credentialId\n      organizationId\n      organizationName\n      permissions\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ConsoleVmFields on VM {\n    id\n    name\n    status\n    statusReason\n    provisioningStage\n    capabilityTier\n    gpuCount\n    gpuModelName\n    pricePerHourCents\n    costSoFar\n    queuePosition\n    endpointUrl\n    createdAt\n    node {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  fragment ConsoleVmFields on VM {\n    id\n    name\n    status\n    statusReason\n    provisioningStage\n    capabilityTier\n    gpuCount\n    gpuModelName\n    pricePerHourCents\n    costSoFar\n    queuePosition\n    endpointUrl\n    createdAt\n    node {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConsoleVmEvents {\n    vmEvents {\n      id\n      vmId\n      to\n      vm {\n        ...ConsoleVmFields\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription ConsoleVmEvents {\n    vmEvents {\n      id\n      vmId\n      to\n      vm {\n        ...ConsoleVmFields\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;