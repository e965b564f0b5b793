package resolvers

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/filterby"
	"gpugraph/graph/model"
	"gpugraph/models"
	"gpugraph/store"
)

// The Run:ai pods of SPEC §6. The REST shims (rest/runai.go) call these same
// methods with the parameters translated, so both faces answer alike.

// Pods lists the caller's tenant's pods a page at a time. PodList.Total is
// counted only when a GraphQL query selects it; the page itself reads one
// row past the limit to know whether a next page exists, so a list without
// total (every REST list) costs one statement.
func (r *queryResolver) Pods(ctx context.Context, filterBy []string, search *string, sortBy *model.PodSortField, sortOrder *model.SortOrder, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	return r.podList(ctx, "", filterBy, search, sortBy, sortOrder, offset, limit, deleted, completed)
}

// PodsCount counts what Pods would list.
func (r *queryResolver) PodsCount(ctx context.Context, filterBy []string, search *string, deleted *bool, completed *bool) (int, error) {
	c, err := auth.Require(ctx, auth.WorkloadsRead)
	if err != nil {
		return 0, err
	}
	q, err := podQuery(c, filterBy, search, deleted, completed)
	if err != nil {
		return 0, err
	}
	n, err := r.Store.CountPods(ctx, q)
	return int(n), err
}

// WorkloadPods is Pods of one workload; 404 when the workload is missing or
// another tenant's.
func (r *queryResolver) WorkloadPods(ctx context.Context, workloadID string, filterBy []string, search *string, sortBy *model.PodSortField, sortOrder *model.SortOrder, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	return r.podList(ctx, workloadID, filterBy, search, sortBy, sortOrder, offset, limit, deleted, completed)
}

// RevisionPods lists every pod of one inference revision, oldest first;
// 404 when the revision is missing or another tenant's.
func (r *queryResolver) RevisionPods(ctx context.Context, revisionID string, deleted *bool) ([]*models.Pod, error) {
	c, err := auth.Require(ctx, auth.WorkloadsRead)
	if err != nil {
		return nil, err
	}
	ok, err := r.Store.TenantHasRevision(ctx, c.TenantID, revisionID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierr.NotFound(apierr.NotFoundCode, "revision %q not found", revisionID)
	}
	pods, err := r.Store.Pods(ctx, store.PodQuery{TenantID: c.TenantID, RevisionID: revisionID, Deleted: isTrue(deleted)})
	if err != nil {
		return nil, err
	}
	if err := prefetchBelow(ctx, pods); err != nil {
		return nil, err
	}
	return pods, nil
}

func (r *queryResolver) podList(ctx context.Context, workloadID string, filterBy []string, search *string, sortBy *model.PodSortField, sortOrder *model.SortOrder, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	c, err := auth.Require(ctx, auth.WorkloadsRead)
	if err != nil {
		return nil, err
	}
	q, err := podQuery(c, filterBy, search, deleted, completed)
	if err != nil {
		return nil, err
	}
	if q.Order, err = podOrder(sortBy, sortOrder); err != nil {
		return nil, err
	}
	page, err := ParsePage(offset, limit)
	if err != nil {
		return nil, err
	}
	if workloadID != "" {
		ok, err := r.Store.TenantHasWorkload(ctx, c.TenantID, workloadID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apierr.NotFound(apierr.NotFoundCode, "workload %q not found", workloadID)
		}
		q.WorkloadID = workloadID
	}
	q.Columns = podColumns(ctx)
	pods, more, err := r.Store.PodPage(ctx, q, page.Offset, page.Limit)
	if err != nil {
		return nil, err
	}
	if err := prefetchBelow(ctx, pods); err != nil {
		return nil, err
	}
	list := &model.PodList{Pods: pods}
	if more {
		next := page.Offset + page.Limit
		list.Next = &next
	}
	if selects(ctx, "total") {
		n, err := r.Store.CountPods(ctx, q)
		if err != nil {
			return nil, err
		}
		list.Total = int(n)
	}
	return list, nil
}

// podQuery checks the filtering arguments shared by lists and counts.
func podQuery(c *auth.Caller, filterBy []string, search *string, deleted, completed *bool) (store.PodQuery, error) {
	filters, err := filterby.Parse(filterBy)
	if err != nil {
		return store.PodQuery{}, badFilter(err)
	}
	q := store.PodQuery{TenantID: c.TenantID, Deleted: isTrue(deleted), Completed: completed, Filters: filterby.Scope(filters)}
	if search != nil {
		q.Search = *search
	}
	return q, nil
}

// podSortFields names each PodSortField as filterBy and the REST sortBy do.
var podSortFields = map[model.PodSortField]string{
	model.PodSortFieldName:            "name",
	model.PodSortFieldClusterID:       "clusterId",
	model.PodSortFieldWorkloadID:      "workloadId",
	model.PodSortFieldRevisionID:      "revisionId",
	model.PodSortFieldNodeName:        "nodeName",
	model.PodSortFieldCurrentNodepool: "currentNodepool",
	model.PodSortFieldCreatedAt:       "createdAt",
	model.PodSortFieldCompletedAt:     "completedAt",
	model.PodSortFieldDeletedAt:       "deletedAt",
	model.PodSortFieldK8sPhase:        "k8sPhase",
}

// PodSortFieldNamed answers the PodSortField of a REST sortBy name (as
// filterby.ParseSort canonicalises it).
func PodSortFieldNamed(name string) (model.PodSortField, bool) {
	for f, n := range podSortFields {
		if n == name {
			return f, true
		}
	}
	return "", false
}

func podOrder(sortBy *model.PodSortField, sortOrder *model.SortOrder) (store.PodOrder, error) {
	by, order := "", ""
	if sortBy != nil {
		n, ok := podSortFields[*sortBy]
		if !ok {
			return nil, apierr.BadRequest("unknown sortBy %q", string(*sortBy))
		}
		by = n
	}
	if sortOrder != nil && *sortOrder == model.SortOrderDesc {
		order = "desc"
	}
	s, err := filterby.ParseSort(by, order)
	if err != nil {
		return nil, badFilter(err)
	}
	return s, nil
}

// badFilter turns a filterby rejection into the 400 that names it.
func badFilter(err error) error {
	var fe *filterby.Error
	if errors.As(err, &fe) {
		return apierr.BadRequest("%s", fe.Error())
	}
	return err
}

// selects reports whether the GraphQL field being resolved selects the
// subfield name; false outside GraphQL (the REST shims).
func selects(ctx context.Context, name string) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return false
	}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

func isTrue(b *bool) bool { return b != nil && *b }
