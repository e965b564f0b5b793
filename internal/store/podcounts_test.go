package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The kept pod counts (0026_pod_counts) against COUNT(*) of the pods
// themselves, after random writes of every kind a pod sees.

var countPhases = []string{"Running", "Pending", "Succeeded", "Failed", ""}

// seedCountWorkloads makes the projects and workloads the random pods of
// tenants 1 and 2 belong to.
func seedCountWorkloads(t *testing.T, st *store.Store) {
	t.Helper()
	storetest.Exec(t, st, `INSERT INTO projects (id, name, tenant_id) VALUES ('1', 'one', 1), ('1', 'one', 2)`)
	storetest.Exec(t, st, `INSERT INTO workloads (id, name, project_id, cluster_id, tenant_id) VALUES ('w1', 'w', '1', 'c1', 1), ('w2', 'w', '1', 'c1', 2)`)
}

// insertPods writes pods id0 … id0+n-1 of one tenant in one statement.
func insertPods(t *testing.T, db execer, r *rand.Rand, id0, n int) {
	t.Helper()
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	tenant := 1 + r.IntN(2)
	sql := `INSERT INTO pods (id, tenant_id, name, workload_id, created_at, k8s_phase, k8s_phase_updated_at, updated_at, deleted_at) VALUES `
	var args []any
	for i := range n {
		if i > 0 {
			sql += ", "
		}
		sql += "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
		var deleted any
		if r.IntN(5) == 0 {
			deleted = now
		}
		args = append(args, fmt.Sprintf("p%05d", id0+i), tenant, "pod", fmt.Sprintf("w%d", tenant), now, countPhases[r.IntN(len(countPhases))], now, now, deleted)
	}
	if err := db.Exec(sql, args...); err != nil {
		t.Fatal(err)
	}
}

// randomWrite makes one random change to the pods: a phase moved, pods
// deleted softly or restored, deleted for good, moved to the other tenant,
// upserted.
func randomWrite(db execer, r *rand.Rand, ids int) error {
	lo := r.IntN(ids)
	hi := lo + r.IntN(40)
	from, to := fmt.Sprintf("p%05d", lo), fmt.Sprintf("p%05d", hi)
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	var err error
	switch r.IntN(6) {
	case 0:
		err = db.Exec(`UPDATE pods SET k8s_phase = ? WHERE id BETWEEN ? AND ?`, countPhases[r.IntN(len(countPhases))], from, to)
	case 1:
		err = db.Exec(`UPDATE pods SET deleted_at = ? WHERE id BETWEEN ? AND ?`, now, from, to)
	case 2:
		err = db.Exec(`UPDATE pods SET deleted_at = NULL WHERE id BETWEEN ? AND ?`, from, to)
	case 3:
		err = db.Exec(`DELETE FROM pods WHERE id BETWEEN ? AND ?`, from, to)
	case 4:
		err = db.Exec(`UPDATE pods SET tenant_id = 3 - tenant_id, workload_id = CASE workload_id WHEN 'w1' THEN 'w2' ELSE 'w1' END WHERE id BETWEEN ? AND ?`, from, to)
	case 5: // what changes nothing counted
		err = db.Exec(`UPDATE pods SET name = 'renamed', updated_at = ? WHERE id BETWEEN ? AND ?`, now, from, to)
	}
	return err
}

// execer runs a statement on the store or in a transaction.
type execer struct{ db *gorm.DB }

func (e execer) Exec(sql string, args ...any) error { return e.db.Exec(sql, args...).Error }

// assertCountsKept compares, for every tenant, deleted or not, and phase
// (and every phase together), CountPods with COUNT(*) over the pods.
func assertCountsKept(t *testing.T, st *store.Store, step string) {
	t.Helper()
	ctx := context.Background()
	for tenant := 1; tenant <= 3; tenant++ {
		for _, deleted := range []bool{false, true} {
			for _, phase := range append([]string{"*"}, countPhases[:4]...) {
				q := store.PodQuery{TenantID: tenant, Deleted: deleted}
				sql, args := `SELECT count(*) FROM pods WHERE tenant_id = ? AND (deleted_at IS NOT NULL) = ?`, []any{tenant, deleted}
				if phase != "*" {
					f, err := filterby.Parse([]string{"k8sPhase==" + phase})
					if err != nil {
						t.Fatal(err)
					}
					q.Filters = f
					sql, args = sql+" AND k8s_phase = ?", append(args, phase)
				}
				var want int64
				storetest.Scan(t, st, &want, sql, args...)
				got, err := st.CountPods(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("%s: tenant %d, deleted %v, phase %s: kept count %d, COUNT(*) %d", step, tenant, deleted, phase, got, want)
				}
			}
		}
	}
}

