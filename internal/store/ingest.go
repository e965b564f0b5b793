package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"gpugraph/models"
)

// IngestSamples writes one ingestion batch (POST /api/v1/metrics/samples),
// whole or not at all, without holding others up while it does:
//
//   - the rows are staged first in a table private to one connection
//     (a temporary table), which takes no lock anyone else waits on;
//   - then one transaction reads which of podIDs are the tenant's pods,
//     lets check refuse the batch (its error rolls everything back and is
//     returned as it is), and publishes the staged rows into
//     metric_samples and histogram_samples with INSERT … SELECT, a sample
//     already stored for a series and instant being replaced (so a batch
//     sent twice, a client's retry, stores its rows once).
//
// On PostgreSQL the rows are staged with COPY (pgx CopyFrom) inside the
// publishing transaction; MVCC lets readers and other writers through,
// and rows are published in key order, so two batches touching the same
// samples lock them in one order. On SQLite, whose one writer every
// restart and report waits for, staging runs outside any transaction of
// the database (a temporary table lives in the connection's own temp
// database), so the writer is held only for the publishing INSERT …
// SELECT: a copy inside the engine, about 2 µs a sample
// (docs/decisions/0038-pod-metrics-cost.md has the figures MaxBatchSamples is set from).
//
// A batch must not hold one key twice (dataset's checker refuses it),
// which ON CONFLICT DO UPDATE needs.
func (s *Store) IngestSamples(ctx context.Context, tenantID int, podIDs []string, metrics []models.MetricSample,
	histograms []models.HistogramSample, check func(found map[string]bool) error) error {
	sqlDB, err := s.DB.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.Dialect == Postgres {
		return conn.Raw(func(dc any) error {
			return retried(ctx, func() error {
				return ingestPG(ctx, dc.(*stdlib.Conn).Conn(), tenantID, podIDs, metrics, histograms, check)
			})
		})
	}
	return ingestSQLite(ctx, conn, tenantID, podIDs, metrics, histograms, check)
}

