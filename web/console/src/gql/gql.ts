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
    "\n  query ConsoleOrganization {\n    organization {\n      id\n      name\n    }\n  }\n": typeof types.ConsoleOrganizationDocument,
    "\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n    }\n  }\n": typeof types.ConsoleFleetNodeFragmentDoc,
    "\n  query ConsoleFleet {\n    nodes {\n      ...ConsoleFleetNode\n    }\n  }\n": typeof types.ConsoleFleetDocument,
    "\n  subscription ConsoleFleetEvents {\n    nodeEvents {\n      id\n      nodeId\n      kind\n      at\n      node {\n        ...ConsoleFleetNode\n      }\n    }\n  }\n": typeof types.ConsoleFleetEventsDocument,
    "\n  query ConsoleVms {\n    vms(limit: 50) {\n      total\n      vms {\n        id\n        name\n        status\n      }\n    }\n  }\n": typeof types.ConsoleVmsDocument,
};
const documents: Documents = {
    "\n  query ConsoleOrganization {\n    organization {\n      id\n      name\n    }\n  }\n": types.ConsoleOrganizationDocument,
    "\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n    }\n  }\n": types.ConsoleFleetNodeFragmentDoc,
    "\n  query ConsoleFleet {\n    nodes {\n      ...ConsoleFleetNode\n    }\n  }\n": types.ConsoleFleetDocument,
    "\n  subscription ConsoleFleetEvents {\n    nodeEvents {\n      id\n      nodeId\n      kind\n      at\n      node {\n        ...ConsoleFleetNode\n      }\n    }\n  }\n": types.ConsoleFleetEventsDocument,
    "\n  query ConsoleVms {\n    vms(limit: 50) {\n      total\n      vms {\n        id\n        name\n        status\n      }\n    }\n  }\n": types.ConsoleVmsDocument,
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
export function graphql(source: "\n  query ConsoleOrganization {\n    organization {\n      id\n      name\n    }\n  }\n"): (typeof documents)["\n  query ConsoleOrganization {\n    organization {\n      id\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment ConsoleFleetNode on Node {\n    id\n    name\n    clusterId\n    nodePool\n    status\n    agentVersion\n    leavingAt\n    lastHeartbeatAt\n    gpus {\n      id\n      index\n      address\n      modelId\n      health\n      failedReason\n      vm {\n        id\n        name\n      }\n    }\n  }\n"];
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
export function graphql(source: "\n  query ConsoleVms {\n    vms(limit: 50) {\n      total\n      vms {\n        id\n        name\n        status\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConsoleVms {\n    vms(limit: 50) {\n      total\n      vms {\n        id\n        name\n        status\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;