package resolvers

import (
	"context"
	"time"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/services/podmetrics"
)

// PodMetrics answers the podMetrics field from podmetrics.Service.Query.
func (r *queryResolver) PodMetrics(ctx context.Context, workloadID string, podID string, metricTypes []model.PodMetricType, start time.Time, end time.Time, numberOfSamples *int) (*model.PodMetrics, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	types := make([]string, len(metricTypes))
	for i, t := range metricTypes {
		types[i] = string(t)
	}
	res, err := r.Services.Metrics.Query(ctx, c, podmetrics.Request{WorkloadID: workloadID, PodID: podID,
		Types: types, Start: start, End: end, NumberOfSamples: numberOfSamples})
	if err != nil {
		return nil, err
	}
	return podMetricsModel(res), nil
}

func podMetricsModel(res podmetrics.Result) *model.PodMetrics {
	out := &model.PodMetrics{
		Measurements: make([]*model.Measurement, len(res.Measurements)),
		OmittedTypes: make([]model.PodMetricType, len(res.Omitted)),
	}
	for i, m := range res.Measurements {
		values := make([]*model.MetricValue, len(m.Values))
		for j, v := range m.Values {
			values[j] = &model.MetricValue{Value: v.Value, Timestamp: v.T}
		}
		out.Measurements[i] = &model.Measurement{Type: m.Type, Labels: m.Labels, Values: values}
	}
	for _, h := range res.Histograms {
		values := make([]*model.HistogramValue, len(h.Values))
		for j, v := range h.Values {
			values[j] = &model.HistogramValue{Timestamp: v.T, Data: v.Data}
		}
		out.Histogram = append(out.Histogram, &model.HistogramSeries{Type: h.Type, Values: values})
	}
	for i, t := range res.Omitted {
		out.OmittedTypes[i] = model.PodMetricType(t)
	}
	return out
}
