package dataset

import (
	"fmt"
	"sort"
	"strings"

	"gpugraph/internal/auth"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// checker validates a fixture against itself and the database it lands in:
// a reference may point to a row of the file or to one already stored.
type checker struct {
	st *store.Store
	tx *store.Txn
	f  *File
	// ids of the file, per table (but projects, keyed by tenant and id)
	ids map[string]map[string]bool
	// projects are the names of the projects of the file and of those
	// stored that the file refers to, by tenant and id; tenantsOf the
	// tenants whose project has an id, in order.
	projects  map[projectKey]string
	tenantsOf map[string][]int
}

func rowName(section string, i int, id string) string {
	return fmt.Sprintf("%s[%d] (id %q)", section, i, id)
}

func refuse(row, format string, args ...any) error {
	return &Error{Row: row, Msg: fmt.Sprintf(format, args...)}
}

// collect records the ids of one section, refusing empty and repeated ones.
func (c *checker) collect(table, section string, n int, id func(int) string) error {
	set := map[string]bool{}
	for i := 0; i < n; i++ {
		v := id(i)
		if v == "" {
			return refuse(fmt.Sprintf("%s[%d]", section, i), "id is missing")
		}
		if set[v] {
			return refuse(rowName(section, i, v), "id appears twice in the file")
		}
		set[v] = true
	}
	c.ids[table] = set
	return nil
}

// refs are the references one section makes to one table, checked at once
// against the file and then, for those not in it, with one query.
type refs struct {
	table string
	rows  map[string]string // referenced id → first row naming it
	field string
}

func (c *checker) newRefs(table, field string) *refs {
	return &refs{table: table, field: field, rows: map[string]string{}}
}

func (r *refs) add(id, row string) {
	if _, seen := r.rows[id]; !seen {
		r.rows[id] = row
	}
}

func (c *checker) resolve(r *refs) error {
	var missing []string
	for id := range r.rows {
		if !c.ids[r.table][id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	found, err := c.st.StoredIDs(c.tx, r.table, missing)
	if err != nil {
		return err
	}
	sort.Strings(missing)
	for _, id := range missing {
		if !found[id] {
			return refuse(r.rows[id], "%s %q is not in the file nor in the database", r.field, id)
		}
	}
	return nil
}

func (c *checker) check() (*store.DataSet, error) {
	f := c.f
	canonicalUUIDs(f)
	c.ids = map[string]map[string]bool{}
	nodeGPUs := 0
	for _, n := range f.Nodes {
		nodeGPUs += len(n.GPUs)
	}
	sections := []struct {
		table, section string
		n              int
		id             func(int) string
	}{
		{"gpu_models", "gpuModels", len(f.GPUModels), func(i int) string { return f.GPUModels[i].ID }},
		{"fabrics", "fabrics", len(f.Fabrics), func(i int) string { return f.Fabrics[i].ID }},
		{"nodes", "nodes", len(f.Nodes), func(i int) string { return f.Nodes[i].ID }},
		{"organizations", "organizations", len(f.Organizations), func(i int) string { return f.Organizations[i].ID }},
		{"vms", "vms", len(f.VMs), func(i int) string { return f.VMs[i].ID }},
		{"workloads", "workloads", len(f.Workloads), func(i int) string { return f.Workloads[i].ID }},
		{"revisions", "revisions", len(f.Revisions), func(i int) string { return f.Revisions[i].ID }},
		{"pods", "pods", len(f.Pods), func(i int) string { return f.Pods[i].ID }},
	}
	for _, s := range sections {
		if err := c.collect(s.table, s.section, s.n, s.id); err != nil {
			return nil, err
		}
	}
	out := &store.DataSet{Holders: map[string][]string{}}
	for _, step := range []func(*store.DataSet) error{
		c.checkInventory, c.checkInstanceTypes, c.checkTenancy, c.checkVMs, c.checkWorkloads, c.checkPods, c.checkSamples,
	} {
		if err := step(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *checker) checkInventory(out *store.DataSet) error {
	f := c.f
	for i, m := range f.GPUModels {
		row := rowName("gpuModels", i, m.ID)
		if m.Name == "" {
			return refuse(row, "name is missing")
		}
		if !m.Manufacturer.Valid() {
			return refuse(row, "manufacturer %q is not NVIDIA or AMD", m.Manufacturer)
		}
		if m.MemoryGb < 0 {
			return refuse(row, "memoryGb must not be negative")
		}
		out.GPUModels = append(out.GPUModels, m)
	}
	for i, fb := range f.Fabrics {
		if fb.IPCapacity < 0 {
			return refuse(rowName("fabrics", i, fb.ID), "ipCapacity must not be negative")
		}
		out.Fabrics = append(out.Fabrics, fb)
	}
	fabrics := c.newRefs("fabrics", "fabricId")
	gpuModels := c.newRefs("gpu_models", "modelId")
	names := map[string]string{}
	gpuIDs := map[string]bool{}
	uuids := map[string]string{}
	for i, n := range f.Nodes {
		row := rowName("nodes", i, n.ID)
		if n.Name == "" {
			return refuse(row, "name is missing")
		}
		if other, dup := names[n.Name]; dup {
			return refuse(row, "name %q is already the name of %s", n.Name, other)
		}
		names[n.Name] = row
		if !n.Status.Valid() {
			return refuse(row, "status %q is not online, offline or removed", n.Status)
		}
		if n.CPUCores < 0 || n.RAMGb < 0 || n.DiskGb < 0 {
			return refuse(row, "cpuCores, ramGb and diskGb must not be negative")
		}
		if n.FabricID != nil && *n.FabricID != "" {
			fabrics.add(*n.FabricID, row)
		} else {
			n.FabricID = nil
		}
		node := n.Node
		utcPtr(&node.LeavingAt)
		utcPtr(&node.LastHeartbeatAt)
		out.Nodes = append(out.Nodes, node)
		indexes := map[int]bool{}
		for j, g := range n.GPUs {
			grow := fmt.Sprintf("%s.gpus[%d] (id %q)", row, j, g.ID)
			switch {
			case g.ID == "":
				return refuse(grow, "id is missing")
			case gpuIDs[g.ID]:
				return refuse(grow, "id appears twice in the file")
			case g.Index < 0:
				return refuse(grow, "index must not be negative")
			case indexes[g.Index]:
				return refuse(grow, "index %d appears twice on this node", g.Index)
			case g.ModelID == "":
				return refuse(grow, "modelId is missing")
			}
			if g.Health == "" {
				g.Health = models.GPUHealthy
			}
			if !g.Health.Valid() {
				return refuse(grow, "health %q is not healthy or failed", g.Health)
			}
			if g.UUID != "" {
				if other, dup := uuids[g.UUID]; dup {
					return refuse(grow, "uuid %q is already the uuid of %s", g.UUID, other)
				}
				uuids[g.UUID] = grow
			}
			if g.FailedReason != nil && *g.FailedReason == "" {
				g.FailedReason = nil
			}
			gpuIDs[g.ID] = true
			indexes[g.Index] = true
			gpuModels.add(g.ModelID, grow)
			g.NodeID = n.ID
			g.HolderVMID = nil
			out.GPUs = append(out.GPUs, g)
		}
	}
	c.ids["gpus"] = gpuIDs
	if err := c.resolve(fabrics); err != nil {
		return err
	}
	return c.resolve(gpuModels)
}

// checkTenants holds each Run:ai tenant to one organization (the unique
// index organizations_tenant_unique): a file gives an organization only a tenant
// that no other organization holds, in the file or in the database (an
// organization the file replaces keeps its own).
func (c *checker) checkTenants() error {
	first := map[int]string{}
	var tenants []int
	for i, o := range c.f.Organizations {
		row := rowName("organizations", i, o.ID)
		if other, ok := first[o.TenantID]; ok {
			return refuse(row, "tenantId %d is %s's too: a Run:ai tenant belongs to one organization", o.TenantID, other)
		}
		first[o.TenantID] = row
		tenants = append(tenants, o.TenantID)
	}
	if len(tenants) == 0 {
		return nil
	}
	holders, err := c.st.TenantHolders(c.tx, tenants)
	if err != nil {
		return err
	}
	for i, o := range c.f.Organizations {
		if h, ok := holders[o.TenantID]; ok && h.ID != o.ID {
			return refuse(rowName("organizations", i, o.ID),
				"tenantId %d is held by organization %s (%s) in the database: a Run:ai tenant belongs to one organization", o.TenantID, h.ID, h.Name)
		}
	}
	return nil
}

func (c *checker) checkTenancy(out *store.DataSet) error {
	out.Organizations = append(out.Organizations, c.f.Organizations...)
	for i, o := range c.f.Organizations {
		if o.Name == "" {
			return refuse(rowName("organizations", i, o.ID), "name is missing")
		}
	}
	if err := c.checkTenants(); err != nil {
		return err
	}
	orgs := c.newRefs("organizations", "organizationId")
	tokens := map[string]bool{}
	for i, k := range c.f.APIKeys {
		row := fmt.Sprintf("apiKeys[%d]", i)
		if k.Token == "" {
			return refuse(row, "token is missing")
		}
		if tokens[k.Token] {
			return refuse(row, "token appears twice in the file")
		}
		tokens[k.Token] = true
		if k.OrganizationID == "" {
			return refuse(row, "organizationId is missing")
		}
		orgs.add(k.OrganizationID, row)
		if len(k.Permissions) == 0 {
			return refuse(row, "permissions are missing")
		}
		for _, p := range k.Permissions {
			if !auth.ValidPermission(p) {
				return refuse(row, "permission %q is not one of %v", p, auth.Permissions)
			}
		}
		out.APIKeys = append(out.APIKeys, hashKey(k))
	}
	if err := c.checkCredits(out, orgs); err != nil {
		return err
	}
	return c.resolve(orgs)
}

// maxCreditCents is the largest credit, the credits endpoint's.
const maxCreditCents = 10_000_000_000

// checkCredits takes the file's credits as the credits endpoint takes
// one (a whole number of cents from 1 to 10,000,000,000, a reason of at
// most 1,024 bytes) and each with a key of its own in its organization.
func (c *checker) checkCredits(out *store.DataSet, orgs *refs) error {
	keys := map[[2]string]bool{}
	now := store.Now()
	for i, cr := range c.f.Credits {
		row := fmt.Sprintf("credits[%d]", i)
		cr.Reason = strings.TrimSpace(cr.Reason)
		switch {
		case cr.OrganizationID == "":
			return refuse(row, "organizationId is missing")
		case cr.Key == "":
			return refuse(row, "key is missing")
		case len(cr.Key) > 255:
			return refuse(row, "key is longer than 255 bytes")
		case keys[[2]string{cr.OrganizationID, cr.Key}]:
			return refuse(row, "key %q appears twice in the file for organization %s", cr.Key, cr.OrganizationID)
		case cr.AmountCents <= 0 || cr.AmountCents > maxCreditCents:
			return refuse(row, "amountCents %d is not a whole number of cents from 1 to %d", cr.AmountCents, int64(maxCreditCents))
		case cr.Reason == "":
			return refuse(row, "reason is missing")
		case len(cr.Reason) > 1024:
			return refuse(row, "reason is longer than 1024 bytes")
		}
		keys[[2]string{cr.OrganizationID, cr.Key}] = true
		orgs.add(cr.OrganizationID, row)
		// The credits endpoint's key space: a credit granted with the same
		// Idempotency-Key is this one.
		out.Credits = append(out.Credits, &models.LedgerEntry{OrganizationID: cr.OrganizationID, Kind: models.LedgerCredit,
			AmountMicroCents: cr.AmountCents * models.MicroCentsPerCent, Reason: cr.Reason,
			IdempotencyKey: string(models.LedgerCredit) + ":" + cr.Key, CreatedAt: now})
	}
	return nil
}
