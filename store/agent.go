package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// The node agent's reports (docs/contract.md#agent). Each report runs in one transaction
// that locks its node's row first, so two reports of one node, or a report
// and the sweep, never interleave; within it VMs are written before GPUs,
// the order the sweep's expiry takes too.

// GPU failedReasons the store writes.
const (
	// FailedVanished is the failedReason of a GPU its node stopped reporting.
	FailedVanished = "vanished from inventory"
	// FailedUnspecified is the failedReason of a GPU reported failed
	// without a reason.
	FailedUnspecified = "reported failed by the node agent"
)

// Inventory is a node's full report, sent when its agent starts.
type Inventory struct {
	NodeName     string
	ClusterID    string // "" leaves a known node's cluster as it is
	AgentVersion string
	// Host figures; zero leaves a known node's figure as it is (the agent
	// could not read it).
	CPUCores, RAMGb, DiskGb int
	GPUs                    []InventoryGPU
	// Sequence must be above the node's last report's (advanceSequence);
	// 0 is a report without one.
	Sequence int64
}

// InventoryGPU is one GPU of an Inventory.
type InventoryGPU struct {
	Index        int
	UUID         string
	Address      string // "" when NVML could not read it
	Name         string // NVML product name; "" when NVML could not read it
	MemoryBytes  uint64
	Health       models.GPUHealth
	FailedReason string
}

// Heartbeat is a node's periodic report.
type Heartbeat struct {
	NodeName     string
	AgentVersion string // "" leaves the stored one
	GPUs         []HeartbeatGPU
	// Workloads is what the agent says of the VMs and pods it was told to
	// run (applyWorkloadReports).
	Workloads []WorkloadReport
	// Sequence: as Inventory's.
	Sequence int64
}

// HeartbeatGPU is one GPU's live state in a Heartbeat.
type HeartbeatGPU struct {
	UUID            string
	Health          models.GPUHealth
	FailedReason    string
	Utilization     int
	MemoryUsedBytes int64
}

// Report is what the store made of a report.
type Report struct {
	NodeID  string
	Status  models.NodeStatus
	Created bool  // this report registered the node
	Resumed int64 // VMs and pods resumed from node_lost
	// JobLost are the pods this heartbeat's workload reports interrupted
	// (models.PodJobLost), for the platform to re-submit.
	JobLost []LostJob
}

// ErrUnknownNode answers a heartbeat from a node no inventory registered.
var ErrUnknownNode = errors.New("node is not registered")

// UnknownGPUError answers a heartbeat naming a GPU its node's inventory
// does not hold.
type UnknownGPUError struct{ UUID string }

func (e *UnknownGPUError) Error() string { return "GPU " + e.UUID + " is not in the node's inventory" }

// GPUElsewhereError answers an inventory naming a GPU another node holds.
type GPUElsewhereError struct{ UUID, NodeName string }

func (e *GPUElsewhereError) Error() string {
	return "GPU " + e.UUID + " is registered on node " + e.NodeName
}

// RegisterInventory files a node's inventory: it registers the node when
// its name is new, else updates it, reconciles its GPUs by UUID, brings it
// online (a removed node stays removed) and resumes what it lost.
func (s *Store) RegisterInventory(ctx context.Context, inv Inventory, now time.Time) (Report, error) {
	var rep Report
	var err error
	// Two replicas registering one new node at once: the loser's insert
	// hits the unique name (or model id) and, replayed, finds the winner's row.
	for attempt := 0; attempt < 3; attempt++ {
		err = s.tx(ctx, func(tx *gorm.DB) error {
			var e error
			rep, e = s.registerInventory(tx, inv, now)
			return e
		})
		if !IsUniqueViolation(err) {
			break
		}
	}
	return rep, err
}

