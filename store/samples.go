package store

import (
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// The writes behind sample ingestion (POST /api/v1/metrics/samples). The
// caller runs them in one InTx, so that a batch refused half-way stores
// nothing.

// TenantPodIDs answers which of ids are pods of the tenant.
func (s *Store) TenantPodIDs(tx *Txn, tenantID int, ids []string) (map[string]bool, error) {
	found := make(map[string]bool, len(ids))
	// Chunks keep the IN list far below either engine's limit on bound
	// parameters, whatever the batch names.
	const chunk = 500
	for len(ids) > 0 {
		k := min(chunk, len(ids))
		var got []string
		if err := tx.db.Table("pods").Where("tenant_id = ? AND id IN ?", tenantID, ids[:k]).Pluck("id", &got).Error; err != nil {
			return nil, err
		}
		for _, id := range got {
			found[id] = true
		}
		ids = ids[k:]
	}
	return found, nil
}

// sampleBatchSize is how many rows one INSERT carries.
const sampleBatchSize = 400

// WriteSamples stores checked samples. A sample of a series and instant
// already stored is replaced, so a batch sent twice (a client's retry)
// stores the same rows once.
func (s *Store) WriteSamples(tx *Txn, metrics []models.MetricSample, histograms []models.HistogramSample) error {
	if err := upsertSamples(tx.db, metrics, "pod_id", "type", "labels", "ts"); err != nil {
		return fmt.Errorf("podMetrics: %w", err)
	}
	if err := upsertSamples(tx.db, histograms, "pod_id", "type", "ts"); err != nil {
		return fmt.Errorf("podHistograms: %w", err)
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
