// Package compute is the one implementation of what a caller does to a VM
// or a pod, behind both faces (REST and GraphQL): [Service.Create] places a
// new row or queues it pending, [Service.Restart], [Service.Stop] and
// [Service.Terminate] change a row's status, [Service.List], [Service.Get]
// and [Service.Connection] read rows; for the scheduler and node reports,
// [Service.PlaceQueued] places a pending row and [Service.Resubmit]
// re-submits a pod that lost its job. A reserved workload's restart that
// finds no room may preempt interruptible ones (preempt.go). What a caller
// calls checks the caller's permission itself; each write is one
// transaction, and the faces only call it and render its [Result].
//
// Restart is the model the others follow, described below.
//
// [Service.Restart] checks compute.operate, then runs one transaction
// (store.InTx): lock the VM, answer the checks that need no node (404, 403,
// terminated, not ready), lock the node (and, for a pod that needs an
// InfiniBand address, its fabric), read a snapshot of what is held there,
// let package placement decide, then claim and write the new status, which
// is a row of the lifecycle table (models.Lifecycle). The resolver and the
// REST shim only call it and render its [Result]. Every statement is the
// store's (internal/store/vms.go, nodes.go, gpus.go, snapshot.go); compute only decides.
//
// Placement answers with a typed placement.Code; [Answers] is the one table
// that turns a Code, for a VM or a pod, into the API's code, HTTP status and
// Retry-After.
//
// # Locks
//
// Every restart takes its locks in one order — the VM row, then (a stopped
// or failed VM starting again) its organization's GPU quota row for the
// model, then node rows by id, then fabric rows by id — so restarts never
// deadlock one another, nor with a create, which takes the same order from
// the quota row on and holds one node lock at a time: it passes over a
// node another transaction holds locked (FOR UPDATE SKIP LOCKED, which
// never waits) and lets go of a node it gave up (a savepoint rolled back)
// before it locks the next. The
// store's restart API documents how each engine takes them (FOR UPDATE on
// PostgreSQL, BEGIN IMMEDIATE on SQLite). Restarts on one node serialize on
// the node row; pods of one fabric serialize on the fabric row. A deadlock
// or serialization failure replays the whole transaction.
//
// A VM whose node was removed is placed from a snapshot of every node read
// without locks; then it locks its old node and the chosen one (by id),
// reloads the chosen one under the lock and runs the filters again. When the
// node changed in between, the transaction is replayed (bounded) with a fresh
// snapshot.
//
// # What guards against double booking besides the locks
//
// GPUs: gpus.holder_vm_id is one column, so a GPU has at most one holder by
// construction, and the claim is a conditional UPDATE (… WHERE holder_vm_id IS
// NULL OR = me, healthy, on that node, of that model) whose affected row count
// must equal the number of GPUs picked; anything else rolls the transaction
// back (and replays it) instead of booking silently.
//
// InfiniBand addresses: an address is not a row. What a fabric has handed out
// is derived from the VM rows — pods of InfiniBand-enabled organizations on
// the fabric's nodes in a holding status (models.HoldingStatuses) — so it can never
// disagree with the statuses that other code (the node agent's sweep,
// fixtures) writes, and an address is released by the same write that stops
// a pod. Claiming one is therefore: lock the fabric row FOR UPDATE, count the
// holders, refuse at capacity (INSUFFICIENT_IP_CAPACITY), write the pod's new
// status. Every claim of an address goes through that lock, so the count
// cannot pass ipCapacity under concurrency.
//
// CPU, RAM and disk are likewise derived from the plain VMs that hold them on
// the node, and are claimed under the node lock.
//
// # Decisions where the contract is silent
//
//   - A stopped, failed or interrupted VM or pod has lost its node when the
//     node is removed, the row names no node (or one that no longer exists),
//     or its statusReason is "node_removed"; it is placed afresh. (The table
//     names stopped and failed; an interrupted one on a removed node holds
//     GPUs on a node that is gone, and the seed says a node_removed restart
//     "deploys fresh elsewhere", so it is placed afresh too, letting go of
//     what it held there.) Every node is a candidate, the old one included
//     when it is online again; removed ones count in the summary as
//     "removed".
//   - A pod placed afresh gets a fresh, empty /workspace of the same volumeGb
//     on its new node: the old volume was on the removed node and is gone.
//     Its tearingDown flag is cleared: the previous run was on that node too.
//   - An interrupted VM or pod resumes only on healthy GPUs: after the offline
//     check, a GPU it holds that failed meanwhile answers 503 *_NODE_BUSY
//     exactly as for a running one (the server runs nothing on a failed GPU).
//   - A running VM or pod is rebooted (recreated) whatever its node's status,
//     as the table says; only a failed GPU stops it.
//   - A stopped or failed VM or pod starting again counts against its
//     organization's GPU quota for its model (package quotas): beyond it,
//     409 QUOTA_EXCEEDED, answered before anything about its node (an
//     admission check before placement, as Kubernetes' ResourceQuota). A
//     running one rebooted and an interrupted one resuming keep what they
//     hold, which already counts, so a quota lowered below the use stops
//     nothing.
//   - A plain VM stopped or failed while its node's agent still tears its
//     last run down (tearingDown on a node an agent reports for) answers
//     409 VM_NOT_READY, the VM side of POD_STOPPING, which the contract
//     names for pods only; a fixture's flag on a node no agent reported for
//     is no teardown, and its restart clears it.
//   - A running VM's restart starts a new generation with action reboot, a
//     running pod's with recreate, for the node agent (docs/contract.md#agent).
//   - Every successful restart clears interruptedAt and writes statusReason
//     "user_restarted"; nothing else of the row changes except status, nodeId
//     (placed afresh), tearingDown (placed afresh, and a plain VM's fixture
//     flag), its generation and action, and what it holds.
package compute
