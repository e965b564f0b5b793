package compute

import (
	"slices"

	"gorm.io/gorm"

	"gpugraph/models"
	"gpugraph/placement"
	"gpugraph/store"
)

// holding lists the statuses in which a VM or pod holds what it was given.
var holding = []models.VMStatus{models.VMRunning, models.VMDeploying, models.VMInterrupted}

// snapshotter reads placement's view of nodes inside the transaction.
type snapshotter struct {
	st *store.Store
	tx *gorm.DB
	// needIB: the request is a pod of an InfiniBand-enabled organization, so
	// the holders of fabric addresses matter.
	needIB bool
}

// load reads the nodes with these ids (all nodes when ids is nil) with
// their GPUs, the CPU/RAM/disk plain VMs hold there and, when the request
// needs an address, their fabrics and the pods holding addresses. With
// lockFabrics the fabric rows are read FOR UPDATE before their holders are
// counted (the node rows are locked by the caller). Nodes come back by id.
func (s *snapshotter) load(ids []string, lockFabrics bool) ([]*placement.NodeInfo, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	scope := func(q *gorm.DB, col string) *gorm.DB {
		if ids == nil {
			return q
		}
		return q.Where(col+" IN ?", ids)
	}

	var nodes []models.Node
	if err := scope(s.tx, "id").Order("id").Find(&nodes).Error; err != nil {
		return nil, err
	}
	infos := make([]*placement.NodeInfo, len(nodes))
	byID := make(map[string]*placement.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = &placement.NodeInfo{
			ID: n.ID, Name: n.Name, Status: string(n.Status), AgentVersion: n.AgentVersion,
			CPUCores: n.CPUCores, RAMGb: n.RAMGb, DiskGb: n.DiskGb,
		}
		byID[n.ID] = infos[i]
	}

	var gpus []models.Gpu
	if err := scope(s.tx, "node_id").Order("node_id, idx").Find(&gpus).Error; err != nil {
		return nil, err
	}
	for _, g := range gpus {
		n := byID[g.NodeID]
		if n == nil {
			continue
		}
		pg := placement.GPU{ID: g.ID, Index: g.Index, Address: g.Address, ModelID: g.ModelID,
			Healthy: g.Health == models.GpuHealthy}
		if g.FailedReason != nil {
			pg.FailedReason = *g.FailedReason
		}
		if g.HolderVMID != nil {
			pg.HolderID = *g.HolderVMID
		}
		n.GPUs = append(n.GPUs, pg)
	}

	// Pods hold no CPU, RAM or disk of their node (SPEC §5).
	var held []struct {
		ID         string `gorm:"column:id"`
		NodeID     string `gorm:"column:node_id"`
		CPUCores   int    `gorm:"column:cpu_cores"`
		RAMGb      int    `gorm:"column:ram_gb"`
		DiskSizeGb int    `gorm:"column:disk_size_gb"`
	}
	q := s.tx.Model(&models.VM{}).Select("id, node_id, cpu_cores, ram_gb, disk_size_gb").
		Where("status IN ? AND capability_tier <> ? AND node_id IS NOT NULL", holding, placement.TierPod)
	if err := scope(q, "node_id").Find(&held).Error; err != nil {
		return nil, err
	}
	for _, h := range held {
		if n := byID[h.NodeID]; n != nil {
			n.Holdings = append(n.Holdings, placement.Holding{VMID: h.ID, CPUCores: h.CPUCores, RAMGb: h.RAMGb, DiskGb: h.DiskSizeGb})
		}
	}

	return infos, s.loadFabrics(nodes, byID, lockFabrics)
}

// loadFabrics attaches each node's fabric, one *Fabric per fabric.
func (s *snapshotter) loadFabrics(nodes []models.Node, byID map[string]*placement.NodeInfo, lock bool) error {
	var fids []string
	for _, n := range nodes {
		if n.FabricID != nil && !slices.Contains(fids, *n.FabricID) {
			fids = append(fids, *n.FabricID)
		}
	}
	if len(fids) == 0 {
		return nil
	}
	slices.Sort(fids) // lock order: by id
	q := s.tx.Where("id IN ?", fids).Order("id")
	if lock {
		q = s.st.ForUpdate(q)
	}
	var rows []models.Fabric
	if err := q.Find(&rows).Error; err != nil {
		return err
	}
	fabrics := make(map[string]*placement.Fabric, len(rows))
	for _, f := range rows {
		fabrics[f.ID] = &placement.Fabric{ID: f.ID, IPCapacity: f.IPCapacity}
	}
	if s.needIB {
		// The addresses a fabric has handed out: one per pod of an
		// InfiniBand-enabled organization on one of its nodes, in a
		// status that holds (see the package comment).
		var holders []struct {
			ID       string `gorm:"column:id"`
			FabricID string `gorm:"column:fabric_id"`
		}
		err := s.tx.Table("vms AS v").Select("v.id AS id, n.fabric_id AS fabric_id").
			Joins("JOIN nodes AS n ON n.id = v.node_id").
			Joins("JOIN organizations AS o ON o.id = v.organization_id").
			Where("v.capability_tier = ? AND v.status IN ? AND o.infiniband_enabled = ? AND n.fabric_id IN ?",
				placement.TierPod, holding, true, fids).
			Order("v.id").Find(&holders).Error
		if err != nil {
			return err
		}
		for _, h := range holders {
			if f := fabrics[h.FabricID]; f != nil {
				f.Holders = append(f.Holders, h.ID)
			}
		}
	}
	for _, n := range nodes {
		if n.FabricID != nil {
			byID[n.ID].Fabric = fabrics[*n.FabricID]
		}
	}
	return nil
}
