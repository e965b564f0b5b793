package bench

import (
	"context"
	"fmt"
	"strings"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/store"
)

// Bulk rows are written by SQL on the database itself (generate_series on
// PostgreSQL, a recursive CTE on SQLite): a million rows through the
// fixture loader would take most of the run. Every value is a function of
// the row number, so the data are the same on both engines and every run.
// The SQL below is built from constants only; sizes and ids are bound.

// sqlDialect holds the few fragments the engines spell differently.
type sqlDialect struct {
	// series makes a CTE g(i) of the integers 0 … ?−1 (one bound value).
	series string
	// pad(expr, width) writes expr zero-padded.
	pad func(expr string, width int) string
	// at(expr) is the instant expr seconds after the Unix epoch, as the
	// store writes instants on this engine.
	at  func(expr string) string
	chr string
}

func dialectOf(d store.Dialect) sqlDialect {
	if d == store.Postgres {
		return sqlDialect{
			series: "WITH g(i) AS (SELECT generate_series(0, CAST(? AS bigint) - 1))",
			pad:    func(e string, w int) string { return fmt.Sprintf("lpad((%s)::text, %d, '0')", e, w) },
			at:     func(e string) string { return fmt.Sprintf("to_timestamp(%s)", e) },
			chr:    "chr",
		}
	}
	return sqlDialect{
		series: "WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i + 1 < ?)",
		pad:    func(e string, w int) string { return fmt.Sprintf("printf('%%0%dd', %s)", w, e) },
		// The SQLite driver writes a UTC time.Time as "2006-01-02 15:04:05+00:00".
		at: func(e string) string {
			return fmt.Sprintf("(strftime('%%Y-%%m-%%d %%H:%%M:%%S', %s, 'unixepoch') || '+00:00')", e)
		},
		chr: "char",
	}
}

// BulkClusters are the two clusters bulk pods run in.
var BulkClusters = [2]string{"6f1c2a10-0000-4000-8000-000000000001", "6f1c2a10-0000-4000-8000-000000000002"}

// BulkPodsPerWorkload is the size of every bulk workload.
const BulkPodsPerWorkload = 10