func (s *Store) registerInventory(tx *gorm.DB, inv Inventory, now time.Time) (Report, error) {
	node, err := s.lockNodeByName(tx, inv.NodeName)
	if err != nil {
		return Report{}, err
	}
	rep := Report{}
	by := models.Actor{Kind: models.ActorAgent, ID: inv.NodeName}
	var evs []*models.NodeEvent
	if node == nil {
		node, err = createNode(tx, inv, now)
		if err != nil {
			return Report{}, err
		}
		rep.Created = true
		// A node's first status has no "from".
		online := models.NodeOnline
		evs = append(evs, &models.NodeEvent{NodeID: node.ID, Kind: models.NodeEventStatus, ToStatus: &online,
			ActorKind: by.Kind, ActorID: by.ID, At: now})
		if err := advanceSequence(tx, node.ID, inv.Sequence); err != nil {
			return Report{}, err
		}
	} else {
		if err := advanceSequence(tx, node.ID, inv.Sequence); err != nil {
			return Report{}, err
		}
		if err := checkShrink(tx, node, inv); err != nil {
			return Report{}, err
		}
		set := map[string]any{"agent_version": inv.AgentVersion, "last_heartbeat_at": now}
		if node.Status != models.NodeRemoved {
			if node.Status != models.NodeOnline {
				evs = append(evs, models.NodeStatusEvent(node.ID, node.Status, models.NodeOnline, by, now))
			}
			set["status"] = models.NodeOnline
			node.Status = models.NodeOnline
		}
		if inv.ClusterID != "" {
			set["cluster_id"] = inv.ClusterID
		}
		for col, v := range map[string]int{"cpu_cores": inv.CPUCores, "ram_gb": inv.RAMGb, "disk_gb": inv.DiskGb} {
			if v > 0 {
				set[col] = v
			}
		}
		if err := tx.Table("nodes").Where("id = ?", node.ID).Updates(set).Error; err != nil {
			return Report{}, err
		}
	}
	rep.NodeID, rep.Status = node.ID, node.Status
	if node.Status == models.NodeOnline {
		if rep.Resumed, err = s.resumeNodeLost(tx, node, now); err != nil {
			return Report{}, err
		}
	}
	failed, err := reconcileGPUs(tx, node.ID, inv.GPUs, by, now)
	if err != nil {
		return Report{}, err
	}
	return rep, s.appendNodeEvents(tx, append(evs, failed...))
}

// lockReportedRows locks, before the node's row, the VM rows a heartbeat
// may move: those its workload reports name and those the node's loss
// interrupted. Restart, stop and terminate lock a VM row before its node's
// (store/restart.go's lock order); a heartbeat that held the node while it
// waited for a VM would deadlock with them. Rows that become one of these
// after this read are left to the next heartbeat.
func (s *Store) lockReportedRows(tx *gorm.DB, hb Heartbeat) error {
	ids := make([]string, 0, len(hb.Workloads))
	for _, w := range hb.Workloads {
		ids = append(ids, w.ID)
	}
	back := models.Step(models.NodeBack)
	q := tx.Table("vms").Select("id").
		Where("node_id IN (SELECT id FROM nodes WHERE name = ?)", hb.NodeName)
	if len(ids) > 0 {
		q = q.Where("id IN ? OR (status IN ? AND status_reason = ?)", ids, back.From, back.FromReason)
	} else {
		q = q.Where("status IN ? AND status_reason = ?", back.From, back.FromReason)
	}
	var locked []string
	return s.forUpdate(q.Order("id")).Scan(&locked).Error
}

func (s *Store) lockNodeByName(tx *gorm.DB, name string) (*models.Node, error) {
	var nodes []models.Node
	if err := s.forUpdate(tx).Where("name = ?", name).Limit(1).Find(&nodes).Error; err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	return &nodes[0], nil
}

// createNode registers a node under its name as id, or the name and a
// random suffix when another node already has that id.
func createNode(tx *gorm.DB, inv Inventory, now time.Time) (*models.Node, error) {
	id := inv.NodeName
	var taken int64
	if err := tx.Table("nodes").Where("id = ?", id).Count(&taken).Error; err != nil {
		return nil, err
	}
	if taken > 0 {
		id += "-" + randomHex(3)
	}
	n := &models.Node{
		ID:              id,
		Name:            inv.NodeName,
		ClusterID:       inv.ClusterID,
		NodePool:        "default",
		Status:          models.NodeOnline,
		AgentVersion:    inv.AgentVersion,
		CPUCores:        inv.CPUCores,
		RAMGb:           inv.RAMGb,
		DiskGb:          inv.DiskGb,
		LastHeartbeatAt: &now,
	}
	return n, tx.Create(n).Error
}

// resumeNodeLost applies models.NodeBack to the node's VMs and pods: what
// the sweep interrupted resumes.
func (s *Store) resumeNodeLost(tx *gorm.DB, node *models.Node, now time.Time) (int64, error) {
	back := models.Step(models.NodeBack)
	rows, err := s.lockRows(tx.Where("node_id = ? AND status IN ? AND status_reason = ?", node.ID, back.From, back.FromReason))
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return s.applyToRows(tx, rows, Change{Transition: models.NodeBack,
		Actor: models.Actor{Kind: models.ActorAgent, ID: node.Name}}, now)
}

// RecordHeartbeat files a heartbeat: the node's last heartbeat and agent
// version, GPU failures, utilization and memory samples; a node that was
// offline comes back online and its node_lost VMs and pods resume.
func (s *Store) RecordHeartbeat(ctx context.Context, hb Heartbeat, now time.Time) (Report, error) {
	var rep Report
	err := s.tx(ctx, func(tx *gorm.DB) error {
		var e error
		rep, e = s.recordHeartbeat(tx, hb, now)
		return e
	})
	return rep, err
}

