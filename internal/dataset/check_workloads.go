package dataset

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// projectKey is a project's key: its id is its tenant's own (Run:ai's are
// small integers), so two tenants may both have project 42.
type projectKey struct {
	tenant int
	id     string
}

func (c *checker) checkWorkloads(out *store.DataSet) error {
	f := c.f
	c.projects, c.tenantsOf = map[projectKey]string{}, map[string][]int{}
	for i, p := range f.Projects {
		row := rowName("projects", i, p.ID)
		k := projectKey{p.TenantID, p.ID}
		switch _, twice := c.projects[k]; {
		case p.ID == "":
			return refuse(fmt.Sprintf("projects[%d]", i), "id is missing")
		case twice:
			return refuse(row, "id appears twice in the file for tenant %d", p.TenantID)
		case p.Name == "":
			return refuse(row, "name is missing")
		}
		c.addProject(k, p.Name)
	}
	out.Projects = f.Projects
	// Every project id the file names is read from the database too: a
	// workload without a tenantId takes its project's only when one
	// tenant has a project of that id.
	named := map[string]bool{}
	for _, w := range f.Workloads {
		named[w.ProjectID] = true
	}
	for _, p := range f.Pods {
		if p.ProjectID != nil {
			named[*p.ProjectID] = true
		}
	}
	stored, err := c.st.StoredProjects(c.tx, slices.Sorted(maps.Keys(named)))
	if err != nil {
		return err
	}
	for _, p := range stored {
		if k := (projectKey{p.TenantID, p.ID}); !c.hasProject(k) {
			c.addProject(k, p.Name)
		}
	}
	for i := range f.Workloads {
		w := &f.Workloads[i]
		row := rowName("workloads", i, w.ID)
		if w.Name == "" {
			return refuse(row, "name is missing")
		}
		if w.ProjectID == "" {
			return refuse(row, "projectId is missing")
		}
		if w.TenantID == 0 {
			switch ts := c.tenantsOf[w.ProjectID]; len(ts) {
			case 0:
			case 1:
				w.TenantID = ts[0]
			default:
				return refuse(row, "projectId %q is a project of tenants %s: give the workload its project's tenantId", w.ProjectID, tenantList(ts))
			}
		}
		if err := c.projectRef(row, w.TenantID, w.ProjectID); err != nil {
			return err
		}
	}
	out.Workloads = f.Workloads
	workloads := c.newRefs("workloads", "workloadId")
	for i, r := range f.Revisions {
		row := rowName("revisions", i, r.ID)
		if r.WorkloadID == "" {
			return refuse(row, "workloadId is missing")
		}
		workloads.add(r.WorkloadID, row)
	}
	out.Revisions = f.Revisions
	return c.resolve(workloads)
}

func (c *checker) addProject(k projectKey, name string) {
	c.projects[k] = name
	ts := c.tenantsOf[k.id]
	i, _ := slices.BinarySearch(ts, k.tenant)
	c.tenantsOf[k.id] = slices.Insert(ts, i, k.tenant)
}

func (c *checker) hasProject(k projectKey) bool {
	_, ok := c.projects[k]
	return ok
}

// projectRef refuses row, which names project id of tenant, when the
// tenant has no such project in the file or the database.
func (c *checker) projectRef(row string, tenant int, id string) error {
	switch {
	case c.hasProject(projectKey{tenant, id}):
		return nil
	case len(c.tenantsOf[id]) == 0 || tenant == 0:
		return refuse(row, "projectId %q is not in the file nor in the database", id)
	default:
		return refuse(row, "projectId %q is not a project of tenant %d in the file nor in the database", id, tenant)
	}
}

func tenantList(ts []int) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = strconv.Itoa(t)
	}
	return strings.Join(s, ", ")
}

// names reads the names of rows of table by id, from the file first.
func (c *checker) names(table string, inFile map[string]string, ids map[string]bool) (map[string]string, error) {
	out := map[string]string{}
	var missing []string
	for id := range ids {
		if n, ok := inFile[id]; ok {
			out[id] = n
		} else {
			missing = append(missing, id)
		}
	}
	stored, err := c.st.NamesByID(c.tx, table, missing)
	if err != nil {
		return nil, err
	}
	for id, n := range stored {
		out[id] = n
	}
	return out, nil
}

