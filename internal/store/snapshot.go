package store

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// Snapshot is what is on some nodes and what is held there, read inside a
// restart's transaction for placement to decide on. Package compute turns
// it into placement's view; the store knows nothing of placement.
type Snapshot struct {
	Nodes []models.Node // by id
	GPUs  []models.GPU  // by node, then index
	// HostShares are the CPU, RAM and disk plain VMs hold on the nodes:
	// VMs in a holding status (pods hold none of these).
	HostShares []HostShare
	Fabrics    []models.Fabric // the nodes' fabrics, by id
	// AddressHolders are the pods holding an address of those fabrics; read
	// only with SnapshotScope.AddressHolders.
	AddressHolders []AddressHolder
	// Workloads are the VMs and pods in a holding status on the nodes, with
	// what preemption weighs; read only with SnapshotScope.Workloads.
	Workloads []WorkloadHolder
}

// WorkloadHolder is a VM or pod holding something on a node, as
// preemption sees it.
type WorkloadHolder struct {
	ID                string     `gorm:"column:id"`
	NodeID            string     `gorm:"column:node_id"`
	OrganizationID    string     `gorm:"column:organization_id"`
	ComputeClass      string     `gorm:"column:compute_class"`
	PricePerHourCents int        `gorm:"column:price_per_hour_cents"`
	CreatedAt         *time.Time `gorm:"column:created_at"`
}

// HostShare is what one plain VM holds of its node's host resources.
type HostShare struct {
	ID         string `gorm:"column:id"`
	NodeID     string `gorm:"column:node_id"`
	CPUCores   int    `gorm:"column:cpu_cores"`
	RAMGb      int    `gorm:"column:ram_gb"`
	DiskSizeGb int    `gorm:"column:disk_size_gb"`
}

// AddressHolder is a pod holding one InfiniBand address of a fabric.
type AddressHolder struct {
	ID       string `gorm:"column:id"`
	FabricID string `gorm:"column:fabric_id"`
}

// SnapshotScope says which nodes a Snapshot reads and how.
type SnapshotScope struct {
	// NodeIDs limits it to these nodes; nil reads every node.
	NodeIDs []string
	// LockFabrics reads the fabric rows FOR UPDATE before their holders are
	// counted (the node rows are the caller's to lock first).
	LockFabrics bool
	// SkipLocked locks the node rows as it reads them, in the same
	// statement: FOR UPDATE SKIP LOCKED on PostgreSQL, so that a node
	// another transaction holds locked is left out of the snapshot (with
	// its GPUs and holders) instead of waited for. It never waits, so it
	// cannot deadlock. On SQLite the transaction holds the one write lock
	// already: every node of NodeIDs is read.
	SkipLocked bool
	// AddressHolders reads who holds the fabrics' addresses: the request is
	// a pod of an InfiniBand-enabled organization.
	AddressHolders bool
	// Workloads reads every holder of the nodes with its organization,
	// computeClass and price (a reserved workload's preemption).
	Workloads bool
}

// The columns a Snapshot reads of nodes and GPUs, in the order it scans
// them: what placement and the capacity per node pool read (NodeInfos).
var (
	snapshotNodeColumns = []string{"id", "name", "cluster_id", "node_pool", "status", "agent_version", "fabric_id", "cpu_cores", "ram_gb", "disk_gb", "leaving_at"}
	snapshotGPUColumns  = []string{"id", "node_id", "idx", "address", "model_id", "health", "failed_reason", "holder_vm_id"}
)

