// Package pods is the Run:ai pods capability: listing and counting one
// tenant's pods, whole or of one workload or revision. Both faces call it
// with plain Go values — the GraphQL resolvers after reading their
// arguments, the REST shims after reading their query parameters — so the
// rules (the permission, the tenant, the filters, the page limits, 404 for
// another tenant's workload) live here once.
package pods

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// Query is what a list asks for.
type Query struct {
	// WorkloadID narrows the list to one workload; "" lists them all.
	WorkloadID string
	// FilterBy are the filterBy parameters as received (see filterby.Parse).
	FilterBy []string
	// Where are typed filters (GraphQL's PodFilter), ANDed with FilterBy's.
	Where map[string]any
	// Search is Run:ai's free-text search; "" for none.
	Search string
	// Sort is the order; the zero Sort is createdAt ascending.
	Sort filterby.Sort
	// Offset and Limit are the page asked for; nil means the default.
	Offset, Limit *int
	// Deleted lists deleted pods instead of live ones.
	Deleted bool
	// Completed keeps only completed (true) or running (false) pods; nil both.
	Completed *bool
}

// Page is one page of a list.
type Page struct {
	Pods []*models.Pod
	// Next is the offset of the next page; nil on the last page.
	Next *int
	// Total is the number of matches when Listing.Total asked for it, else 0.
	Total int
}

// CountQuery is what a count asks for: a list's filters without its order
// or page, so a count always matches its list.
type CountQuery struct {
	FilterBy  []string
	Where     map[string]any
	Search    string
	Deleted   bool
	Completed *bool
}

// Service is the pods capability for both faces.
type Service struct{ store *store.Store }

// New is the pods service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// MayRead is the permission every read of pods, workloads and projects
// needs: workloads.read. Each method checks it first; a face that reads
// parameters of its own before calling one asks it first, so that a
// refusal answers before a bad parameter does.
func (s *Service) MayRead(c *auth.Caller) error { return c.Require(auth.WorkloadsRead) }

// List answers a page of the caller's tenant's pods, every column and no
// total: Prepare and Read in one.
func (s *Service) List(ctx context.Context, c *auth.Caller, q Query) (Page, error) {
	l, err := s.Prepare(c, q)
	if err != nil {
		return Page{}, err
	}
	return l.Read(ctx)
}

// Listing is a checked list, ready to read.
type Listing struct {
	// Columns are the only columns to read (nil: every column), for a face
	// that shows only some fields.
	Columns []string
	// Total asks for the number of matches as well, which costs a second
	// statement; a list without it costs one.
	Total bool

	store      *store.Store
	q          store.PodQuery
	page       paging.Page
	workloadID string
}

// Prepare checks q for the caller (the permission, the filters, the page)
// without reading the database. A face that works out Columns and Total
// from its own request does so on the Listing, once q is known to be good.
func (s *Service) Prepare(c *auth.Caller, q Query) (*Listing, error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	sq, err := storeQuery(c, q.count())
	if err != nil {
		return nil, err
	}
	page, err := paging.Parse(q.Offset, q.Limit)
	if err != nil {
		return nil, err
	}
	if err := bounds.Text("workloadId", q.WorkloadID, bounds.MaxID); err != nil {
		return nil, err
	}
	sq.Sort = q.Sort
	return &Listing{store: s.store, q: sq, page: page, workloadID: podfield.CanonicalUUID(q.WorkloadID)}, nil
}

// Read answers the page. The page reads one row past its limit to know
// whether a next page exists, so it needs no count. It is 404 when the
// list names a workload that is missing or another tenant's.
func (l *Listing) Read(ctx context.Context) (Page, error) {
	st, sq := l.store, l.q
	if l.workloadID != "" {
		ok, err := st.TenantHasWorkload(ctx, sq.TenantID, l.workloadID)
		if err != nil {
			return Page{}, err
		}
		if !ok {
			return Page{}, apierr.NotFound(apierr.NotFoundCode, "workload %q not found", l.workloadID)
		}
		sq.WorkloadID = l.workloadID
	}
	sq.Columns = l.Columns
	list, more, err := st.PodPage(ctx, sq, l.page.Offset, l.page.Limit)
	if err != nil {
		return Page{}, err
	}
	out := Page{Pods: list}
	if more {
		next := l.page.Offset + l.page.Limit
		out.Next = &next
	}
	if l.Total {
		n, err := st.CountPods(ctx, sq)
		if err != nil {
			return Page{}, err
		}
		out.Total = int(n)
	}
	return out, nil
}