// TestPodCountsKeptExactly writes pods at random — inserts, phase changes,
// soft deletes and restores, deletes, tenant moves, upserts, writes that
// change nothing counted, in transactions committed and rolled back — and
// after every step asks CountPods the counts the kept table answers,
// against COUNT(*) over the pods themselves.
func TestPodCountsKeptExactly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		seedCountWorkloads(t, st)
		r := rand.New(rand.NewPCG(38, 1))
		const ids = 400
		for id := 0; id < ids; id += 50 {
			insertPods(t, execer{st.DB}, r, id, 50)
		}
		assertCountsKept(t, st, "after the inserts")
		for step := range 150 {
			switch step % 10 {
			case 3: // several writes in one transaction
				tx := st.DB.Begin()
				for range 3 {
					if err := randomWrite(execer{tx}, r, ids); err != nil {
						t.Fatal(err)
					}
				}
				if err := tx.Commit().Error; err != nil {
					t.Fatal(err)
				}
			case 7: // a transaction rolled back counts nothing
				tx := st.DB.Begin()
				if err := randomWrite(execer{tx}, r, ids); err != nil {
					t.Fatal(err)
				}
				insertPods(t, execer{tx}, r, 10_000+step*50, 5)
				if err := tx.Rollback().Error; err != nil {
					t.Fatal(err)
				}
			case 9:
				if err := st.CompactPodCounts(ctx); err != nil {
					t.Fatal(err)
				}
			default:
				if err := randomWrite(execer{st.DB}, r, ids); err != nil {
					t.Fatal(err)
				}
			}
			if step%10 == 5 { // an upsert: the phase of existing pods, and new pods
				lo := r.IntN(ids)
				err := st.DB.Exec(`INSERT INTO pods (id, tenant_id, name, workload_id, created_at, k8s_phase, k8s_phase_updated_at, updated_at)
					SELECT id, tenant_id, name, workload_id, created_at, ?, k8s_phase_updated_at, updated_at FROM pods WHERE id BETWEEN ? AND ?
					ON CONFLICT (id) DO UPDATE SET k8s_phase = excluded.k8s_phase`, countPhases[r.IntN(len(countPhases))], fmt.Sprintf("p%05d", lo), fmt.Sprintf("p%05d", lo+20)).Error
				if err != nil {
					t.Fatal(err)
				}
				insertPods(t, execer{st.DB}, r, ids+step*50, 3)
			}
			assertCountsKept(t, st, fmt.Sprintf("step %d", step))
		}
		if err := st.CompactPodCounts(ctx); err != nil {
			t.Fatal(err)
		}
		assertCountsKept(t, st, "compacted")
		if st.Dialect == store.Postgres {
			var rows, keys int64
			storetest.Scan(t, st, &rows, `SELECT count(*) FROM pod_counts`)
			storetest.Scan(t, st, &keys, `SELECT count(*) FROM (SELECT DISTINCT tenant_id, is_deleted, k8s_phase FROM pods) k`)
			if rows != keys {
				t.Errorf("compacted, pod_counts holds %d rows for %d keys", rows, keys)
			}
		}
	})
}

// TestPodCountsKeptUnderConcurrentWrites runs writers and compactions at
// once (PostgreSQL's appended rows; SQLite's one writer at a time) and then
// compares every kept count with COUNT(*).
func TestPodCountsKeptUnderConcurrentWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		seedCountWorkloads(t, st)
		const ids = 300
		insertPods(t, execer{st.DB}, rand.New(rand.NewPCG(1, 1)), 0, ids)
		// Writer w's first failure, if any; writer 0 also compacts.
		failed := make([]error, 4)
		var wg sync.WaitGroup
		for w := range failed {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 2))
				for i := 0; i < 25 && failed[w] == nil; i++ {
					if w == 0 && i%5 == 0 {
						failed[w] = st.CompactPodCounts(ctx)
					} else {
						failed[w] = randomWrite(execer{st.DB}, r, ids)
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(failed...); err != nil {
			t.Fatal(err)
		}
		assertCountsKept(t, st, "after concurrent writes")
	})
}

// TestKeptCountAnswersOnlyUnnarrowedCounts pins which counts pod_counts
// answers: the tenant's, deleted or not, with at most one k8sPhase==X.
func TestKeptCountAnswersOnlyUnnarrowedCounts(t *testing.T) {
	yes := true
	parse := func(f ...string) []filterby.Filter {
		out, err := filterby.Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		q     store.PodQuery
		phase string // "-": not kept; "*": every phase
	}{
		{store.PodQuery{TenantID: 1}, "*"},
		{store.PodQuery{TenantID: 1, Deleted: true}, "*"},
		{store.PodQuery{TenantID: 1, Filters: parse("k8sPhase==Running")}, "Running"},
		{store.PodQuery{TenantID: 1, Filters: parse("k8sPhase!=Running")}, "-"},
		{store.PodQuery{TenantID: 1, Filters: parse("k8sPhase=@Run")}, "-"},
		{store.PodQuery{TenantID: 1, Filters: parse("name==Running")}, "-"},
		{store.PodQuery{TenantID: 1, Filters: parse("k8sPhase==Running", "k8sPhase==Running")}, "-"},
		{store.PodQuery{TenantID: 1, Search: "a"}, "-"},
		{store.PodQuery{TenantID: 1, Completed: &yes}, "-"},
		{store.PodQuery{TenantID: 1, WorkloadID: "w1"}, "-"},
		{store.PodQuery{TenantID: 1, RevisionID: "r1"}, "-"},
	} {
		phase, ok := store.KeptCount(c.q)
		got := "-"
		if ok {
			got = "*"
			if phase != nil {
				got = *phase
			}
		}
		if got != c.phase {
			t.Errorf("%+v: kept count %s, want %s", c.q, got, c.phase)
		}
	}
}
