package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// Node rows: the node agent's reports (a node's row, its host share), the
// heartbeat sweep, the fleet operator's leavingAt, the candidates a
// placement chooses among, and the reads behind the API's lists and
// loaders. The GPUs on a node are gpus.go's.

// LockNodeByName locks and reads the node named name; nil when there is
// none.
func (s *Store) LockNodeByName(tx *Txn, name string) (*models.Node, error) {
	var nodes []models.Node
	if err := s.forUpdate(tx.db).Where("name = ?", name).Limit(1).Find(&nodes).Error; err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	return &nodes[0], nil
}

// NodeIDTaken reports whether a node (of any name) has the id id.
func (s *Store) NodeIDTaken(tx *Txn, id string) (bool, error) {
	var taken int64
	if err := tx.db.Table("nodes").Where("id = ?", id).Count(&taken).Error; err != nil {
		return false, err
	}
	return taken > 0, nil
}

// CreateNode inserts n. A name or id another node has fails with a unique
// violation (IsUniqueViolation), which the caller replays.
func (s *Store) CreateNode(tx *Txn, n *models.Node) error {
	return tx.db.Create(n).Error
}

// NodeUpdate is what a report writes to its node's row. LastHeartbeatAt is
// always written; every other field is written only when it is not zero.
type NodeUpdate struct {
	LastHeartbeatAt         time.Time
	Status                  models.NodeStatus
	AgentVersion, ClusterID string
	CPUCores, RAMGb, DiskGb int
}

// UpdateNode writes u to node id, which the caller locked, in one
// statement.
func (s *Store) UpdateNode(tx *Txn, id string, u NodeUpdate) error {
	// Only a report writes here, so the node has an agent from now on.
	set := map[string]any{"last_heartbeat_at": u.LastHeartbeatAt, "agent_reported_at": u.LastHeartbeatAt}
	if u.Status != "" {
		set["status"] = u.Status
	}
	for col, v := range map[string]string{"agent_version": u.AgentVersion, "cluster_id": u.ClusterID} {
		if v != "" {
			set[col] = v
		}
	}
	for col, v := range map[string]int{"cpu_cores": u.CPUCores, "ram_gb": u.RAMGb, "disk_gb": u.DiskGb} {
		if v != 0 {
			set[col] = v
		}
	}
	return tx.db.Table("nodes").Where("id = ?", id).Updates(set).Error
}

// AdvanceReportSequence records seq as node nodeID's last report sequence
// when it is above the one recorded (advanced), and otherwise answers the
// recorded one, last, writing nothing.
func (s *Store) AdvanceReportSequence(tx *Txn, nodeID string, seq int64) (advanced bool, last int64, err error) {
	res := tx.db.Exec("UPDATE nodes SET report_sequence = ? WHERE id = ? AND report_sequence < ?", seq, nodeID, seq)
	if res.Error != nil {
		return false, 0, res.Error
	}
	if res.RowsAffected == 1 {
		return true, seq, nil
	}
	var recorded []int64
	if err := tx.db.Table("nodes").Where("id = ?", nodeID).Pluck("report_sequence", &recorded).Error; err != nil {
		return false, 0, err
	}
	if len(recorded) == 0 {
		return false, 0, errNoNode
	}
	return false, recorded[0], nil
}

// errNoNode says that a node a transaction locked is not there: a caller's
// bug, never a report's fault.
var errNoNode = errors.New("store: the node is not there")

// HeldShare is one VM or pod placed on a node, with the host share it
// holds there.
type HeldShare struct {
	ID             string
	CapabilityTier string
	CPUCores       int
	RAMGb          int
	DiskSizeGb     int
}

// HeldShares reads, by id, the VMs and pods on node nodeID in one of
// statuses or in a teardown that holds (tearingDownHolds: on a node an
// agent reports for, not handed over); other deleted rows are left out.
func (s *Store) HeldShares(tx *Txn, nodeID string, statuses []models.VMStatus) ([]HeldShare, error) {
	var held []HeldShare
	err := tx.db.Table("vms").Select("id, capability_tier, cpu_cores, ram_gb, disk_size_gb").
		Where("node_id = ? AND ((status IN ? AND deleted_at IS NULL) OR "+tearingDownHolds("vms")+")", nodeID, statuses).
		Order("id").Find(&held).Error
	return held, err
}

// NodeByID reads one node; nil when there is none.
func (s *Store) NodeByID(ctx context.Context, id string) (*models.Node, error) {
	var n models.Node
	err := s.WithContext(ctx).Where("id = ?", id).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	return &n, err
}

// Nodes lists nodes by name, optionally only those in the given statuses.
func (s *Store) Nodes(ctx context.Context, statuses []models.NodeStatus) ([]*models.Node, error) {
	var out []*models.Node
	return out, s.nodeScope(ctx, statuses).Order("name, id").Find(&out).Error
}

// NodesByIDs reads the nodes with these ids: of their columns, cols (nil:
// all; the id always).
func (s *Store) NodesByIDs(ctx context.Context, ids []string, cols Columns) ([]*models.Node, error) {
	cond, arg := s.in("id", ids)
	return nodes.read(ctx, s, cols, nil, cond, arg)
}

// NodeKey names a node as a pod does: by cluster and name.
type NodeKey struct{ ClusterID, Name string }

// NodesByClusterNames reads the nodes named by these keys. Node names are
// unique across clusters, so it reads by name; the caller matches the
// cluster (a pod naming a node of another cluster finds none).
func (s *Store) NodesByClusterNames(ctx context.Context, keys []NodeKey, cols Columns) ([]*models.Node, error) {
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		names = append(names, k.Name)
	}
	cond, arg := s.in("name", names)
	return nodes.read(ctx, s, cols, []string{"name", "cluster_id"}, cond, arg)
}

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
// statement, so a create locks and reads a few nodes instead of reading
// the whole fleet.
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
		Find(&ids).Error
	return ids, err
}

