/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
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

export type ConsoleVmsQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleVmsQuery = { vms: { total: number, vms: Array<{ id: string, name: string, status: VmStatus }> } };

export type ConsoleViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ConsoleViewerQuery = { viewer: { credentialId: string, organizationId: string, organizationName: string, permissions: Array<string> } };


export const ConsoleVmsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleVms"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"vms"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"vms"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<ConsoleVmsQuery, ConsoleVmsQueryVariables>;
export const ConsoleViewerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ConsoleViewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"credentialId"}},{"kind":"Field","name":{"kind":"Name","value":"organizationId"}},{"kind":"Field","name":{"kind":"Name","value":"organizationName"}},{"kind":"Field","name":{"kind":"Name","value":"permissions"}}]}}]}}]} as unknown as DocumentNode<ConsoleViewerQuery, ConsoleViewerQueryVariables>;