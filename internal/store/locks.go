package store

// The lock orders the store's transactions keep, so that no two of them
// deadlock. Each section names the statements a caller's transaction runs
// (in vms.go, nodes.go, gpus.go, queue.go, …) and the order it takes their
// locks in.

// # A restart's lock order
//
// The statements of a restart run inside one InTx transaction of package
// compute, which decides between them.
//
// Every restart takes its locks in one order, so restarts never deadlock
// one another:
//
//  1. the VM row (LockVM);
//  2. the organization's GPU quota row for the VM's model (LockGPUQuota),
//     when a stopped or failed VM starts again and the quota exists; a
//     placement with no VM row to lock yet (a create) starts here;
//  3. node rows, by id (LockNode, LockNodes);
//  4. fabric rows, by id (Snapshot with LockFabrics);
//  5. a queue placement's organization turn row (ServedFromQueue), last.
//
// A create that found no room and would queue takes its organization's
// queue lock (CountQueued) after 2, holding no node (those it gave up were
// let go).
//
// A preemption attempt locks its victims' VM rows (of other organizations)
// after 2 and before 3.
//
// On PostgreSQL each is SELECT … FOR UPDATE under READ COMMITTED: every read
// that decides (free GPUs, held CPU/RAM/disk, addresses held on a fabric)
// runs after the lock is granted and sees what the previous holder
// committed; a deadlock or serialization failure replays the transaction
// (InTx). On SQLite every transaction is BEGIN IMMEDIATE with a busy timeout:
// the transaction holds the database's write lock from its first statement,
// so two writers never both read "free", and the locks above are no-ops.

// # A create and the scheduler
//
// The statements of a create and of the scheduler (packages compute and
// scheduler), run inside InTx transactions. A create chooses among the
// nodes Candidates answers (nodes.go), inserts its row pending, then
// locks the candidates in turn (the restart's lock order above: the VM
// row — its own, new, which no one else can see yet — then node rows by
// id, then fabric rows by id): the read of a candidate's snapshot locks it
// (SnapshotScope.SkipLocked) and passes over a node another holds, and a
// node given up is let go in a savepoint, Try, before the next is locked,
// so it holds one node lock at a time; then it applies create-placed or
// create-queued to it; the scheduler locks one pending row, skipping a row
// another replica holds, then its node, the same way.

// # A node agent's report
//
// The statements of the node agent's reports (docs/contract.md#agent), run
// inside one InTx transaction by package nodes, which decides between
// them from the report and the lifecycle table.
//
// A report takes its locks in the restart's order above, so that it
// never deadlocks with a restart, a stop, the sweep or another report:
//
//  1. the VM rows a heartbeat may move, by id (LockRowsOnNamedNode),
//     before the node's row, since restart, stop and terminate lock a VM
//     row before its node's;
//  2. the node's row (LockNodeByName): two reports of one node, or a
//     report and the sweep, never interleave;
//  3. within that, VM rows are written before GPU rows, the order the
//     sweep's expiry takes too.

// The GPU and catalog statements of the node agent's reports, run inside
// the report's transaction after its node's row lock. Package
// nodes decides what they write: how an inventory's GPUs match the rows,
// which GPUs fail, which catalog entries are added.

// # The heartbeat sweep
//
// The statements of the heartbeat sweep, run inside InTx transactions by
// package sweep, which decides from the lifecycle table what the
// heartbeats' absence and the operators' leavingAt do. Every write is
// conditional on the stored state the sweep locked, so any number of
// replicas may sweep one database at once. Lock order: node rows, by id,
// before the VM rows on them (ApplyToWorkloads), as a heartbeat's node
// lock comes before the rows it moves.

// # The fleet operator and preemption
//
// The statements of the fleet operator's paths (package fleet) and of
// preemption (package compute), run inside the caller's InTx transaction.
// They keep the restart's lock order: VM rows before node rows before
// organization and fabric rows.