// InsertBulkPods writes n pods of tenant fleetgen.TenantID(0) in workloads of
// ten, over four projects, on nodes gpu-node-00000 … 00999 (names only:
// the nodes themselves are not written). Phases: 55% Running, 10% Pending
// (no node), 25% Succeeded, 10% Failed, half of those deleted. Pod i is
// created i·30 s after the first, the last one at fleetgen.Epoch.
func InsertBulkPods(ctx context.Context, db *DB, n int) error {
	d := dialectOf(db.Dialect)
	tenant := fleetgen.TenantID(0)
	workloads := (n + BulkPodsPerWorkload - 1) / BulkPodsPerWorkload
	tx := db.WithContext(ctx)
	for p := 0; p < 4; p++ {
		if err := tx.Exec(`INSERT INTO projects (id, name, tenant_id) VALUES (?, ?, ?)`,
			fmt.Sprintf("bulk-%d", p), fmt.Sprintf("bulk-project-%d", p), tenant).Error; err != nil {
			return err
		}
	}
	if err := tx.Exec(d.series+`
		INSERT INTO workloads (id, name, project_id, cluster_id, tenant_id)
		SELECT 'bulk-w-' || `+d.pad("i", 6)+`, 'job-' || `+d.pad("i", 6)+`, 'bulk-' || (i % 4),
		       CASE WHEN i % 2 = 0 THEN ? ELSE ? END, ?
		FROM g`, workloads, BulkClusters[0], BulkClusters[1], tenant).Error; err != nil {
		return fmt.Errorf("bulk workloads: %w", err)
	}
	epoch := fleetgen.Epoch.Unix()
	created := fmt.Sprintf("(%d - (%d - i) * 30)", epoch, n-1)
	cols := []string{"id", "tenant_id", "name", "priority_class_name", "workload_id", "cluster_id", "project_id",
		"node_name", "created_at", "completed_at", "containers", "current_node_pool", "k8s_phase",
		"k8s_phase_updated_at", "updated_at", "deleted_at", "project_name", "workload_name"}
	vals := []string{
		"'bulk-p-' || " + d.pad("i", 7), "?", "name", "'train'", "'bulk-w-' || " + d.pad("i / 10", 6),
		"CASE WHEN (i / 10) % 2 = 0 THEN ? ELSE ? END", "'bulk-' || ((i / 10) % 4)",
		"node_name", d.at(created), "CASE WHEN phase IN ('Succeeded', 'Failed') THEN " + d.at(created+" + 3600") + " END",
		`'[{"name":"main","image":"pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime","startedAt":null}]'`,
		"CASE WHEN node_name IS NOT NULL THEN 'pool-h100-80gb' END", "phase",
		d.at(created), d.at(created), "CASE WHEN x >= 95 THEN " + d.at(created+" + 7200") + " END",
		"'bulk-project-' || ((i / 10) % 4)", "'job-' || " + d.pad("i / 10", 6),
	}
	if db.DB.Migrator().HasColumn("pods", "search_text") {
		// The case-folded search key of models.PodSearchText; these names
		// are ASCII, where lower() folds exactly as it does.
		sep := " || " + d.chr + "(31) || "
		cols = append(cols, "search_text")
		vals = append(vals, "lower(name)"+sep+"coalesce(node_name, '')"+sep+"'job-' || "+d.pad("i / 10", 6)+sep+"'bulk-project-' || ((i / 10) % 4)")
	}
	// x spreads the phases over the pods without following their names.
	q := d.series + `
		INSERT INTO pods (` + strings.Join(cols, ", ") + `)
		SELECT ` + strings.Join(vals, ", ") + `
		FROM (SELECT i, x, 'job-' || ` + d.pad("i / 10", 6) + ` || '-' || (i % 10) AS name,
		             CASE WHEN x < 55 THEN 'Running' WHEN x < 65 THEN 'Pending' WHEN x < 90 THEN 'Succeeded' ELSE 'Failed' END AS phase,
		             CASE WHEN x >= 55 AND x < 65 THEN NULL ELSE 'gpu-node-' || ` + d.pad("(i * 7919) % 1000", 5) + ` END AS node_name
		      FROM (SELECT i, (i * 2654435761) % 100 AS x FROM g) s0) s`
	if err := tx.Exec(q, n, tenant, BulkClusters[0], BulkClusters[1]).Error; err != nil {
		return fmt.Errorf("bulk pods: %w", err)
	}
	return nil
}

// InsertBulkSamples writes perPod CPU_USAGE_CORES samples of each pod, one
// every fleetgen.SampleStep, the last at fleetgen.Epoch.
func InsertBulkSamples(ctx context.Context, db *DB, podIDs []string, perPod int) error {
	d := dialectOf(db.Dialect)
	ts := d.at(fmt.Sprintf("(%d - (%d - i) * %d)", fleetgen.Epoch.Unix(), perPod-1, int(fleetgen.SampleStep.Seconds())))
	q := d.series + `
		INSERT INTO metric_samples (pod_id, type, labels, ts, value)
		SELECT ?, 'CPU_USAGE_CORES', '{}', ` + ts + `, ((i * 7919) % 6400) / 100.0 FROM g`
	for _, id := range podIDs {
		if err := db.WithContext(ctx).Exec(q, perPod, id).Error; err != nil {
			return fmt.Errorf("bulk samples: %w", err)
		}
	}
	return nil
}

// analyze refreshes the planner's statistics, as autovacuum (PostgreSQL)
// or a periodic ANALYZE (SQLite) would after a large load.
func analyze(ctx context.Context, db *DB) error {
	return db.WithContext(ctx).Exec("ANALYZE").Error
}
