package compute

import (
	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// nodeStates maps the stored node statuses onto placement's; a status not
// here reaches placement as NodeStateUnknown, named in its answer.
var nodeStates = map[models.NodeStatus]placement.NodeState{
	models.NodeOnline:  placement.NodeStateOnline,
	models.NodeOffline: placement.NodeStateOffline,
	models.NodeRemoved: placement.NodeStateRemoved,
}

// NodeInfos turns the store's snapshot into placement's view of each node,
// in the snapshot's order (by id), with one *placement.Fabric per fabric:
// the view every placement decides on (restart, create, and the instance
// types' capacity, which counts from the same view so that it never
// promises what a placement then refuses).
func NodeInfos(snap *store.Snapshot) []*placement.NodeInfo {
	infos := make([]*placement.NodeInfo, len(snap.Nodes))
	byID := make(map[string]*placement.NodeInfo, len(snap.Nodes))
	for i, n := range snap.Nodes {
		infos[i] = &placement.NodeInfo{
			ID: n.ID, Name: n.Name, State: nodeStates[n.Status], Status: string(n.Status),
			AgentVersion: n.AgentVersion, CPUCores: n.CPUCores, RAMGb: n.RAMGb, DiskGb: n.DiskGb,
		}
		byID[n.ID] = infos[i]
	}
	for _, g := range snap.GPUs {
		n := byID[g.NodeID]
		if n == nil {
			continue
		}
		pg := placement.GPU{ID: g.ID, Index: g.Index, Address: g.Address, ModelID: g.ModelID,
			Healthy: g.Health == models.GPUHealthy}
		if g.FailedReason != nil {
			pg.FailedReason = *g.FailedReason
		}
		if g.HolderVMID != nil {
			pg.HolderID = *g.HolderVMID
		}
		n.GPUs = append(n.GPUs, pg)
	}
	for _, h := range snap.HostShares {
		if n := byID[h.NodeID]; n != nil {
			n.Holdings = append(n.Holdings, placement.Holding{VMID: h.ID, CPUCores: h.CPUCores, RAMGb: h.RAMGb, DiskGb: h.DiskSizeGb})
		}
	}
	for _, w := range snap.Workloads {
		if n := byID[w.NodeID]; n != nil {
			pw := placement.Workload{VMID: w.ID, OrganizationID: w.OrganizationID,
				Interruptible: w.ComputeClass == models.ComputeClassInterruptible, Priority: w.PricePerHourCents}
			if w.CreatedAt != nil {
				pw.CreatedAt = *w.CreatedAt
			}
			n.Workloads = append(n.Workloads, pw)
		}
	}
	fabrics := make(map[string]*placement.Fabric, len(snap.Fabrics))
	for _, f := range snap.Fabrics {
		fabrics[f.ID] = &placement.Fabric{ID: f.ID, IPCapacity: f.IPCapacity}
	}
	for _, h := range snap.AddressHolders {
		if f := fabrics[h.FabricID]; f != nil {
			f.Holders = append(f.Holders, h.ID)
		}
	}
	for _, n := range snap.Nodes {
		if n.FabricID != nil {
			byID[n.ID].Fabric = fabrics[*n.FabricID]
		}
	}
	return infos
}
