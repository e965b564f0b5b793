package store

import (
	"context"
	"slices"
	"time"

	"gpugraph/models"
)

// What a node agent is told to run (docs/contract.md#agent). What its
// reports of each workload do is package nodes' to decide; it moves the
// rows with LockVMsOnNode and Apply inside the heartbeat's transaction.

// Assignment is one VM or pod that should run on a node, or be torn down
// there (TearingDown).
type Assignment struct {
	ID          string
	Generation  int
	GPUUUIDs    []string
	GPUIndexes  []int
	Pod         bool
	Image       string
	CPUCores    int
	RAMGb       int
	DiskSizeGb  int
	VolumeGb    int
	Public      bool
	EndpointURL string
	// Action is what the row's generation asks (models.Action*); "" is
	// run.
	Action string
	// TearingDown: the row left the given statuses and its node is to tear
	// it down (a flag on a row in one of them is a fixture's, ignored).
	TearingDown bool
	// Terminated: the row is gone for good; its volume goes with it.
	Terminated bool
	NodeID     string
	// Status and Stage are the row's status and provisioning stage, which
	// decide what a report of it does (the agent is not told them).
	Status models.VMStatus
	Stage  string
	// Volume is the row's volume on this node (models.Volume): its live
	// one, else the one deleted last (a terminated row's, for the agent to
	// delete); nil when it has none here.
	Volume *models.Volume
	// SSHPublicKeys are a VM's keys (its create's), for its runs; none
	// for a pod and for a row being torn down.
	SSHPublicKeys []string
}

// assignmentRow is what Assignments reads of a row.
type assignmentRow struct {
	ID             string
	NodeID         string
	Generation     int
	CapabilityTier string
	ImageURL       string
	CPUCores       int
	RAMGb          int
	DiskSizeGb     int
	VolumeGb       int
	Public         bool
	EndpointURL    string
	TearingDown    bool
	Status         models.VMStatus
	Action         string
	Stage          string
	// GPUUUID and GPUIdx are one GPU it holds; nil when it holds none.
	GPUUUID *string `gorm:"column:gpu_uuid"`
	GPUIdx  *int    `gorm:"column:gpu_idx"`
	// Volume* are its volume on the node; nil when it has none there.
	VolumeID             *string
	VolumeOrganizationID *string
	VolumeSizeGb         *int
	VolumeFresh          *bool
	VolumeCreatedAt      *time.Time
	VolumeDeletedAt      *time.Time
}

// Assignments lists, by id, node nodeID's rows in one of statuses (none
// while the node is removed), and, when withTeardowns, its rows whose
// teardown the node has not reported (deleted and on a removed node too),
// with the UUIDs and indexes of the GPUs they hold.
func (s *Store) Assignments(ctx context.Context, nodeID string, statuses []models.VMStatus, withTeardowns bool) ([]Assignment, error) {
	return s.assignments(ctx, "vms.node_id = ?", nodeID, statuses, withTeardowns)
}

// AssignmentsByName is Assignments of the node named name: none when no
// node has that name.
func (s *Store) AssignmentsByName(ctx context.Context, name string, statuses []models.VMStatus, withTeardowns bool) ([]Assignment, error) {
	return s.assignments(ctx, "nodes.name = ?", name, statuses, withTeardowns)
}

