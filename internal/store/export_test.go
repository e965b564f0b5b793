package store

import (
	"context"
	"time"

	"gpugraph/internal/lib/timeseries"
)

// MetricProbe and MetricScan are the two ways MetricAtSteps reads, forced,
// so the benchmark can compare them.
func (s *Store) MetricProbe(ctx context.Context, ser Series, steps []time.Time) ([]timeseries.Point, error) {
	return s.metricProbe(ctx, ser, steps, nil)
}

func (s *Store) MetricScan(ctx context.Context, ser Series, steps []time.Time) ([]timeseries.Point, error) {
	rows, err := s.MetricRange(ctx, ser, steps[0].Add(-timeseries.LookbackDelta), steps[len(steps)-1], 1<<31-1)
	return timeseries.AtSteps(rows, steps), err
}

func (s *Store) HistogramProbe(ctx context.Context, ser Series, steps []time.Time) ([]HistogramPoint, error) {
	return s.histogramProbe(ctx, ser, steps, nil)
}

// ScanFactor is how many samples per step a window may hold to be scanned.
const ScanFactor = scanFactor

// MigrationFiles are the migrations this store's engine runs, in order.
func (s *Store) MigrationFiles() ([]string, error) { return s.migrations() }

// MigrateBefore applies the migrations whose names sort before before: a
// database as an older release left it, to upgrade.
func (s *Store) MigrateBefore(ctx context.Context, before string) error {
	return s.migrate(ctx, before)
}

// WithGlobalEventLock takes, beside each log's own order, the one lock
// every event append took before decision 0047 (to compare with it).
func (s *Store) WithGlobalEventLock() { s.globalEventLock = true }

// WithNotifyInTx queues the VM event log's NOTIFY in the transaction, as
// it was before it was sent after the commit (noteAfterCommit).
func (s *Store) WithNotifyInTx() { s.notifyInTx = true }

// TouchBenchRow is a one-row write, the least a transaction that writes
// does (a restart, an agent report): the benchmarks' competing writer.
func (s *Store) TouchBenchRow(tx *Txn) error {
	return tx.db.Exec("UPDATE projects SET name = name WHERE id = 'p'").Error
}

// IDs are the locked rows' ids, in lock order.
func (r LockedRows) IDs() []string {
	ids := make([]string, len(r.rows))
	for i, row := range r.rows {
		ids[i] = row.ID
	}
	return ids
}

// HeldGPUs is how many GPUs the VM vmID holds, as tx sees it.
func HeldGPUs(tx *Txn, vmID string) (int64, error) {
	var n int64
	err := tx.db.Table("gpus").Where("holder_vm_id = ?", vmID).Count(&n).Error
	return n, err
}

// KeptCount is keptCount, for the test of which counts pod_counts answers.
var KeptCount = keptCount

// SnapshotColumns are the columns a Snapshot reads of nodes and GPUs.
func SnapshotColumns() (nodes, gpus []string) { return snapshotNodeColumns, snapshotGPUColumns }

// ExecIn runs sql in tx.
func (s *Store) ExecIn(tx *Txn, sql string, args ...any) error { return tx.db.Exec(sql, args...).Error }
