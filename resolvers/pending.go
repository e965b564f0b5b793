package resolvers

import (
	"context"
	"net/http"
	"time"

	"gpugraph/apierr"
	"gpugraph/graph/model"
	"gpugraph/models"
	"gpugraph/store"
)

func storeNodeKey(p *models.Pod) store.NodeKey {
	return store.NodeKey{ClusterID: p.ClusterID, Name: *p.NodeName}
}

var errNotYet = apierr.New(http.StatusNotImplemented, "NOT_IMPLEMENTED", "not implemented yet")

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

func (r *queryResolver) PodMetrics(ctx context.Context, workloadID string, podID string, metricTypes []model.PodMetricType, start time.Time, end time.Time, numberOfSamples *int) (*model.PodMetrics, error) {
	return nil, errNotYet
}

func (r *mutationResolver) RestartVM(ctx context.Context, id string) (*models.VM, error) {
	return nil, errNotYet
}