// LockNodeByID locks and reads node id; nil when there is none.
func (s *Store) LockNodeByID(tx *Txn, id string) (*models.Node, error) {
	var n models.Node
	err := s.forUpdate(tx.db.Where("id = ?", id)).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// SetNodeLeavingAt writes the leavingAt of node (which the caller locked);
// nil clears it. A change is a node event by by.
func (s *Store) SetNodeLeavingAt(tx *Txn, node *models.Node, at *time.Time, by models.Actor, now time.Time) error {
	if err := tx.db.Model(&models.Node{}).Where("id = ?", node.ID).Update("leaving_at", at).Error; err != nil {
		return err
	}
	if sameInstant(node.LeavingAt, at) {
		return nil
	}
	return s.appendNodeEvents(tx.db, []*models.NodeEvent{{NodeID: node.ID, Kind: models.NodeEventLeavingAt,
		FromLeavingAt: node.LeavingAt, ToLeavingAt: at, ActorKind: by.Kind, ActorID: by.ID, At: now}})
}

func sameInstant(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// NodePage lists nodes by name, limit of them from offset, with how many
// match in all.
func (s *Store) NodePage(ctx context.Context, statuses []models.NodeStatus, offset, limit int) ([]*models.Node, int64, error) {
	q := s.nodeScope(ctx, statuses)
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	out := []*models.Node{}
	return out, total, q.Order("name, id").Offset(offset).Limit(limit).Find(&out).Error
}

func (s *Store) nodeScope(ctx context.Context, statuses []models.NodeStatus) *gorm.DB {
	q := s.WithContext(ctx).Model(&models.Node{})
	if len(statuses) > 0 {
		q = q.Where("status IN ?", statuses)
	}
	return q
}

// NodeSort is the nodes' keyset order: by name.
var NodeSort = []SortKey{{Column: "name"}}

// NodesAfter lists nodes by name after a (nil: from the first), at most
// limit, and whether more follow; total counts every match when count.
func (s *Store) NodesAfter(ctx context.Context, statuses []models.NodeStatus, a *After, limit int, count bool) ([]*models.Node, bool, int64, error) {
	out := []*models.Node{}
	return keysetPage(s.nodeScope(ctx, statuses), NodeSort, a, limit, count, &out)
}

// Node reads a node without locking it; nil when there is none.
func (s *Store) Node(tx *Txn, id string) (*models.Node, error) {
	var n models.Node
	err := tx.db.Where("id = ?", id).Take(&n).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// LockNode locks node n and reloads it into n, so the caller decides on
// what the lock shows.
func (s *Store) LockNode(tx *Txn, n *models.Node) error {
	return s.forUpdate(tx.db.Where("id = ?", n.ID)).Take(n).Error
}

// LockNodes locks the nodes with these ids, in id order (the caller sorts
// them: lock order).
func (s *Store) LockNodes(tx *Txn, ids []string) error {
	var locked []models.Node
	return s.forUpdate(tx.db.Where("id IN ?", ids).Order("id")).Find(&locked).Error
}

// LockSilentNodes locks, by id, the nodes in status whose last heartbeat
// is before before, and answers their ids. Nodes that never reported (no
// lastHeartbeatAt) are left out; so are, when withRowsIn is not empty,
// nodes on which no VM or pod is in one of those statuses.
func (s *Store) LockSilentNodes(tx *Txn, status models.NodeStatus, before time.Time, withRowsIn []models.VMStatus) ([]string, error) {
	q := tx.db.Table("nodes").Select("id").
		Where("status = ? AND last_heartbeat_at IS NOT NULL AND last_heartbeat_at < ?", status, before)
	if len(withRowsIn) > 0 {
		q = q.Where("EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND vms.status IN ?)", withRowsIn)
	}
	var ids []string
	err := s.forUpdate(q.Order("id")).Find(&ids).Error
	return ids, err
}

// SetNodesStatus writes status to the nodes ids, which the caller locked,
// and answers how many were not in it already.
func (s *Store) SetNodesStatus(tx *Txn, ids []string, status models.NodeStatus) (int64, error) {
	res := tx.db.Model(&models.Node{}).Where("id IN ? AND status <> ?", ids, status).Update("status", status)
	return res.RowsAffected, res.Error
}

// NodeState is a node's id and status.
type NodeState struct {
	ID     string
	Status models.NodeStatus
}

// LockNodesLeft locks and reads, by id, the nodes not removed yet whose
// leavingAt is at or before at.
func (s *Store) LockNodesLeft(tx *Txn, at time.Time) ([]NodeState, error) {
	var left []NodeState
	err := s.forUpdate(tx.db.Table("nodes").Select("id, status").
		Where("status <> ? AND leaving_at IS NOT NULL AND leaving_at <= ?", models.NodeRemoved, at).Order("id")).
		Find(&left).Error
	return left, err
}

// NodesLeavingAfter reads, by id and without locks, the nodes not removed
// whose leavingAt is after at and on which a VM or pod is in one of
// statuses.
func (s *Store) NodesLeavingAfter(tx *Txn, at time.Time, statuses []models.VMStatus) ([]models.Node, error) {
	var ahead []models.Node
	err := tx.db.Where("status <> ? AND leaving_at IS NOT NULL AND leaving_at > ?", models.NodeRemoved, at).
		Where("EXISTS (SELECT 1 FROM vms WHERE vms.node_id = nodes.id AND vms.status IN ? AND vms.deleted_at IS NULL)", statuses).
		Order("id").Find(&ahead).Error
	return ahead, err
}
