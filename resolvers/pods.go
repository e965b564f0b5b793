package resolvers

import (
	"context"

	"gpugraph/graph/model"
	"gpugraph/models"
)

func (r *queryResolver) Pods(ctx context.Context, filterBy []string, search *string, sortBy *model.PodSortField, sortOrder *model.SortOrder, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	return nil, errNotYet
}

func (r *queryResolver) PodsCount(ctx context.Context, filterBy []string, search *string, deleted *bool, completed *bool) (int, error) {
	return 0, errNotYet
}

func (r *queryResolver) WorkloadPods(ctx context.Context, workloadID string, filterBy []string, search *string, sortBy *model.PodSortField, sortOrder *model.SortOrder, offset *int, limit *int, deleted *bool, completed *bool) (*model.PodList, error) {
	return nil, errNotYet
}

func (r *queryResolver) RevisionPods(ctx context.Context, revisionID string, deleted *bool) ([]*models.Pod, error) {
	return nil, errNotYet
}
