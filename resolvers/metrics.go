package resolvers

import (
	"context"
	"time"

	"gpugraph/graph/model"
)

func (r *queryResolver) PodMetrics(ctx context.Context, workloadID string, podID string, metricTypes []model.PodMetricType, start time.Time, end time.Time, numberOfSamples *int) (*model.PodMetrics, error) {
	return nil, errNotYet
}
