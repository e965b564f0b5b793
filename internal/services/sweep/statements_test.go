package sweep_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/sweep"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// What each sweep costs the database, pinned per engine (PostgreSQL adds
// the node log's advisory lock and the NOTIFYs): moving the decisions out
// of the store changed none of them, and a change that adds one shows
// here. The event logs written at the transaction's tail (decision 0047)
// took 2 off both engines' busy sweep and leaving nodes (one insert of
// every VM event, one of every node event) and, on PostgreSQL, the log
// lock and the separate NOTIFY of every VM event append. (A pod's expiry in the busy sweep and a node's removal delete
// the rows' volumes: one UPDATE each.)
func TestSweepStatements(t *testing.T) {
	want := map[store.Dialect][]int64{
		//                busy sweep, idle sweep, leaving nodes, provision timeout, idle provision timeout
		store.SQLite:   {18, 5, 15, 5, 1},
		store.Postgres: {20, 5, 17, 5, 1},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		count := storetest.CountStatements(t, st)
		datasettest.Load(t, st, sweepFixture(t0))
		sw := sweep.New(st)
		var got []int64
		run := func(fn func() error) {
			t.Helper()
			var err error
			got = append(got, count.During(func() { err = fn() }))
			if err != nil {
				t.Fatal(err)
			}
		}
		sweepAt := func() error { _, err := sw.Sweep(ctx, t0, grace); return err }
		run(sweepAt)
		run(sweepAt)
		storetest.Exec(t, st, "UPDATE nodes SET leaving_at = ? WHERE id = 'live'", t0.Add(time.Hour))
		storetest.Exec(t, st, "UPDATE nodes SET leaving_at = ? WHERE id = 'edge'", t0.Add(-time.Hour))
		run(sweepAt)
		later := t0.Add(10 * 365 * 24 * time.Hour)
		fail := func() error { _, err := sw.FailStuckDeploying(ctx, later, time.Minute); return err }
		run(fail)
		run(fail)
		if w := want[st.Dialect]; !slices.Equal(got, w) {
			t.Errorf("statements %v, want %v", got, w)
		}
	})
}
