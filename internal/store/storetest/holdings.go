package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/store"
	"gpugraph/models"
)

// Violations reads the whole fleet and answers every broken guarantee of
// placement, one sentence each (none: nil), whatever wrote the rows —
// restarts, creates, the scheduler, several replicas at once:
//
//   - a VM or pod in a holding status holds exactly its GPU count of GPUs,
//     all on its node and of its model, and so does one tearing down that
//     holds any (its node has yet to report it gone); one in any other
//     status holds none (the holder column names one VM, so a GPU claimed
//     twice shows as one VM short of its count);
//   - no node's holding VMs need more CPU, RAM or disk than it has;
//   - no fabric hands out more InfiniBand addresses than it has (an
//     address is one of a fabric's capacity, held by each holding pod of
//     an InfiniBand-enabled organization on a node of the fabric).
func Violations(tb testing.TB, st *store.Store) []string {
	tb.Helper()
	var (
		vms     []models.VM
		nodes   []models.Node
		gpus    []models.GPU
		fabrics []models.Fabric
		orgs    []models.Organization
	)
	for _, q := range []any{&vms, &nodes, &gpus, &fabrics, &orgs} {
		if err := st.DB.Find(q).Error; err != nil {
			tb.Fatal(err)
		}
	}
	heldBy := map[string][]models.GPU{}
	for _, g := range gpus {
		if g.HolderVMID != nil {
			heldBy[*g.HolderVMID] = append(heldBy[*g.HolderVMID], g)
		}
	}
	ib := map[string]bool{}
	for _, o := range orgs {
		ib[o.ID] = o.InfinibandEnabled
	}
	nodeByID := map[string]models.Node{}
	for _, n := range nodes {
		nodeByID[n.ID] = n
	}
	type use struct{ cpu, ram, disk int }
	used := map[string]*use{}
	addresses := map[string]int{}
	var out []string
	slices.SortFunc(vms, func(a, b models.VM) int { return strings.Compare(a.ID, b.ID) })
	for _, v := range vms {
		mine := heldBy[v.ID]
		delete(heldBy, v.ID)
		if !v.Status.Holds() && !(v.TearingDown && len(mine) > 0) {
			if len(mine) > 0 {
				out = append(out, fmt.Sprintf("%s is %s and holds %d GPUs", v.ID, v.Status, len(mine)))
			}
			continue
		}
		if v.NodeID == nil {
			out = append(out, fmt.Sprintf("%s is %s on no node", v.ID, v.Status))
			continue
		}
		if len(mine) != v.GPUCount {
			out = append(out, fmt.Sprintf("%s is %s holding %d GPUs, wants %d", v.ID, v.Status, len(mine), v.GPUCount))
		}
		for _, g := range mine {
			if g.NodeID != *v.NodeID || v.GPUModelID == nil || g.ModelID != *v.GPUModelID {
				out = append(out, fmt.Sprintf("%s on %s (%v) holds GPU %s of %s on %s", v.ID, *v.NodeID, v.GPUModelID, g.ID, g.ModelID, g.NodeID))
			}
		}
		n := nodeByID[*v.NodeID]
		if v.IsPod() {
			if n.FabricID != nil && ib[v.OrganizationID] {
				addresses[*n.FabricID]++
			}
			continue
		}
		u := used[n.ID]
		if u == nil {
			u = &use{}
			used[n.ID] = u
		}
		u.cpu, u.ram, u.disk = u.cpu+v.CPUCores, u.ram+v.RAMGb, u.disk+v.DiskSizeGb
	}
	for id, gs := range heldBy {
		out = append(out, fmt.Sprintf("%d GPUs held by %s, which is no VM", len(gs), id))
	}
	for _, n := range nodes {
		if u := used[n.ID]; u != nil && (u.cpu > n.CPUCores || u.ram > n.RAMGb || u.disk > n.DiskGb) {
			out = append(out, fmt.Sprintf("node %s over capacity: %d of %d cores, %d of %d GB RAM, %d of %d GB disk",
				n.ID, u.cpu, n.CPUCores, u.ram, n.RAMGb, u.disk, n.DiskGb))
		}
	}
	for _, f := range fabrics {
		if addresses[f.ID] > f.IPCapacity {
			out = append(out, fmt.Sprintf("fabric %s hands out %d addresses of %d", f.ID, addresses[f.ID], f.IPCapacity))
		}
	}
	return out
}

// LogViolations reads vmID's event log and answers where it breaks the
// lifecycle table (none: nil): each event a row of the table (its from one
// the row allows, its to the row's), each one's from the previous one's to,
// starting at from and ending at the status the VM's row has now.
func LogViolations(tb testing.TB, st *store.Store, vmID string, from models.VMStatus) []string {
	tb.Helper()
	var evs []models.VMEvent
	if err := st.DB.Where("vm_id = ?", vmID).Order("id").Find(&evs).Error; err != nil {
		tb.Fatal(err)
	}
	var v models.VM
	if err := st.DB.Where("id = ?", vmID).Take(&v).Error; err != nil {
		tb.Fatalf("read VM %s: %v", vmID, err)
	}
	var out []string
	prev := from
	for _, e := range evs {
		tr := models.Step(e.Transition)
		if e.From != prev || e.To != tr.ToFrom(e.From) || !slices.Contains(tr.From, e.From) {
			out = append(out, fmt.Sprintf("%s: event %d %s %s→%s does not follow %s or its row of the table", vmID, e.ID, e.Transition, e.From, e.To, prev))
		}
		prev = e.To
	}
	if prev != v.Status {
		out = append(out, fmt.Sprintf("%s: its log ends at %s, the row is %s", vmID, prev, v.Status))
	}
	return out
}