// Snapshot reads the nodes of scope with their GPUs, the host shares held
// there and, when they are on a fabric, their fabrics (and the address
// holders when asked).
//
// An InfiniBand address is not a row: the addresses a fabric has handed
// out are derived from the VM rows (pods of InfiniBand-enabled
// organizations on the fabric's nodes, in a holding status), so the count
// never disagrees with statuses other code writes, and the write that stops
// a pod releases its address. The fabric row lock is what serializes claims.
func (s *Store) Snapshot(tx *Txn, scope SnapshotScope) (*Snapshot, error) {
	snap := &Snapshot{}
	ids := scope.NodeIDs
	if ids != nil && len(ids) == 0 {
		return snap, nil
	}
	within := func(q *gorm.DB, col string) *gorm.DB {
		if ids == nil {
			return q
		}
		return q.Where(col+" IN ?", ids)
	}

	// Only the columns placement decides on, scanned into their fields
	// directly: a whole fleet's GPUs are most of what a snapshot of every
	// node reads, and gorm's reflection per column cost more than the
	// statement (BenchmarkOffers).
	nodes := within(tx.db.Model(&models.Node{}).Select(snapshotNodeColumns), "id").Order("id")
	if scope.SkipLocked && s.Dialect == Postgres {
		nodes = nodes.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	err := scanEach(nodes, func(r rowScanner) error {
		var n models.Node
		if err := r.Scan(&n.ID, &n.Name, &n.ClusterID, &n.NodePool, &n.Status, &n.AgentVersion, &n.FabricID,
			&n.CPUCores, &n.RAMGb, &n.DiskGb, &n.LeavingAt); err != nil {
			return err
		}
		snap.Nodes = append(snap.Nodes, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if scope.SkipLocked && ids != nil {
		// Only the nodes locked: the others are another transaction's.
		if len(snap.Nodes) == 0 {
			return snap, nil
		}
		ids = make([]string, len(snap.Nodes))
		for i, n := range snap.Nodes {
			ids[i] = n.ID
		}
	}
	err = scanEach(within(tx.db.Model(&models.GPU{}).Select(snapshotGPUColumns), "node_id").Order("node_id, idx"), func(r rowScanner) error {
		var g models.GPU
		if err := r.Scan(&g.ID, &g.NodeID, &g.Index, &g.Address, &g.ModelID, &g.Health, &g.FailedReason, &g.HolderVMID); err != nil {
			return err
		}
		snap.GPUs = append(snap.GPUs, g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	q := hostShareHolders(tx.db).Select("id, node_id, cpu_cores, ram_gb, disk_size_gb")
	if err := within(q, "node_id").Find(&snap.HostShares).Error; err != nil {
		return nil, err
	}
	if scope.Workloads {
		q := tx.db.Model(&models.VM{}).
			Select("id, node_id, organization_id, compute_class, price_per_hour_cents, created_at").
			Where("status IN ? AND node_id IS NOT NULL", models.HoldingStatuses).Order("id")
		if err := within(q, "node_id").Find(&snap.Workloads).Error; err != nil {
			return nil, err
		}
	}
	return snap, s.snapshotFabrics(tx, snap, scope)
}

func (s *Store) snapshotFabrics(tx *Txn, snap *Snapshot, scope SnapshotScope) error {
	var fids []string
	for _, n := range snap.Nodes {
		if n.FabricID != nil && !slices.Contains(fids, *n.FabricID) {
			fids = append(fids, *n.FabricID)
		}
	}
	if len(fids) == 0 {
		return nil
	}
	slices.Sort(fids) // lock order: by id
	q := tx.db.Where("id IN ?", fids).Order("id")
	if scope.LockFabrics {
		q = s.forUpdate(q)
	}
	if err := q.Find(&snap.Fabrics).Error; err != nil {
		return err
	}
	if !scope.AddressHolders {
		return nil
	}
	return tx.db.Table("vms AS v").Select("v.id AS id, n.fabric_id AS fabric_id").
		Joins("JOIN nodes AS n ON n.id = v.node_id").
		Joins("JOIN organizations AS o ON o.id = v.organization_id").
		Where("v.capability_tier = ? AND "+holdingV+" AND o.infiniband_enabled = ? AND n.fabric_id IN ?",
			models.TierPod, models.HoldingStatuses, true, fids).
		Order("v.id").Find(&snap.AddressHolders).Error
}

// ReadSnapshot reads a Snapshot of scope outside any placing transaction,
// as one consistent view that blocks no writer: a read-only REPEATABLE
// READ transaction on PostgreSQL, a deferred (reading) transaction on
// SQLite, whose WAL lets the writer go on beside it. Nothing is locked, so
// LockFabrics is ignored. What it shows may be claimed the moment after:
// it answers what could be placed now, never reserves it.
func (s *Store) ReadSnapshot(ctx context.Context, scope SnapshotScope) (*Snapshot, error) {
	scope.LockFabrics = false
	var snap *Snapshot
	if s.Dialect == Postgres {
		err := s.WithContext(ctx).Transaction(func(db *gorm.DB) error {
			var err error
			snap, err = s.Snapshot(&Txn{db: db, st: s}, scope)
			return err
		}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
		return snap, err
	}
	err := s.conn(ctx, func(conn *gorm.DB) error {
		// The DSN makes every BEGIN of database/sql IMMEDIATE (a writer);
		// this one is said by hand, so it only reads.
		if err := conn.Exec("BEGIN DEFERRED").Error; err != nil {
			return err
		}
		var err error
		snap, err = s.Snapshot(&Txn{db: conn, st: s}, scope)
		// It wrote nothing: ending it by rolling back is the same as a
		// commit, and must happen even when the request was cancelled, or
		// the pooled connection would keep the transaction open.
		if end := conn.WithContext(context.WithoutCancel(ctx)).Exec("ROLLBACK").Error; err == nil {
			err = end
		}
		return err
	})
	return snap, err
}

// scanEach runs the query q builds and hands each row to fn.
func scanEach(q *gorm.DB, fn func(rowScanner) error) error {
	rows, err := q.Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