func (s *Store) recordHeartbeat(tx *gorm.DB, hb Heartbeat, now time.Time) (Report, error) {
	if err := s.lockReportedRows(tx, hb); err != nil {
		return Report{}, err
	}
	node, err := s.lockNodeByName(tx, hb.NodeName)
	if err != nil {
		return Report{}, err
	}
	if node == nil {
		return Report{}, ErrUnknownNode
	}
	if err := advanceSequence(tx, node.ID, hb.Sequence); err != nil {
		return Report{}, err
	}
	var have []struct {
		ID     string
		UUID   string
		Health models.GPUHealth
	}
	if err := tx.Table("gpus").Select("id, uuid, health").Where("node_id = ?", node.ID).Scan(&have).Error; err != nil {
		return Report{}, err
	}
	ids := make(map[string]string, len(have))
	healthy := make(map[string]bool, len(have))
	for _, g := range have {
		if g.UUID != "" {
			ids[g.UUID] = g.ID
			healthy[g.ID] = g.Health == models.GPUHealthy
		}
	}
	for _, g := range hb.GPUs {
		if ids[g.UUID] == "" {
			return Report{}, &UnknownGPUError{UUID: g.UUID}
		}
	}

	by := models.Actor{Kind: models.ActorAgent, ID: node.Name}
	var evs []*models.NodeEvent
	set := map[string]any{"last_heartbeat_at": now}
	if node.Status != models.NodeRemoved {
		if node.Status != models.NodeOnline {
			evs = append(evs, models.NodeStatusEvent(node.ID, node.Status, models.NodeOnline, by, now))
		}
		node.Status = models.NodeOnline
		set["status"] = models.NodeOnline
	}
	if hb.AgentVersion != "" {
		set["agent_version"] = hb.AgentVersion
	}
	if err := tx.Table("nodes").Where("id = ?", node.ID).Updates(set).Error; err != nil {
		return Report{}, err
	}
	rep := Report{NodeID: node.ID, Status: node.Status}
	if node.Status == models.NodeOnline {
		if rep.Resumed, err = s.resumeNodeLost(tx, node, now); err != nil {
			return Report{}, err
		}
	}
	if rep.JobLost, err = s.applyWorkloadReports(tx, node, hb.Workloads, now); err != nil {
		return Report{}, err
	}
	if err := writeSamples(tx, hb.GPUs, ids, now); err != nil {
		return Report{}, err
	}
	for _, g := range hb.GPUs {
		id := ids[g.UUID]
		if g.Health == models.GPUFailed && healthy[id] {
			ev, err := failGPU(tx, node.ID, id, g.FailedReason, by, now)
			if err != nil {
				return Report{}, err
			}
			if ev != nil {
				evs = append(evs, ev)
			}
		}
	}
	// The failure is in the log in the transaction that writes it: a
	// subscriber sees it when this heartbeat commits.
	return rep, s.appendNodeEvents(tx, evs)
}

// writeSamples stores every GPU's latest utilization and memory in use in
// one statement. The SQL is fixed text; only placeholders vary in number.
func writeSamples(tx *gorm.DB, gpus []HeartbeatGPU, ids map[string]string, now time.Time) error {
	if len(gpus) == 0 {
		return nil
	}
	util := make([]any, 0, 2*len(gpus))
	mem := make([]any, 0, 2*len(gpus))
	in := make([]string, 0, len(gpus))
	utilCase, memCase := "", ""
	for _, g := range gpus {
		id := ids[g.UUID]
		utilCase += " WHEN ? THEN CAST(? AS integer)"
		memCase += " WHEN ? THEN CAST(? AS bigint)"
		util = append(util, id, g.Utilization)
		mem = append(mem, id, g.MemoryUsedBytes)
		in = append(in, id)
	}
	sql := "UPDATE gpus SET utilization = CASE id" + utilCase + " END, memory_used_bytes = CASE id" + memCase +
		" END, sampled_at = ? WHERE id IN ?"
	args := append(append(util, mem...), now, in)
	return tx.Exec(sql, args...).Error
}

// failGPU marks a healthy GPU failed and answers its event (nil when it
// was not healthy). A failed GPU is never healed by a report: the first
// reason stays until an operator clears it.
func failGPU(tx *gorm.DB, nodeID, id, reason string, by models.Actor, now time.Time) (*models.NodeEvent, error) {
	reason = failedReason(reason)
	res := tx.Exec("UPDATE gpus SET health = ?, failed_reason = ? WHERE id = ? AND health = ?",
		models.GPUFailed, reason, id, models.GPUHealthy)
	if res.Error != nil || res.RowsAffected == 0 {
		return nil, res.Error
	}
	return models.GPUFailedEvent(nodeID, id, reason, by, now), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// errNoFreeID ends a probe for a free id that found none.
var errNoFreeID = errors.New("no free id")
