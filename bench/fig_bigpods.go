package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gpugraph/internal/store/sqlcount"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
)

const (
	rowPage       = "filtered, sorted page of 50 over 1,000,000 pods, API median"
	rowPageSQL    = "page: the same SQL by hand, median"
	rowPageRatio  = "page: API / SQL"
	rowCount      = "count of the same filter, API median"
	rowCountSQL   = "count: the same SQL by hand, median"
	rowCountRatio = "count: API / SQL"
)

// The filter of figure 3: a UI's "running pods on these racks, by name".
const (
	bigFilter    = `["k8sPhase==Running", "nodeName=^gpu-node-00"]`
	bigPageQuery = `{ pods(filterBy: ` + bigFilter + `, sortBy: NAME, limit: 50) { next pods { id name k8sPhase nodeName createdAt workloadId } } }`
	bigCount     = `{ podsCount(filterBy: ` + bigFilter + `) }`
)

// bigPods is figure 3: a filtered, sorted page and its count on a table of
// a million pods, against the same SQL statements run by hand through
// database/sql (the statements the server ran, recorded by the gorm
// callback, less the API key lookup every request makes).
func (r *runner) bigPods(ctx context.Context) error {
	n := r.cfg.BigPods
	if r.engine == store.SQLite {
		n = r.cfg.SQLiteBigPods
	}
	if n <= 0 {
		return fmt.Errorf("skipped on this engine")
	}
	db, err := FreshDB(ctx, r.engine, r.cfg.PostgresURL)
	if err != nil {
		return err
	}
	// Organization and key through the loader; the pods by bulk SQL.
	keys := fleetgen.Generate(fleetgen.Options{Tenants: 1, Seed: r.cfg.Seed})
	if _, err := dataset.Load(ctx, db.Store, keys); err != nil {
		db.Drop()
		return err
	}
	start := time.Now()
	if err := InsertBulkPods(ctx, db, n); err != nil {
		db.Drop()
		return err
	}
	if err := analyze(ctx, db); err != nil {
		db.Drop()
		return err
	}
	r.logf("inserted %d pods by SQL in %s", n, time.Since(start).Round(time.Millisecond))
	srv, err := Serve(db, r.cfg, fleetgen.Token(0))
	if err != nil {
		db.Drop()
		return err
	}
	defer srv.Close()
	size := ""
	if n != 1_000_000 {
		size = fmt.Sprintf(" (%d pods on this engine)", n)
	}
	for _, x := range []struct {
		query                string
		api, sql, ratioLabel string
	}{
		{bigPageQuery, rowPage, rowPageSQL, rowPageRatio},
		{bigCount, rowCount, rowCountSQL, rowCountRatio},
	} {
		call := func(ctx context.Context) error { return srv.Client.GraphQL(ctx, x.query, nil, nil) }
		if err := call(ctx); err != nil {
			return err
		}
		stmts := withoutKeyLookup(srv.Stmts.Record(func() { _ = call(ctx) }))
		if len(stmts) == 0 {
			return fmt.Errorf("the API ran no pods statement")
		}
		for _, s := range stmts {
			r.logf("%s runs: %s %v", x.api, oneLine(s.SQL), s.Vars)
		}
		sqlDB, err := db.DB.DB()
		if err != nil {
			return err
		}
		byHand := func(ctx context.Context) error { return runByHand(ctx, sqlDB, stmts) }
		// Interleave API and SQL runs so both see the same machine.
		var apiT, sqlT []time.Duration
		for i := 0; i < 3; i++ {
			_ = call(ctx)
			_ = byHand(ctx)
		}
		for i := 0; i < r.cfg.LatencyRuns; i++ {
			a, err := timed(ctx, call)
			if err != nil {
				return err
			}
			s, err := timed(ctx, byHand)
			if err != nil {
				return err
			}
			apiT, sqlT = append(apiT, a), append(sqlT, s)
		}
		api, hand := median(apiT), median(sqlT)
		r.rep.Set(3, x.api, r.engine, ms(api)+size)
		r.rep.Set(3, x.sql, r.engine, ms(hand))
		q := ratio(api, hand)
		r.rep.Check(3, x.ratioLabel, "≤ 1.3", r.engine, fmt.Sprintf("%.2f", q), q <= 1.3)
	}
	return nil
}

func withoutKeyLookup(all []sqlcount.Statement) []sqlcount.Statement {
	var out []sqlcount.Statement
	for _, s := range all {
		if !strings.Contains(s.SQL, "api_keys") {
			out = append(out, s)
		}
	}
	return out
}

// runByHand runs each statement and reads every row it answers, as an
// application that wrote the SQL itself would.
func runByHand(ctx context.Context, db *sql.DB, stmts []sqlcount.Statement) error {
	for _, s := range stmts {
		rows, err := db.QueryContext(ctx, s.SQL, s.Vars...)
		if err != nil {
			return err
		}
		cols, _ := rows.Columns()
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = new(sql.RawBytes)
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

func timed(ctx context.Context, fn func(context.Context) error) (time.Duration, error) {
	t := time.Now()
	err := fn(ctx)
	return time.Since(t), err
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
