package podmetrics

import (
	"context"
	"errors"
	"net/http"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/podfield"
)

// MaxBatchSamples bounds the samples (and histogram samples) of one
// ingestion batch. It is set from store's BenchmarkIngestBatch
// (docs/decisions/0038-pod-metrics-cost.md has the figures): a batch this size publishes
// on SQLite in
// tens of milliseconds, the time another tenant's restart may wait for
// the database's one writer (100,000 held it 1.4 s), and writes on
// PostgreSQL in under a second, far inside the 30 s request timeout, on a
// host running other loads. A client with more sends more batches, as
// Prometheus's remote write sends 2,000 samples a request.
const MaxBatchSamples = 10_000

// TooManySamplesCode answers a batch over MaxBatchSamples (HTTP 413).
const TooManySamplesCode = "PAYLOAD_TOO_LARGE"

// Batch is a batch of samples as it is read: podMetrics and podHistograms
// entries in the data set file's shape, each checked as it is added
// (SampleChecker: the loader's checks, so a sample the loader takes is
// taken here too) and kept only as the rows it becomes.
type Batch struct {
	c *SampleChecker
}

// NewBatch starts a batch.
func NewBatch() *Batch { return &Batch{c: NewSampleChecker()} }

// AddMetric checks the next podMetrics entry: a bad one is a 400 naming
// it, one past MaxBatchSamples a 413.
func (b *Batch) AddMetric(s MetricSeries) error {
	s.PodID = podfield.CanonicalUUID(s.PodID)
	if err := b.room(len(s.Samples)); err != nil {
		return err
	}
	return badEntry(b.c.Metric(s))
}

// AddHistogram checks the next podHistograms entry as AddMetric does.
func (b *Batch) AddHistogram(h HistogramSeries) error {
	h.PodID = podfield.CanonicalUUID(h.PodID)
	if err := b.room(len(h.Samples)); err != nil {
		return err
	}
	return badEntry(b.c.Histogram(h))
}

func (b *Batch) room(n int) error {
	if b.c.Len()+n > MaxBatchSamples {
		return apierr.New(http.StatusRequestEntityTooLarge, TooManySamplesCode,
			"the batch holds more than %d samples, the most one request may write: send the rest in further batches", MaxBatchSamples)
	}
	return nil
}

// Ingested counts what a batch stored.
type Ingested struct {
	Samples          int
	HistogramSamples int
}

// MayWrite is the permission ingestion needs: metrics.write. A face that
// reads parameters of its own before it reads a batch asks it first, so
// that a refusal answers before a bad parameter does.
func (s *Service) MayWrite(c *auth.Caller) error { return c.Require(auth.MetricsWrite) }

// MayIngest refuses, before a batch is read, a caller without
// metrics.write (MayWrite), and every caller when the server reads metrics
// from a source that ingestion does not write: a 409 saying where metrics
// come from.
func (s *Service) MayIngest(c *auth.Caller) error {
	if err := s.MayWrite(c); err != nil {
		return err
	}
	if !s.source.Ingests() {
		return refuseIngest(s.source)
	}
	return nil
}

// Ingest stores a batch for a caller holding metrics.write, whole or not
// at all (store.IngestSamples). A key writes only its own tenant's pods;
// another tenant's pod answers exactly as a missing one, as a bad entry
// of the batch, checked in the transaction that writes.
func (s *Service) Ingest(ctx context.Context, c *auth.Caller, b *Batch) (Ingested, error) {
	if err := s.MayIngest(c); err != nil {
		return Ingested{}, err
	}
	batch := b.c.Samples()
	if len(batch.Metrics)+len(batch.Histograms) == 0 {
		return Ingested{}, apierr.BadRequest("the batch is empty: send podMetrics and/or podHistograms entries")
	}
	ids := make([]string, len(batch.Pods))
	for i, p := range batch.Pods {
		ids[i] = p.ID
	}
	err := s.store.IngestSamples(ctx, c.TenantID, ids, batch.Metrics, batch.Histograms, func(found map[string]bool) error {
		for _, p := range batch.Pods {
			if !found[p.ID] {
				return apierr.BadRequest("%s: podId %q names no pod of this key's tenant", p.Row, p.ID)
			}
		}
		return nil
	})
	if err != nil {
		return Ingested{}, err
	}
	return Ingested{Samples: len(batch.Metrics), HistogramSamples: len(batch.Histograms)}, nil
}

// badEntry turns the checker's refusal into the 400 a client sees.
func badEntry(err error) error {
	var fe *EntryError
	if errors.As(err, &fe) {
		return apierr.BadRequest("%s: %s", fe.Entry, fe.Msg)
	}
	return err
}