// Count answers how many of the caller's tenant's pods q matches.
func (s *Service) Count(ctx context.Context, c *auth.Caller, q CountQuery) (int, error) {
	if err := s.MayRead(c); err != nil {
		return 0, err
	}
	sq, err := storeQuery(c, q)
	if err != nil {
		return 0, err
	}
	n, err := s.store.CountPods(ctx, sq)
	return int(n), err
}

// OfRevision answers every pod of one inference revision, oldest first;
// such lists are small by nature and not paged. It is 404 when the
// revision is missing or another tenant's.
func (s *Service) OfRevision(ctx context.Context, c *auth.Caller, revisionID string, deleted bool) ([]*models.Pod, error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	if err := bounds.Text("revisionId", revisionID, bounds.MaxID); err != nil {
		return nil, err
	}
	revisionID = podfield.CanonicalUUID(revisionID)
	ok, err := s.store.TenantHasRevision(ctx, c.TenantID, revisionID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.NotFound(apierr.NotFoundCode, "revision %q not found", revisionID)
	}
	return s.store.Pods(ctx, store.PodQuery{TenantID: c.TenantID, RevisionID: revisionID, Deleted: deleted})
}

// count is q's filtering.
func (q Query) count() CountQuery {
	return CountQuery{FilterBy: q.FilterBy, Where: q.Where, Search: q.Search, Deleted: q.Deleted, Completed: q.Completed}
}

// storeQuery checks the filtering shared by lists and counts.
func storeQuery(c *auth.Caller, q CountQuery) (store.PodQuery, error) {
	if len(q.FilterBy) > bounds.MaxFilters {
		return store.PodQuery{}, apierr.BadRequest("filterBy: %d filters, more than %d", len(q.FilterBy), bounds.MaxFilters)
	}
	for i, f := range q.FilterBy {
		if err := bounds.Text(fmt.Sprintf("filterBy[%d]", i), f, bounds.MaxParam); err != nil {
			return store.PodQuery{}, err
		}
	}
	if err := bounds.Text("search", q.Search, bounds.MaxSearch); err != nil {
		return store.PodQuery{}, err
	}
	filters, err := filterby.Parse(q.FilterBy)
	if err != nil {
		return store.PodQuery{}, badParam(err)
	}
	typed, err := whereFilters(q.Where)
	if err != nil {
		return store.PodQuery{}, err
	}
	filters = append(filters, typed...)
	if len(filters) > bounds.MaxFilters {
		return store.PodQuery{}, apierr.BadRequest("filterBy: %d filters, more than %d", len(filters), bounds.MaxFilters)
	}
	for _, f := range filters {
		if err := bounds.Text(fmt.Sprintf("filterBy %q value", f.Field+string(f.Op)), f.Value, bounds.MaxFilterValue); err != nil {
			return store.PodQuery{}, err
		}
	}
	return store.PodQuery{TenantID: c.TenantID, Deleted: q.Deleted, Completed: q.Completed, Search: q.Search, Filters: filters}, nil
}

// badParam turns a filterby rejection into the 400 that names it.
func badParam(err error) error {
	var fe *filterby.Error
	if errors.As(err, &fe) {
		return apierr.BadRequest("%s", fe.Error())
	}
	return err
}

// CountCompaction folds the kept pod counts (store.CompactPodCounts) every
// interval until ctx ends: every replica runs it, and two at once are safe.
type CountCompaction struct {
	store    *store.Store
	interval time.Duration
}

// NewCountCompaction is a runner over st, folding every interval.
func NewCountCompaction(st *store.Store, interval time.Duration) *CountCompaction {
	return &CountCompaction{store: st, interval: interval}
}

// Run folds at once, then every interval, until ctx ends.
func (c *CountCompaction) Run(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		if err := c.store.CompactPodCounts(ctx); err != nil && ctx.Err() == nil {
			slog.ErrorContext(ctx, "pod count compaction failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
