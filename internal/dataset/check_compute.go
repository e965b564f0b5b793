package dataset

import (
	"time"

	"gpugraph/internal/store"
)

// gpuFacts is what a VM's claim on a GPU is checked against.
type gpuFacts struct {
	NodeID, ModelID string
	HolderVMID      *string
}

func (c *checker) gpuFacts(claimed []string) (map[string]gpuFacts, error) {
	facts := map[string]gpuFacts{}
	for _, n := range c.f.Nodes {
		for _, g := range n.GPUs {
			facts[g.ID] = gpuFacts{NodeID: n.ID, ModelID: g.ModelID}
		}
	}
	// One read of the claimed GPUs gives who holds them now and, for those
	// the file does not name, where they are. A GPU of the file keeps the
	// holder it has in the database unless a VM of the file claims it; a
	// claim by the file must not steal it.
	stored, err := c.st.GPUPlacements(c.tx, claimed)
	if err != nil {
		return nil, err
	}
	for _, g := range stored {
		f, inFile := facts[g.ID]
		if !inFile {
			f = gpuFacts{NodeID: g.NodeID, ModelID: g.ModelID}
		}
		f.HolderVMID = g.HolderVMID
		facts[g.ID] = f
	}
	return facts, nil
}

func (c *checker) checkVMs(out *store.DataSet) error {
	orgs := c.newRefs("organizations", "organizationId")
	nodes := c.newRefs("nodes", "nodeId")
	gpuModels := c.newRefs("gpu_models", "gpuModelId")
	var claimed []string
	for i, v := range c.f.VMs {
		row := rowName("vms", i, v.ID)
		switch {
		case v.Name == "":
			return refuse(row, "name is missing")
		case v.OrganizationID == "":
			return refuse(row, "organizationId is missing")
		case !v.Status.Valid():
			return refuse(row, "status %q is not one of pending, deploying, running, stopped, failed, terminated, interrupted", v.Status)
		case v.GPUCount < 0 || v.CPUCores < 0 || v.RAMGb < 0 || v.DiskSizeGb < 0 || v.VolumeGb < 0:
			return refuse(row, "gpuCount, cpuCores, ramGb, diskSizeGb and volumeGb must not be negative")
		case !v.Status.Holds() && len(v.GPUIDs) > 0:
			return refuse(row, "a %s VM holds no GPUs, but gpuIds lists %d", v.Status, len(v.GPUIDs))
		case len(v.GPUIDs) > 0 && (v.NodeID == nil || *v.NodeID == ""):
			return refuse(row, "gpuIds needs the nodeId they are on")
		case len(v.GPUIDs) > 0 && (v.GPUModelID == nil || *v.GPUModelID == ""):
			return refuse(row, "gpuIds needs the gpuModelId they are of")
		}
		orgs.add(v.OrganizationID, row)
		if v.NodeID != nil && *v.NodeID == "" {
			v.NodeID = nil
		}
		if v.GPUModelID != nil && *v.GPUModelID == "" {
			v.GPUModelID = nil
		}
		if v.NodeID != nil {
			nodes.add(*v.NodeID, row)
		}
		if v.GPUModelID != nil {
			gpuModels.add(*v.GPUModelID, row)
		}
		claimed = append(claimed, v.GPUIDs...)
		vm := v.VM
		utcPtr(&vm.CreatedAt)
		utcPtr(&vm.InterruptedAt)
		vm.UpdatedAt = time.Now().UTC()
		out.VMs = append(out.VMs, vm)
		out.Holders[v.ID] = v.GPUIDs
	}
	for _, r := range []*refs{orgs, nodes, gpuModels} {
		if err := c.resolve(r); err != nil {
			return err
		}
	}
	facts, err := c.gpuFacts(claimed)
	if err != nil {
		return err
	}
	holder := map[string]string{}
	for i, v := range c.f.VMs {
		row := rowName("vms", i, v.ID)
		for _, g := range v.GPUIDs {
			f, ok := facts[g]
			switch {
			case !ok:
				return refuse(row, "gpuIds: GPU %q is not in the file nor in the database", g)
			case holder[g] != "":
				return refuse(row, "gpuIds: GPU %q is already held by %s", g, holder[g])
			case f.NodeID != *v.NodeID:
				return refuse(row, "gpuIds: GPU %q is on node %q, not on its node %q", g, f.NodeID, *v.NodeID)
			case f.ModelID != *v.GPUModelID:
				return refuse(row, "gpuIds: GPU %q is a %q, not its model %q", g, f.ModelID, *v.GPUModelID)
			case f.HolderVMID != nil && *f.HolderVMID != v.ID && !c.ids["vms"][*f.HolderVMID]:
				return refuse(row, "gpuIds: GPU %q is already held by VM %q", g, *f.HolderVMID)
			}
			holder[g] = row
		}
	}
	return nil
}

func utcPtr(t **time.Time) {
	if *t != nil {
		u := (**t).UTC()
		*t = &u
	}
}

func utc(t *time.Time) { *t = t.UTC() }
