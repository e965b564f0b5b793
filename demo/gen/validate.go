package main

import (
	"errors"
	"fmt"
	"time"

	"gpugraph/demo"
	"gpugraph/models"
)

// validate checks the rules the fixture loader and restartVm rely on, so a
// change to the generator that breaks one fails here, naming the row,
// instead of at the server's start.
func validate(f *Fixture) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	modelIDs := map[string]bool{}
	for _, m := range f.GPUModels {
		modelIDs[m.ID] = true
	}
	type gpuAt struct {
		node *Node
		gpu  *GPU
	}
	nodes, gpus, names := map[string]*Node{}, map[string]gpuAt{}, map[string]bool{}
	for _, n := range f.Nodes {
		if nodes[n.ID] != nil || names[n.Name] {
			bad("node %s: id or name repeated", n.ID)
		}
		nodes[n.ID], names[n.Name] = n, true
		if n.LastHeartbeatAt != nil {
			bad("node %s: demo nodes never reported, so lastHeartbeatAt must be null", n.ID)
		}
		for _, gp := range n.GPUs {
			if _, dup := gpus[gp.ID]; dup {
				bad("gpu %s: id repeated", gp.ID)
			}
			if !modelIDs[gp.ModelID] {
				bad("gpu %s: unknown model %s", gp.ID, gp.ModelID)
			}
			gpus[gp.ID] = gpuAt{n, gp}
		}
	}

	vmIDs := map[string]bool{}
	holder := map[string]string{}
	type share struct{ cpu, ram, disk int }
	used := map[string]*share{}
	for _, v := range f.VMs {
		if vmIDs[v.ID] {
			bad("vm %s: id repeated", v.ID)
		}
		vmIDs[v.ID] = true
		if !modelIDs[v.GPUModelID] {
			bad("vm %s: unknown model %s", v.ID, v.GPUModelID)
		}
		if v.NodeID != nil && nodes[*v.NodeID] == nil {
			bad("vm %s: unknown node %s", v.ID, *v.NodeID)
		}
		if !holds(v.Status) {
			if len(v.GPUIDs) != 0 {
				bad("vm %s: a %s VM holds no GPUs", v.ID, v.Status)
			}
			continue
		}
		if v.NodeID == nil || len(v.GPUIDs) != v.GPUCount {
			bad("vm %s: a %s VM holds gpuCount GPUs on its node", v.ID, v.Status)
			continue
		}
		for _, id := range v.GPUIDs {
			at, ok := gpus[id]
			switch {
			case !ok:
				bad("vm %s: unknown gpu %s", v.ID, id)
			case at.node.ID != *v.NodeID || at.gpu.ModelID != v.GPUModelID:
				bad("vm %s: gpu %s is not a %s of its node", v.ID, id, v.GPUModelID)
			case holder[id] != "":
				bad("vm %s: gpu %s is already held by %s", v.ID, id, holder[id])
			case at.gpu.Health != "healthy" && v.Status != "running":
				bad("vm %s: only a running VM may hold failed gpu %s", v.ID, id)
			}
			holder[id] = v.ID
		}
		if v.CapabilityTier != models.TierPod {
			s := used[*v.NodeID]
			if s == nil {
				s = &share{}
				used[*v.NodeID] = s
			}
			s.cpu += v.CPUCores
			s.ram += v.RAMGb
			s.disk += v.DiskSizeGb
		}
	}
	for id, s := range used {
		n := nodes[id]
		if s.cpu > n.CPUCores || s.ram > n.RAMGb || s.disk > n.DiskGb {
			bad("node %s: VMs hold more CPU, RAM or disk than it has", id)
		}
	}
	for _, fb := range f.Fabrics {
		if h := len(ibHolders(f)); h > fb.IPCapacity {
			bad("fabric %s: %d addresses held, capacity %d", fb.ID, h, fb.IPCapacity)
		}
	}

	errs = append(errs, validateWorkloads(f, nodes)...)
	return errors.Join(errs...)
}

func validateWorkloads(f *Fixture, nodes map[string]*Node) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	projects := map[string]Project{}
	for _, p := range f.Projects {
		projects[p.ID] = p
	}
	workloads := map[string]*Workload{}
	for _, w := range f.Workloads {
		workloads[w.ID] = w
	}
	revisions := map[string]string{}
	for _, r := range f.Revisions {
		revisions[r.ID] = r.WorkloadID
	}
	nodeCluster := map[string]string{}
	for _, n := range nodes {
		nodeCluster[n.Name] = n.ClusterID
	}
	podIDs := map[string]bool{}
	for _, p := range f.Pods {
		if podIDs[p.ID] {
			bad("pod %s: id repeated", p.ID)
		}
		podIDs[p.ID] = true
		w := workloads[p.WorkloadID]
		switch {
		case w == nil:
			bad("pod %s: unknown workload", p.ID)
			continue
		case p.ProjectID != w.ProjectID || projects[p.ProjectID].TenantID != p.TenantID:
			bad("pod %s: project or tenant differs from its workload's", p.ID)
		case p.RevisionID != nil && revisions[*p.RevisionID] != w.ID:
			bad("pod %s: revision of another workload", p.ID)
		case p.ClusterID != w.ClusterID:
			bad("pod %s: cluster differs from its workload's", p.ID)
		case (p.NodeName == nil) != (p.K8sPhase == "Pending"):
			bad("pod %s: only a Pending pod has no node", p.ID)
		case p.NodeName != nil && nodeCluster[*p.NodeName] != p.ClusterID:
			bad("pod %s: node %s is not of its cluster", p.ID, *p.NodeName)
		case (p.CompletedAt != nil) != (p.K8sPhase == "Succeeded" || p.K8sPhase == "Failed"):
			bad("pod %s: completedAt set for a %s pod", p.ID, p.K8sPhase)
		}
		if err := ordered(p.CreatedAt, p.K8sPhaseUpdatedAt, p.UpdatedAt, Instant(demo.Anchor)); err != nil {
			bad("pod %s: createdAt ≤ k8sPhaseUpdatedAt ≤ updatedAt ≤ anchor: %v", p.ID, err)
		}
		if p.DeletedAt != nil {
			if err := ordered(p.K8sPhaseUpdatedAt, *p.DeletedAt, Instant(demo.Anchor)); err != nil {
				bad("pod %s: deletedAt: %v", p.ID, err)
			}
		}
	}
	for _, s := range f.PodMetrics {
		if !podIDs[s.PodID] {
			bad("podMetrics: unknown pod %s", s.PodID)
		}
	}
	for _, h := range f.PodHistograms {
		if !podIDs[h.PodID] {
			bad("podHistograms: unknown pod %s", h.PodID)
		}
	}
	return errs
}

// ordered reports whether the instants never go backwards.
func ordered(instants ...Instant) error {
	var prev time.Time
	for i, s := range instants {
		t, err := time.Parse(time.RFC3339Nano, string(s))
		if err != nil {
			return err
		}
		if i > 0 && t.Before(prev) {
			return fmt.Errorf("%s is before %s", s, instants[i-1])
		}
		prev = t
	}
	return nil
}
