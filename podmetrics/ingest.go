package podmetrics

import (
	"context"
	"errors"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/dataset"
	"gpugraph/store"
)

// Batch is what a metrics.write key pushes: podMetrics and podHistograms
// entries in the data set file's shape.
type Batch struct {
	PodMetrics    []dataset.MetricSeries
	PodHistograms []dataset.HistogramSeries
}

// Ingested counts what a batch stored.
type Ingested struct {
	Samples          int
	HistogramSamples int
}

// Ingest stores a batch for a caller holding metrics.write, in one
// transaction, or nothing: the first bad entry refuses the batch with a
// 400 naming it. The checks are the data set loader's
// (dataset.CheckSamples), so a sample the loader takes is taken here too.
// A key writes only its own tenant's pods; another tenant's pod answers
// exactly as a missing one, as a bad entry of the batch. With a metrics
// source src that ingestion does not write (nil is the store), it answers
// 409 after the permission check, saying where metrics come from.
func Ingest(ctx context.Context, st *store.Store, src Source, c *auth.Caller, b Batch) (Ingested, error) {
	if !c.Can(auth.MetricsWrite) {
		return Ingested{}, apierr.MissingPermission(auth.MetricsWrite)
	}
	if src != nil && !src.Ingests() {
		return Ingested{}, refuseIngest(src)
	}
	if len(b.PodMetrics)+len(b.PodHistograms) == 0 {
		return Ingested{}, apierr.BadRequest("the batch is empty: send podMetrics and/or podHistograms entries")
	}
	s, err := dataset.CheckSamples(b.PodMetrics, b.PodHistograms)
	if err != nil {
		return Ingested{}, badEntry(err)
	}
	ids := make([]string, len(s.Pods))
	for i, p := range s.Pods {
		ids[i] = p.ID
	}
	err = st.InTx(ctx, func(tx *store.Txn) error {
		found, err := st.TenantPodIDs(tx, c.TenantID, ids)
		if err != nil {
			return err
		}
		for _, p := range s.Pods {
			if !found[p.ID] {
				return apierr.BadRequest("%s: podId %q names no pod of this key's tenant", p.Row, p.ID)
			}
		}
		return st.WriteSamples(tx, s.Metrics, s.Histograms)
	})
	if err != nil {
		return Ingested{}, err
	}
	return Ingested{Samples: len(s.Metrics), HistogramSamples: len(s.Histograms)}, nil
}

// badEntry turns the checker's refusal into the 400 a client sees.
func badEntry(err error) error {
	var fe *dataset.Error
	if errors.As(err, &fe) {
		return apierr.BadRequest("%s: %s", fe.Row, fe.Msg)
	}
	return err
}
