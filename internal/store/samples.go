package store

import (
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// The fixture loader's sample writes, inside its one transaction (so a
// file refused half-way stores nothing). Ingestion (POST
// /api/v1/metrics/samples) stages and publishes instead: ingest.go.

// sampleBatchSize is how many rows one INSERT carries.
const sampleBatchSize = 400

// WriteSamples stores checked samples. A sample of a series and instant
// already stored is replaced, so a batch sent twice (a client's retry)
// stores the same rows once.
func (s *Store) WriteSamples(tx *Txn, metrics []models.MetricSample, histograms []models.HistogramSample) error {
	if s.Dialect == Postgres {
		if err := upsertMetricsPG(tx.db, metrics); err != nil {
			return fmt.Errorf("podMetrics: %w", err)
		}
	} else if err := upsertSamples(tx.db, metrics, "pod_id", "type", "labels", "ts"); err != nil {
		return fmt.Errorf("podMetrics: %w", err)
	}
	if err := upsertSamples(tx.db, histograms, "pod_id", "type", "ts"); err != nil {
		return fmt.Errorf("podHistograms: %w", err)
	}
	return nil
}

// pgSampleChunk is how many samples one PostgreSQL statement carries: as
// five arrays they are five bound parameters whatever the count, so the
// chunk only bounds one statement's memory.
const pgSampleChunk = 50000

// upsertMetricsPG writes metric samples on PostgreSQL as arrays unnested
// into rows: a 400,000-sample batch is 8 statements instead of 1,000
// 400-row INSERTs of 2,000 parameters each. The statement goes to the
// transaction's connection directly, since gorm would expand a slice
// argument into a parameter list. A batch never holds one key twice
// (podmetrics.CheckSamples refuses it), which ON CONFLICT DO UPDATE needs.
func upsertMetricsPG(db *gorm.DB, rows []models.MetricSample) error {
	for len(rows) > 0 {
		chunk := rows[:min(pgSampleChunk, len(rows))]
		rows = rows[len(chunk):]
		pods, types, labels := make([]string, len(chunk)), make([]string, len(chunk)), make([]string, len(chunk))
		ts, values := make([]time.Time, len(chunk)), make([]float64, len(chunk))
		for i, r := range chunk {
			pods[i], types[i], labels[i], ts[i], values[i] = r.PodID, r.Type, r.Labels, r.TS, r.Value
		}
		_, err := db.Statement.ConnPool.ExecContext(db.Statement.Context, `INSERT INTO metric_samples (pod_id, type, labels, ts, value)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::float8[])
			ON CONFLICT (pod_id, type, labels, ts) DO UPDATE SET value = EXCLUDED.value`,
			pods, types, labels, ts, values)
		if err != nil {
			return err
		}
	}
	return nil
}

// upsertSamples inserts rows, replacing those whose key (the table's
// primary key) is already stored.
func upsertSamples[T any](db *gorm.DB, rows []T, key ...string) error {
	if len(rows) == 0 {
		return nil
	}
	cols := make([]clause.Column, len(key))
	for i, k := range key {
		cols[i] = clause.Column{Name: k}
	}
	return db.Clauses(clause.OnConflict{Columns: cols, UpdateAll: true}).CreateInBatches(rows, sampleBatchSize).Error
}
