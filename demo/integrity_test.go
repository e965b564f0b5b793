package demo

import (
	"testing"
	"time"

	"gpugraph/models"
)

// TestReferences checks the rules the fixture loader enforces and the ones
// restartVm relies on, on the data as the server would load it.
func TestReferences(t *testing.T) {
	f := demoAt(t, time.Now())

	gpuModels := map[string]models.GPUModel{}
	for _, m := range f.GPUModels {
		gpuModels[m.ID] = m
	}
	fabrics := map[string]bool{}
	for _, fb := range f.Fabrics {
		fabrics[fb.ID] = true
	}
	nodes := map[string]node{}
	nodeByName := map[string]node{}
	gpus := map[string]models.GPU{}
	gpuNode := map[string]string{}
	for _, n := range f.Nodes {
		nodes[n.ID], nodeByName[n.Name] = n, n
		if n.FabricID != nil && !fabrics[*n.FabricID] {
			t.Errorf("node %s: unknown fabric %s", n.ID, *n.FabricID)
		}
		if n.LastHeartbeatAt != nil {
			t.Errorf("node %s: has a heartbeat; the sweep would take it offline", n.ID)
		}
		if len(n.GPUs) != 8 {
			t.Errorf("node %s: %d GPUs, want 8", n.ID, len(n.GPUs))
		}
		for _, g := range n.GPUs {
			if _, ok := gpuModels[g.ModelID]; !ok {
				t.Errorf("gpu %s: unknown model %s", g.ID, g.ModelID)
			}
			if _, dup := gpus[g.ID]; dup {
				t.Errorf("gpu %s: id twice", g.ID)
			}
			if (g.Health == models.GPUFailed) != (g.FailedReason != nil) {
				t.Errorf("gpu %s: health %s with failedReason %v", g.ID, g.Health, g.FailedReason)
			}
			gpus[g.ID], gpuNode[g.ID] = g, n.ID
		}
	}
	orgs := map[string]bool{}
	for _, o := range f.Organizations {
		orgs[o.ID] = true
	}
	for _, k := range f.APIKeys {
		if !orgs[k.OrganizationID] {
			t.Errorf("key %s: unknown organization", k.Token)
		}
	}

	heldBy := map[string]string{}
	type share struct{ cpu, ram, disk int }
	used := map[string]*share{}
	statuses := map[models.VMStatus]bool{}
	for _, v := range f.VMs {
		statuses[v.Status] = true
		if !orgs[v.OrganizationID] {
			t.Errorf("vm %s: unknown organization", v.ID)
		}
		m, ok := gpuModels[deref(v.GPUModelID)]
		if !ok || v.GPUManufacturer != string(m.Manufacturer) || v.GPUModelName != m.Name {
			t.Errorf("vm %s: model %v does not match the catalog", v.ID, v.GPUModelID)
		}
		if v.NodeID != nil {
			if _, ok := nodes[*v.NodeID]; !ok {
				t.Errorf("vm %s: unknown node %s", v.ID, *v.NodeID)
			}
		}
		if !v.Status.Holds() {
			if len(v.GPUIDs) != 0 {
				t.Errorf("vm %s: %s but lists gpuIds %v", v.ID, v.Status, v.GPUIDs)
			}
			continue
		}
		if len(v.GPUIDs) != v.GPUCount {
			t.Errorf("vm %s: holds %d GPUs, gpuCount %d", v.ID, len(v.GPUIDs), v.GPUCount)
		}
		for _, id := range v.GPUIDs {
			g, ok := gpus[id]
			switch {
			case !ok:
				t.Errorf("vm %s: unknown gpu %s", v.ID, id)
			case gpuNode[id] != deref(v.NodeID):
				t.Errorf("vm %s: gpu %s is on %s, not its node", v.ID, id, gpuNode[id])
			case g.ModelID != deref(v.GPUModelID):
				t.Errorf("vm %s: gpu %s is a %s", v.ID, id, g.ModelID)
			case heldBy[id] != "":
				t.Errorf("vm %s: gpu %s is held by %s too", v.ID, id, heldBy[id])
			case g.Health == models.GPUFailed && v.Status != models.VMRunning:
				t.Errorf("vm %s: a %s VM holds failed gpu %s", v.ID, v.Status, id)
			}
			heldBy[id] = v.ID
		}
		if !v.IsPod() {
			s := used[*v.NodeID]
			if s == nil {
				s = &share{}
				used[*v.NodeID] = s
			}
			s.cpu, s.ram, s.disk = s.cpu+v.CPUCores, s.ram+v.RAMGb, s.disk+v.DiskSizeGb
		}
	}
	for id, s := range used {
		n := nodes[id]
		if s.cpu > n.CPUCores || s.ram > n.RAMGb || s.disk > n.DiskGb {
			t.Errorf("node %s: VMs hold %+v of %d cores, %d GB RAM, %d GB disk", id, *s, n.CPUCores, n.RAMGb, n.DiskGb)
		}
	}
	for _, st := range models.VMStatuses {
		if !statuses[st] {
			t.Errorf("no VM is %s", st)
		}
	}
	for _, st := range models.NodeStatuses {
		if !hasNode(f, st) {
			t.Errorf("no node is %s", st)
		}
	}

	projects := map[string]models.Project{}
	for _, p := range f.Projects {
		projects[p.ID] = p
	}
	workloads := map[string]models.Workload{}
	for _, w := range f.Workloads {
		workloads[w.ID] = w
		if _, ok := projects[w.ProjectID]; !ok {
			t.Errorf("workload %s: unknown project %s", w.Name, w.ProjectID)
		}
	}
	revisions := map[string]string{}
	for _, r := range f.Revisions {
		revisions[r.ID] = r.WorkloadID
		if _, ok := workloads[r.WorkloadID]; !ok {
			t.Errorf("revision %s: unknown workload", r.ID)
		}
	}
	pods := map[string]bool{}
	phases := map[string]int{}
	var completed, deleted, deletedRunning int
	for _, p := range f.Pods {
		pods[p.ID] = true
		phases[p.K8sPhase]++
		w, ok := workloads[p.WorkloadID]
		if !ok {
			t.Errorf("pod %s: unknown workload %s", p.Name, p.WorkloadID)
			continue
		}
		pr := projects[w.ProjectID]
		switch {
		case deref(p.ProjectID) != w.ProjectID || p.TenantID != pr.TenantID:
			t.Errorf("pod %s: project or tenant is not its workload's", p.Name)
		case deref(p.ProjectName) != pr.Name || deref(p.WorkloadName) != w.Name:
			t.Errorf("pod %s: projectName or workloadName is not its workload's", p.Name)
		case p.ClusterID != w.ClusterID:
			t.Errorf("pod %s: cluster is not its workload's", p.Name)
		case p.RevisionID != nil && revisions[*p.RevisionID] != w.ID:
			t.Errorf("pod %s: revision is not of its workload", p.Name)
		case (p.NodeName == nil) != (p.K8sPhase == "Pending"):
			t.Errorf("pod %s: %s with nodeName %v", p.Name, p.K8sPhase, p.NodeName)
		case p.NodeName != nil && nodeByName[*p.NodeName].ClusterID != p.ClusterID:
			t.Errorf("pod %s: node %s is not of its cluster", p.Name, *p.NodeName)
		}
		for _, tol := range p.Tolerations {
			if tol.Effect != nil && *tol.Effect == "NoExecute" && tol.TolerationSeconds == nil {
				t.Errorf("pod %s: NoExecute toleration without tolerationSeconds", p.Name)
			}
		}
		if p.CompletedAt != nil {
			completed++
		}
		if p.DeletedAt != nil {
			deleted++
			if p.CompletedAt == nil {
				deletedRunning++
			}
		}
	}
	for _, phase := range []string{"Pending", "Running", "Succeeded", "Failed", "Unknown"} {
		if phases[phase] == 0 {
			t.Errorf("no pod is %s", phase)
		}
	}
	if completed == 0 || deleted == 0 || deletedRunning == 0 {
		t.Errorf("completed %d, deleted %d, deleted but not completed %d: want some of each", completed, deleted, deletedRunning)
	}
	t.Logf("pods by phase %v; %d completed, %d deleted", phases, completed, deleted)

	nim := map[string]bool{}
	for _, s := range f.PodMetrics {
		if !pods[s.PodID] {
			t.Errorf("podMetrics: unknown pod %s", s.PodID)
		}
		if !models.IsMetricType(s.Type) || models.KindOf(s.Type) != models.Gauge {
			t.Errorf("podMetrics: %s is not a stored gauge type", s.Type)
		}
		if models.IsNIM(s.Type) {
			nim[s.PodID] = true
		}
	}
	for _, h := range f.PodHistograms {
		if !pods[h.PodID] || !nim[h.PodID] {
			t.Errorf("podHistograms: pod %s is unknown or has no NIM gauges", h.PodID)
		}
		for _, s := range h.Samples {
			if s.Buckets["+Inf"] == "" {
				t.Errorf("podHistograms: a sample of %s lacks +Inf", h.PodID)
			}
		}
	}
}

func hasNode(f *file, st models.NodeStatus) bool {
	for _, n := range f.Nodes {
		if n.Status == st {
			return true
		}
	}
	return false
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