// retried runs fn again, as tx does, while the engine says it lost a race.
func retried(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !Retryable(err) || attempt == maxAttempts {
			return err
		}
		backoff := time.Duration(attempt*attempt)*time.Millisecond + time.Duration(rand.Int64N(int64(2*time.Millisecond)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// The staging tables: temporary, so private to the connection that fills
// them, and without keys (the batch is checked already).
const (
	stagedMetrics    = "gpugraph_staged_metric_samples"
	stagedHistograms = "gpugraph_staged_histogram_samples"
)

var (
	metricColumns    = []string{"pod_id", "type", "labels", "ts", "value"}
	histogramColumns = []string{"pod_id", "type", "ts", "buckets"}
)

// publishSQL is the statement that moves staged rows into their table, in
// key order, replacing a sample stored for the same series and instant.
// "WHERE true" is SQLite's way to tell an upsert's ON from a join's.
func publishSQL(table, staged string, cols, key []string, update string) string {
	c := strings.Join(cols, ", ")
	k := strings.Join(key, ", ")
	return "INSERT INTO " + table + " (" + c + ") SELECT " + c + " FROM " + staged + " WHERE true ORDER BY " + k +
		" ON CONFLICT (" + k + ") DO UPDATE SET " + update + " = EXCLUDED." + update
}

var (
	publishMetrics = publishSQL("metric_samples", stagedMetrics, metricColumns,
		[]string{"pod_id", "type", "labels", "ts"}, "value")
	publishHistograms = publishSQL("histogram_samples", stagedHistograms, histogramColumns,
		[]string{"pod_id", "type", "ts"}, "buckets")
)

func ingestPG(ctx context.Context, conn *pgx.Conn, tenantID int, podIDs []string, metrics []models.MetricSample,
	histograms []models.HistogramSample, check func(map[string]bool) error) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	rows, err := tx.Query(ctx, "SELECT id FROM pods WHERE tenant_id = $1 AND id = ANY($2)", tenantID, podIDs)
	if err != nil {
		return err
	}
	found := make(map[string]bool, len(podIDs))
	err = readIDs(rows, found)
	rows.Close()
	if err != nil {
		return err
	}
	if err := check(found); err != nil {
		return err
	}
	if len(metrics) > 0 {
		src := &rowSource[models.MetricSample]{rows: metrics, row: make([]any, len(metricColumns)),
			fill: func(m *models.MetricSample, r []any) {
				r[0], r[1], r[2], r[3], r[4] = m.PodID, m.Type, m.Labels, m.TS, m.Value
			}}
		if err := copyAndPublish(ctx, tx, "metric_samples", stagedMetrics, metricColumns, src, publishMetrics); err != nil {
			return fmt.Errorf("podMetrics: %w", err)
		}
	}
	if len(histograms) > 0 {
		src := &rowSource[models.HistogramSample]{rows: histograms, row: make([]any, len(histogramColumns)),
			fill: func(h *models.HistogramSample, r []any) { r[0], r[1], r[2], r[3] = h.PodID, h.Type, h.TS, h.Buckets }}
		if err := copyAndPublish(ctx, tx, "histogram_samples", stagedHistograms, histogramColumns, src, publishHistograms); err != nil {
			return fmt.Errorf("podHistograms: %w", err)
		}
	}
	return tx.Commit(ctx)
}

// copyAndPublish stages rows in a temporary table like table, dropped at
// commit, with COPY, and publishes them into table.
func copyAndPublish(ctx context.Context, tx pgx.Tx, table, staged string, cols []string, rows pgx.CopyFromSource, publish string) error {
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE "+staged+" (LIKE "+table+") ON COMMIT DROP"); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{staged}, cols, rows); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, publish)
	return err
}

// readIDs adds the one text column of every row to found; the caller
// closes rows.
func readIDs(rows rowIter, found map[string]bool) error {
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		found[id] = true
	}
	return rows.Err()
}

// rowSource feeds CopyFrom one row at a time from a slice, through one
// reused value slice (CopyFrom encodes each row before asking the next).
type rowSource[T any] struct {
	rows []T
	i    int
	row  []any
	fill func(*T, []any)
}

func (r *rowSource[T]) Next() bool {
	r.i++
	return r.i <= len(r.rows)
}

func (r *rowSource[T]) Values() ([]any, error) {
	r.fill(&r.rows[r.i-1], r.row)
	return r.row, nil
}

func (r *rowSource[T]) Err() error { return nil }

// stageChunk is how many rows one staging INSERT carries on SQLite: 200
// rows of 5 columns bind 1,000 parameters, far below SQLite's limit.
const stageChunk = 200

func ingestSQLite(ctx context.Context, conn *sql.Conn, tenantID int, podIDs []string, metrics []models.MetricSample,
	histograms []models.HistogramSample, check func(map[string]bool) error) error {
	// The temporary tables are the connection's; they are emptied before
	// and after, since the connection goes back to the pool.
	for _, stmt := range []string{
		"CREATE TEMP TABLE IF NOT EXISTS " + stagedMetrics + " (pod_id text, type text, labels text, ts datetime, value real)",
		"CREATE TEMP TABLE IF NOT EXISTS " + stagedHistograms + " (pod_id text, type text, ts datetime, buckets text)",
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	empty := func(ctx context.Context) {
		_, _ = conn.ExecContext(ctx, "DELETE FROM temp."+stagedMetrics)
		_, _ = conn.ExecContext(ctx, "DELETE FROM temp."+stagedHistograms)
	}
	empty(ctx)
	defer empty(context.WithoutCancel(ctx))
	// One transaction of the connection's temp database alone: BEGIN
	// DEFERRED takes no lock of the main database until a statement
	// touches it, and these statements never do.
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return err
	}
	err := stageSQLite(ctx, conn, stagedMetrics, metricColumns, metrics, func(m *models.MetricSample, args []any) []any {
		return append(args, m.PodID, m.Type, m.Labels, m.TS, m.Value)
	})
	if err == nil {
		err = stageSQLite(ctx, conn, stagedHistograms, histogramColumns, histograms, func(h *models.HistogramSample, args []any) []any {
			return append(args, h.PodID, h.Type, h.TS, h.Buckets)
		})
	}
	if err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	return retried(ctx, func() error {
		tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE (sqliteDSN): the writer, from here to commit
		if err != nil {
			return err
		}
		defer tx.Rollback() //nolint:errcheck // a no-op after Commit
		found := make(map[string]bool, len(podIDs))
		for part := range slices.Chunk(podIDs, dataSetBatch) {
			rows, err := tx.QueryContext(ctx, "SELECT id FROM pods WHERE tenant_id = ? AND id IN ("+placeholders(len(part))+")",
				append([]any{tenantID}, anys(part)...)...)
			if err != nil {
				return err
			}
			err = readIDs(rows, found)
			rows.Close()
			if err != nil {
				return err
			}
		}
		if err := check(found); err != nil {
			return err
		}
		if len(metrics) > 0 {
			if _, err := tx.ExecContext(ctx, publishMetrics); err != nil {
				return fmt.Errorf("podMetrics: %w", err)
			}
		}
		if len(histograms) > 0 {
			if _, err := tx.ExecContext(ctx, publishHistograms); err != nil {
				return fmt.Errorf("podHistograms: %w", err)
			}
		}
		return tx.Commit()
	})
}

// stageSQLite inserts rows into the temporary table staged, stageChunk
// rows a statement through one prepared statement (and one for the rest).
func stageSQLite[T any](ctx context.Context, conn *sql.Conn, staged string, cols []string, rows []T, args func(*T, []any) []any) error {
	if len(rows) == 0 {
		return nil
	}
	insert := func(n int) string {
		one := "(" + placeholders(len(cols)) + ")"
		return "INSERT INTO temp." + staged + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", n), ", ")
	}
	full, err := conn.PrepareContext(ctx, insert(stageChunk))
	if err != nil {
		return err
	}
	defer full.Close()
	buf := make([]any, 0, stageChunk*len(cols))
	for len(rows) > 0 {
		chunk := rows[:min(stageChunk, len(rows))]
		rows = rows[len(chunk):]
		buf = buf[:0]
		for i := range chunk {
			buf = args(&chunk[i], buf)
		}
		stmt := full
		if len(chunk) < stageChunk {
			if stmt, err = conn.PrepareContext(ctx, insert(len(chunk))); err != nil {
				return err
			}
			defer stmt.Close()
		}
		if _, err := stmt.ExecContext(ctx, buf...); err != nil {
			return err
		}
	}
	return nil
}

// placeholders is n "?" joined by commas.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
