package store

import (
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// CandidateQuery is what a new VM or pod asks of a node, for Candidates.
type CandidateQuery struct {
	GPUModelID string
	GPUs       int
	// HostShare is a plain VM's: the node's CPU, RAM and disk not held by
	// other plain VMs must hold CPUCores, RAMGb and DiskGb. A pod holds
	// none (and its CPU and RAM add nothing to the order).
	HostShare               bool
	CPUCores, RAMGb, DiskGb int
	// ClusterID and NodePool keep the candidates within them (nil: any).
	ClusterID, NodePool *string
	// Exclude leaves these nodes out (ones a create already lost).
	Exclude []string
	Limit   int
}

// Candidates answers the ids of at most q.Limit online nodes that have
// q.GPUs healthy, free GPUs of q.GPUModelID (and, with q.HostShare, the
// free CPU, RAM and disk), the most allocated first: one aggregate
// statement, so a create reads a snapshot of a few nodes instead of the
// whole fleet.
//
// The order is placement.MostAllocated's, computed by the database in the
// same IEEE double arithmetic, ties by name (byte order on both engines):
// the fraction of the node's healthy GPUs held once the request is placed,
// then the mean of its CPU and RAM fractions. These are the conditions of
// placement's NodeOnline, FreeGPUs and HostResources filters, no more, so
// every node placement would pass is a candidate and, of the candidates,
// the first placement passes is the one Place picks over every node
// (compute's TestCandidatesAgreeWithPlace holds both). The filters that
// need Go (agent versions, InfiniBand addresses) run on the snapshot of
// the candidates.
//
// Nothing is locked: what it shows may change before the caller locks the
// node it chose, which checks it again.
func (s *Store) Candidates(tx *Txn, q CandidateQuery) ([]string, error) {
	healthy := models.GPUHealthy
	gpus := tx.db.Table("gpus").Select(
		"node_id, SUM(CASE WHEN health = ? THEN 1 ELSE 0 END) AS healthy, "+
			"SUM(CASE WHEN health = ? AND holder_vm_id IS NOT NULL THEN 1 ELSE 0 END) AS held, "+
			"SUM(CASE WHEN health = ? AND holder_vm_id IS NULL AND model_id = ? THEN 1 ELSE 0 END) AS free",
		healthy, healthy, healthy, q.GPUModelID).Group("node_id")
	shares := hostShareHolders(tx.db).
		Select("node_id, SUM(cpu_cores) AS cpu, SUM(ram_gb) AS ram, SUM(disk_size_gb) AS disk").Group("node_id")
	needCPU, needRAM := 0, 0
	if q.HostShare {
		needCPU, needRAM = q.CPUCores, q.RAMGb
	}
	// The casts make every division a double's, as Go's float64 is; x/1
	// and 0+x are exact, so one dimension's mean is its fraction.
	nodes := tx.db.Table("nodes AS n").Select(
		"n.id, n.name, "+
			"CASE WHEN COALESCE(g.healthy, 0) > 0 THEN CAST(COALESCE(g.held, 0) + ? AS DOUBLE PRECISION) / g.healthy ELSE 0 END AS gpu_score, "+
			"CASE WHEN n.cpu_cores > 0 AND n.ram_gb > 0 THEN "+
			"(CAST(COALESCE(h.cpu, 0) + ? AS DOUBLE PRECISION) / n.cpu_cores + CAST(COALESCE(h.ram, 0) + ? AS DOUBLE PRECISION) / n.ram_gb) / 2 "+
			"WHEN n.cpu_cores > 0 THEN CAST(COALESCE(h.cpu, 0) + ? AS DOUBLE PRECISION) / n.cpu_cores "+
			"WHEN n.ram_gb > 0 THEN CAST(COALESCE(h.ram, 0) + ? AS DOUBLE PRECISION) / n.ram_gb "+
			"ELSE 0 END AS host_score",
		max(q.GPUs, 0), needCPU, needRAM, needCPU, needRAM).
		Joins("LEFT JOIN (?) AS g ON g.node_id = n.id", gpus).
		Joins("LEFT JOIN (?) AS h ON h.node_id = n.id", shares).
		Where("n.status = ?", models.NodeOnline)
	if q.GPUs > 0 {
		nodes = nodes.Where("COALESCE(g.free, 0) >= ?", q.GPUs)
	}
	if q.HostShare {
		nodes = nodes.Where("n.disk_gb - COALESCE(h.disk, 0) >= ? AND n.ram_gb - COALESCE(h.ram, 0) >= ? AND n.cpu_cores - COALESCE(h.cpu, 0) >= ?",
			q.DiskGb, q.RAMGb, q.CPUCores)
	}
	if q.ClusterID != nil {
		nodes = nodes.Where("n.cluster_id = ?", *q.ClusterID)
	}
	if q.NodePool != nil {
		nodes = nodes.Where("n.node_pool = ?", *q.NodePool)
	}
	if len(q.Exclude) > 0 {
		nodes = nodes.Where("n.id NOT IN ?", q.Exclude)
	}
	ids := []string{}
	err := tx.db.Table("(?) AS c", nodes).Select("id").
		Order("gpu_score DESC, host_score DESC, name").Limit(max(q.Limit, 1)).
		Scan(&ids).Error
	return ids, err
}

// TryLockNode locks node id for the transaction unless another holds its
// lock: FOR UPDATE SKIP LOCKED on PostgreSQL, answering false at once
// instead of waiting. A create passes over a node another create (or a
// restart, stop, the scheduler) is claiming rather than queueing behind
// it, so concurrent creates spread over the best nodes instead of all
// waiting for the one they all chose. It never waits, so it cannot
// deadlock, whatever locks the transaction holds. On SQLite the
// transaction already holds the one write lock: true when the node exists.
func (s *Store) TryLockNode(tx *Txn, id string) (bool, error) {
	q := tx.db.Model(&models.Node{}).Select("id").Where("id = ?", id)
	if s.Dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	var ids []string
	if err := q.Scan(&ids).Error; err != nil {
		return false, err
	}
	return len(ids) == 1, nil
}