// assignments is Assignments of the node node (a condition on vms or
// nodes, of one value) names.
func (s *Store) assignments(ctx context.Context, node string, arg any, statuses []models.VMStatus, withTeardowns bool) ([]Assignment, error) {
	db := s.WithContext(ctx)
	var rows []assignmentRow
	// A row once per GPU it holds (once when it holds none), by index,
	// with its volume on the node: the GPUs and the volume come with the
	// rows, in the same statement. The volume an agent is to hear of is
	// the row's live one, else the one deleted last (a terminated row's,
	// which the agent deletes once the workload is torn down).
	q := db.Table("vms").
		Select("vms.id, vms.node_id, vms.generation, vms.capability_tier, vms.image_url, vms.cpu_cores, vms.ram_gb, " +
			"vms.disk_size_gb, vms.volume_gb, vms.public, vms.endpoint_url, vms.tearing_down, vms.status, vms.action, " +
			"vms.provisioning_stage AS stage, gpus.uuid AS gpu_uuid, gpus.idx AS gpu_idx, " +
			"volumes.id AS volume_id, volumes.organization_id AS volume_organization_id, volumes.size_gb AS volume_size_gb, " +
			"volumes.fresh AS volume_fresh, volumes.created_at AS volume_created_at, volumes.deleted_at AS volume_deleted_at").
		Joins("JOIN nodes ON nodes.id = vms.node_id").
		Joins("LEFT JOIN gpus ON gpus.holder_vm_id = vms.id AND gpus.node_id = vms.node_id AND gpus.uuid <> ''").
		Joins("LEFT JOIN volumes ON volumes.id = (SELECT v.id FROM volumes v WHERE v.vm_id = vms.id AND v.node_id = vms.node_id " +
			"ORDER BY v.deleted_at IS NULL DESC, v.created_at DESC, v.id DESC LIMIT 1)")
	running := "(vms.status IN ? AND vms.deleted_at IS NULL AND nodes.status <> ?)"
	if withTeardowns {
		q = q.Where(node+" AND ("+running+" OR vms.tearing_down)", arg, statuses, models.NodeRemoved)
	} else {
		q = q.Where(node+" AND "+running, arg, statuses, models.NodeRemoved)
	}
	err := q.Order("vms.id, gpus.idx").Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return []Assignment{}, err
	}
	nodeID := rows[0].NodeID
	// A flag on a row in one of statuses is a fixture's, ignored.
	tearingDown := func(r assignmentRow) bool { return r.TearingDown && !slices.Contains(statuses, r.Status) }
	held, idx := map[string][]string{}, map[string][]int{}
	var uniq []assignmentRow
	var keyed []string
	for _, r := range rows {
		if r.GPUUUID != nil {
			held[r.ID] = append(held[r.ID], *r.GPUUUID)
			idx[r.ID] = append(idx[r.ID], *r.GPUIdx)
		}
		if n := len(uniq); n > 0 && uniq[n-1].ID == r.ID {
			continue
		}
		uniq = append(uniq, r)
		if r.CapabilityTier != models.TierPod && !tearingDown(r) {
			keyed = append(keyed, r.ID)
		}
	}
	// Only a VM that runs has keys to hear of: none is read for pods and
	// teardowns.
	keys, err := sshKeysOf(db, keyed)
	if err != nil {
		return nil, err
	}
	out := make([]Assignment, len(uniq))
	for i, r := range uniq {
		a := Assignment{ID: r.ID, Generation: r.Generation, GPUUUIDs: held[r.ID], GPUIndexes: idx[r.ID],
			Pod: r.CapabilityTier == models.TierPod, Image: r.ImageURL, CPUCores: r.CPUCores, RAMGb: r.RAMGb,
			DiskSizeGb: r.DiskSizeGb, VolumeGb: r.VolumeGb, Public: r.Public, EndpointURL: r.EndpointURL,
			TearingDown: tearingDown(r), Terminated: r.Status == models.VMTerminated, NodeID: nodeID, Action: r.Action,
			Status: r.Status, Stage: r.Stage}
		if r.VolumeID != nil {
			a.Volume = &models.Volume{ID: *r.VolumeID, OrganizationID: *r.VolumeOrganizationID, VMID: r.ID, NodeID: nodeID,
				SizeGb: *r.VolumeSizeGb, Fresh: *r.VolumeFresh, CreatedAt: *r.VolumeCreatedAt, DeletedAt: r.VolumeDeletedAt}
		}
		if !a.Pod && !a.TearingDown {
			a.SSHPublicKeys = keys[r.ID]
		}
		if a.GPUUUIDs == nil {
			a.GPUUUIDs = []string{}
		}
		out[i] = a
	}
	return out, nil
}