func (c *checker) checkPods(out *store.DataSet) error {
	workloads := c.newRefs("workloads", "workloadId")
	revisions := c.newRefs("revisions", "revisionId")
	for i := range c.f.Pods {
		p := &c.f.Pods[i]
		row := rowName("pods", i, p.ID)
		switch {
		case p.Name == "":
			return refuse(row, "name is missing")
		case p.WorkloadID == "":
			return refuse(row, "workloadId is missing")
		case p.TenantID <= 0:
			return refuse(row, "tenantId must be a positive integer")
		case p.CreatedAt.IsZero():
			return refuse(row, "createdAt is missing")
		case p.K8sPhase == "":
			return refuse(row, "k8sPhase is missing")
		}
		workloads.add(p.WorkloadID, row)
		if p.RevisionID != nil {
			revisions.add(*p.RevisionID, row)
		}
		if p.ProjectID != nil {
			if err := c.projectRef(row, p.TenantID, *p.ProjectID); err != nil {
				return err
			}
		}
		if p.Containers == nil {
			p.Containers = []models.Container{}
		}
		utc(&p.CreatedAt)
		utcPtr(&p.CompletedAt)
		utcPtr(&p.DeletedAt)
		if p.K8sPhaseUpdatedAt.IsZero() {
			p.K8sPhaseUpdatedAt = p.CreatedAt
		}
		if p.UpdatedAt.IsZero() {
			p.UpdatedAt = p.K8sPhaseUpdatedAt
		}
		utc(&p.K8sPhaseUpdatedAt)
		utc(&p.UpdatedAt)
		for j := range p.Containers {
			utcPtr(&p.Containers[j].StartedAt)
		}
	}
	for _, r := range []*refs{workloads, revisions} {
		if err := c.resolve(r); err != nil {
			return err
		}
	}
	// Search reads the workload and project names from the pod row itself;
	// fill them from the catalog where the fixture leaves them out.
	// A pod's project is its tenant's project of that id.
	wNames := map[string]string{}
	for _, w := range c.f.Workloads {
		wNames[w.ID] = w.Name
	}
	wIDs := map[string]bool{}
	for _, p := range c.f.Pods {
		if p.WorkloadName == nil {
			wIDs[p.WorkloadID] = true
		}
	}
	wn, err := c.names("workloads", wNames, wIDs)
	if err != nil {
		return err
	}
	for i := range c.f.Pods {
		p := &c.f.Pods[i]
		if n, ok := wn[p.WorkloadID]; ok && p.WorkloadName == nil {
			p.WorkloadName = &n
		}
		if p.ProjectID != nil && p.ProjectName == nil {
			if n, ok := c.projects[projectKey{p.TenantID, *p.ProjectID}]; ok {
				p.ProjectName = &n
			}
		}
	}
	out.Pods = c.f.Pods
	return nil
}

func (c *checker) checkSamples(out *store.DataSet) error {
	s, err := podmetrics.CheckSamples(c.f.PodMetrics, c.f.PodHistograms)
	var bad *podmetrics.EntryError
	if errors.As(err, &bad) {
		return &Error{Row: bad.Entry, Msg: bad.Msg}
	}
	if err != nil {
		return err
	}
	out.MetricSamples, out.HistogramSamples = s.Metrics, s.Histograms
	pods := c.newRefs("pods", "podId")
	for _, p := range s.Pods {
		pods.add(p.ID, p.Row)
	}
	return c.resolve(pods)
}

// canonicalUUIDs writes the file's UUIDs (the fields Run:ai's schema
// declares "format: uuid": a pod's id, workloadId, revisionId and
// clusterId, and the workload and revision ids they name) in lower case,
// the one spelling the store keeps, so they compare case-insensitively as
// UUIDs do. It runs before anything reads an id; sample series' podIds are
// canonical in podmetrics.CheckSamples, which ingestion shares.
func canonicalUUIDs(f *File) {
	for i := range f.Workloads {
		w := &f.Workloads[i]
		w.ID, w.ClusterID = podfield.CanonicalUUID(w.ID), podfield.CanonicalUUID(w.ClusterID)
	}
	for i := range f.Revisions {
		r := &f.Revisions[i]
		r.ID, r.WorkloadID = podfield.CanonicalUUID(r.ID), podfield.CanonicalUUID(r.WorkloadID)
	}
	for i := range f.Pods {
		p := &f.Pods[i]
		p.ID = podfield.CanonicalUUID(p.ID)
		p.WorkloadID = podfield.CanonicalUUID(p.WorkloadID)
		p.ClusterID = podfield.CanonicalUUID(p.ClusterID)
		if p.RevisionID != nil {
			r := podfield.CanonicalUUID(*p.RevisionID)
			p.RevisionID = &r
		}
	}
}
