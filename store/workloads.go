package store

import (
	"context"

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
	// Action is the row's pending restart action (reboot, recreate) for
	// its generation; "" is run.
	Action      string
	TearingDown bool
	// Terminated: the row is gone for good; its volume goes with it.
	Terminated bool
	NodeID     string
	// Volume is the row's volume on this node (models.Volume): its live
	// one, else the one deleted last (a terminated row's, for the agent to
	// delete); nil when it has none here.
	Volume *models.Volume
}

// assignmentRow is what Assignments reads of a row.
type assignmentRow struct {
	ID             string
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
}

// Assignments lists, by id, node nodeID's rows in one of statuses, and its
// rows whose teardown the node has not reported, with the UUIDs and
// indexes of the GPUs they hold; none while the node is removed.
func (s *Store) Assignments(ctx context.Context, nodeID string, statuses []models.VMStatus) ([]Assignment, error) {
	db := s.WithContext(ctx)
	var rows []assignmentRow
	err := db.Table("vms").
		Select("vms.id, vms.generation, vms.capability_tier, vms.image_url, vms.cpu_cores, vms.ram_gb, "+
			"vms.disk_size_gb, vms.volume_gb, vms.public, vms.endpoint_url, vms.tearing_down, vms.status").
		Joins("JOIN nodes ON nodes.id = vms.node_id").
		Where("vms.node_id = ? AND (vms.status IN ? OR vms.tearing_down) AND vms.deleted_at IS NULL AND nodes.status <> ?",
			nodeID, statuses, models.NodeRemoved).
		Order("vms.id").Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return []Assignment{}, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var gpus []struct {
		HolderVMID string
		UUID       string
		Idx        int
	}
	if err := db.Table("gpus").Select("holder_vm_id, uuid, idx").
		Where("node_id = ? AND holder_vm_id IN ? AND uuid <> ''", nodeID, ids).
		Order("idx").Scan(&gpus).Error; err != nil {
		return nil, err
	}
	held, idx := map[string][]string{}, map[string][]int{}
	for _, g := range gpus {
		held[g.HolderVMID] = append(held[g.HolderVMID], g.UUID)
		idx[g.HolderVMID] = append(idx[g.HolderVMID], g.Idx)
	}
	vols, err := nodeVolumes(db, nodeID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Assignment, len(rows))
	for i, r := range rows {
		if v, ok := vols[r.ID]; ok {
			out[i].Volume = &v
		}
		out[i] = Assignment{Volume: out[i].Volume, ID: r.ID, Generation: r.Generation, GPUUUIDs: held[r.ID], GPUIndexes: idx[r.ID],
			Pod: r.CapabilityTier == models.TierPod, Image: r.ImageURL, CPUCores: r.CPUCores, RAMGb: r.RAMGb,
			DiskSizeGb: r.DiskSizeGb, VolumeGb: r.VolumeGb, Public: r.Public, EndpointURL: r.EndpointURL,
			TearingDown: r.TearingDown, Terminated: r.Status == models.VMTerminated, NodeID: nodeID}
		if out[i].GPUUUIDs == nil {
			out[i].GPUUUIDs = []string{}
		}
	}
	return out, nil
}
