package pods

import (
	"context"
	"slices"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// What a console reads beside the pods lists: a cursor page of pods and the
// tenant's projects and workloads to fill its filter menus. Each needs
// workloads.read and reads the caller's tenant only.

// CursorQuery is a list's filters and order with a cursor page.
type CursorQuery struct {
	Query
	First *int
	After *string
	// Columns are the only columns to read (nil: every column); the sort
	// column is added, the cursor needs it.
	Columns []string
	// Total asks for the number of matches as well (one more statement).
	Total bool
}

// cursorList names a pods list in its cursors: a cursor holds a value of
// the sort field, so it is good only in the order it was read in.
func cursorList(s filterby.Sort) string {
	dir := "asc"
	if s.Order == filterby.Desc {
		dir = "desc"
	}
	return "pods:" + s.PodField().Name() + ":" + dir
}

// Connection answers a cursor page of the caller's tenant's pods, in q's
// order, after q.After.
func (s *Service) Connection(ctx context.Context, c *auth.Caller, q CursorQuery) (*paging.Connection[models.Pod], error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	sq, err := storeQuery(c, q.count())
	if err != nil {
		return nil, err
	}
	sq.Sort = q.Sort
	list := cursorList(sq.Sort)
	page, err := paging.ParseCursor(list, 1, q.First, q.After)
	if err != nil {
		return nil, err
	}
	fd := sq.Sort.PodField()
	var after *store.After
	if page.After != nil {
		v, err := cursorValue(fd, page.After.Sort[0])
		if err != nil {
			return nil, err
		}
		after = &store.After{Values: []any{v}, ID: page.After.ID}
	}
	if q.Columns != nil && !slices.Contains(q.Columns, fd.Column) {
		q.Columns = append(slices.Clone(q.Columns), fd.Column)
	}
	sq.Columns = q.Columns
	rows, more, total, err := s.store.PodsAfter(ctx, sq, after, page.First, q.Total)
	if err != nil {
		return nil, err
	}
	return paging.NewConnection(list, page, rows, more, total, func(p *models.Pod) paging.Key {
		return paging.Key{Sort: []*string{sortValue(p, fd)}, ID: p.ID}
	}), nil
}

// cursorValue is a cursor's sort value as the store compares it.
func cursorValue(fd *podfield.Field, v *string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if fd.Kind != podfield.Date {
		return *v, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil {
		return nil, apierr.BadRequest("after is not a cursor of this list and order: pass an endCursor or edge cursor it answered")
	}
	return t.UTC(), nil
}

// sortValue is p's value of the sortable field fd, as a cursor holds it.
func sortValue(p *models.Pod, fd *podfield.Field) *string {
	str := func(s string) *string { return &s }
	tm := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		return str(t.UTC().Format(time.RFC3339Nano))
	}
	switch fd.JSON {
	case "name":
		return str(p.Name)
	case "clusterId":
		return str(p.ClusterID)
	case "workloadId":
		return str(p.WorkloadID)
	case "revisionId":
		return p.RevisionID
	case "nodeName":
		return p.NodeName
	case "currentNodePool":
		return p.CurrentNodePool
	case "createdAt":
		return tm(&p.CreatedAt)
	case "completedAt":
		return tm(p.CompletedAt)
	case "deletedAt":
		return tm(p.DeletedAt)
	case "k8sPhase":
		return str(p.K8sPhase)
	}
	panic("pods: no cursor value for sortable field " + fd.JSON)
}

// Projects answers the caller's tenant's projects by name.
func (s *Service) Projects(ctx context.Context, c *auth.Caller) ([]*models.Project, error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	return s.store.ProjectsOfTenant(ctx, c.TenantID)
}

// Workloads answers a page of the caller's tenant's workloads by name, of
// one project when projectID is not "" (another tenant's project has none).
func (s *Service) Workloads(ctx context.Context, c *auth.Caller, projectID string, offset, limit *int) ([]*models.Workload, error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	if err := bounds.Text("projectId", projectID, bounds.MaxID); err != nil {
		return nil, err
	}
	page, err := paging.Parse(offset, limit)
	if err != nil {
		return nil, err
	}
	return s.store.WorkloadsOfTenant(ctx, c.TenantID, projectID, page.Offset, page.Limit)
}
