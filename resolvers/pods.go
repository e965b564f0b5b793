package resolvers

import (
	"context"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/services/pods"
	"gpugraph/models"
)

// The Run:ai pods: GraphQL arguments → package pods → GraphQL types. What
// only GraphQL knows (which fields a query selects, so which columns to
// read and whether to count) is worked out here and passed down as data.

// Pods lists the caller's tenant's pods a page at a time. PodList.Total is
// counted only when the query selects it.
func (r *queryResolver) Pods(ctx context.Context, where map[string]any, filterBy []string, search *string, sortBy *filterby.SortField, sortOrder *filterby.Order, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	return r.podList(ctx, "", where, filterBy, search, sortBy, sortOrder, offset, limit, deleted, completed)
}

// PodsCount counts what Pods would list.
func (r *queryResolver) PodsCount(ctx context.Context, where map[string]any, filterBy []string, search *string, deleted *bool, completed *bool) (int, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return 0, err
	}
	return r.Services.Pods.Count(ctx, c, pods.CountQuery{FilterBy: filterBy, Where: podWhere(where), Search: orEmpty(search), Deleted: isTrue(deleted), Completed: completed})
}

// WorkloadPods is Pods of one workload; 404 when the workload is missing or
// another tenant's.
func (r *queryResolver) WorkloadPods(ctx context.Context, workloadID string, where map[string]any, filterBy []string, search *string, sortBy *filterby.SortField, sortOrder *filterby.Order, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	return r.podList(ctx, workloadID, where, filterBy, search, sortBy, sortOrder, offset, limit, deleted, completed)
}

// RevisionPods lists every pod of one inference revision, oldest first;
// 404 when the revision is missing or another tenant's.
func (r *queryResolver) RevisionPods(ctx context.Context, revisionID string, deleted *bool) ([]*models.Pod, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	list, err := r.Services.Pods.OfRevision(ctx, c, revisionID, isTrue(deleted))
	if err != nil {
		return nil, err
	}
	if err := fieldmodel.Prefetch(ctx, list); err != nil {
		return nil, err
	}
	return list, nil
}

func (r *queryResolver) podList(ctx context.Context, workloadID string, where map[string]any, filterBy []string, search *string, sortBy *filterby.SortField, sortOrder *filterby.Order, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	l, err := r.Services.Pods.Prepare(c, pods.Query{
		WorkloadID: workloadID,
		FilterBy:   filterBy,
		Where:      podWhere(where),
		Search:     orEmpty(search),
		Sort:       filterby.SortOf(sortBy, sortOrder),
		Offset:     offset,
		Limit:      limit,
		Deleted:    isTrue(deleted),
		Completed:  completed,
	})
	if err != nil {
		return nil, err
	}
	l.Columns, l.Total = fieldmodel.PageColumns(ctx, "Pod"), fieldmodel.Selects(ctx, "total")
	page, err := l.Read(ctx)
	if err != nil {
		return nil, err
	}
	if err := fieldmodel.Prefetch(ctx, page.Pods); err != nil {
		return nil, err
	}
	return &model.PodList{Pods: page.Pods, Next: page.Next, Total: page.Total}, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
