package resolvers

import (
	"context"
	"errors"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/dataset"
	"gpugraph/store"
)

// SampleBatch is what a metrics.write key pushes: podMetrics and
// podHistograms entries in the fixture's shape (SPEC §9).
type SampleBatch struct {
	PodMetrics    []dataset.MetricSeries
	PodHistograms []dataset.HistogramSeries
}

// IngestResult counts what a batch stored.
type IngestResult struct {
	Samples          int `json:"samples"`
	HistogramSamples int `json:"histogramSamples"`
}

// IngestSamples stores a batch in one transaction, or nothing: the first
// bad entry refuses the batch with a 400 naming it. The checks are the
// fixture loader's (dataset.CheckSamples). A key writes only its own
// tenant's pods; another tenant's pod answers exactly as a missing one,
// as a bad entry of the batch.
func (r *Resolver) IngestSamples(ctx context.Context, b SampleBatch) (*IngestResult, error) {
	c, err := auth.Require(ctx, auth.MetricsWrite)
	if err != nil {
		return nil, err
	}
	if len(b.PodMetrics)+len(b.PodHistograms) == 0 {
		return nil, apierr.BadRequest("the batch is empty: send podMetrics and/or podHistograms entries")
	}
	s, err := dataset.CheckSamples(b.PodMetrics, b.PodHistograms)
	if err != nil {
		return nil, badEntry(err)
	}
	ids := make([]string, len(s.Pods))
	for i, p := range s.Pods {
		ids[i] = p.ID
	}
	err = r.Store.InTx(ctx, func(tx *store.Txn) error {
		found, err := r.Store.TenantPodIDs(tx, c.TenantID, ids)
		if err != nil {
			return err
		}
		for _, p := range s.Pods {
			if !found[p.ID] {
				return apierr.BadRequest("%s: podId %q names no pod of this key's tenant", p.Row, p.ID)
			}
		}
		return r.Store.WriteSamples(tx, s.Metrics, s.Histograms)
	})
	if err != nil {
		return nil, err
	}
	return &IngestResult{Samples: len(s.Metrics), HistogramSamples: len(s.Histograms)}, nil
}

// badEntry turns the checker's refusal into the 400 a client sees.
func badEntry(err error) error {
	var fe *dataset.Error
	if errors.As(err, &fe) {
		return apierr.BadRequest("%s: %s", fe.Row, fe.Msg)
	}
	return err
}
