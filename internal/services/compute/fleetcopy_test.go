package compute_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
	"gpugraph/placement"
)

// TestFleetCopyIsAFreshRead: two replicas on one database create (placed
// and queued, VMs and pods), terminate, and see nodes go offline and back
// and GPUs fail and heal, in a seeded random order; after every step each
// replica's copy of the fleet (the view a create that nothing fits counts
// from) is exactly a fresh read of every node, on both engines.
func TestFleetCopyIsAFreshRead(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			sts := storetest.Replicas(t, d, 2)
			datasettest.Load(t, sts[0], createFleet)
			replicas := []*compute.Service{compute.New(sts[0]), compute.New(sts[1])}
			callers := []*auth.Caller{datasettest.Caller(t, sts[0], "a-op"), datasettest.Caller(t, sts[0], "b-op")}
			rng := rand.New(rand.NewPCG(38, 1))
			var rows []string
			placed, queued := 0, 0
			for step := range 60 {
				r := replicas[rng.IntN(2)]
				caller := callers[rng.IntN(2)]
				var what string
				switch op := rng.IntN(10); {
				case op < 5:
					req := vmReq(fmt.Sprintf("r%d", step), 1+rng.IntN(4))
					if rng.IntN(2) == 0 {
						req = compute.CreateRequest{Name: req.Name, CapabilityTier: new("pod"), GPUModelID: new("h100"),
							GPUCount: req.GPUCount, ImageURL: new("img"), VolumeGb: new(10)}
					}
					res, err := r.Create(ctx, caller, req)
					if err != nil {
						what = fmt.Sprintf("create %s: %v", req.Name, err)
						break
					}
					rows = append(rows, res.VM.ID)
					if res.VM.Status == models.VMPending {
						queued++
					} else {
						placed++
					}
					what = fmt.Sprintf("create %s: %s %s", req.Name, res.VM.Status, res.VM.StatusReason)
				case op < 7 && len(rows) > 0:
					i := rng.IntN(len(rows))
					id := rows[i]
					rows = append(rows[:i], rows[i+1:]...)
					// Either organization's caller: another's row is 404.
					_, err := r.Terminate(ctx, caller, id)
					what = fmt.Sprintf("terminate %s: %v", id, err)
				case op < 8:
					node := []string{"n1", "n2", "n3"}[rng.IntN(3)]
					status := []models.NodeStatus{models.NodeOnline, models.NodeOffline}[rng.IntN(2)]
					storetest.Exec(t, sts[rng.IntN(2)], "UPDATE nodes SET status = ? WHERE id = ?", status, node)
					what = fmt.Sprintf("node %s %s", node, status)
				default:
					gpu := fmt.Sprintf("n%d-g%d", 1+rng.IntN(2), rng.IntN(4))
					health := []models.GPUHealth{models.GPUHealthy, models.GPUFailed}[rng.IntN(2)]
					storetest.Exec(t, sts[rng.IntN(2)], "UPDATE gpus SET health = ? WHERE id = ?", health, gpu)
					what = fmt.Sprintf("gpu %s %s", gpu, health)
				}
				for i, cs := range replicas {
					kept, fresh, keptRows, freshRows, err := cs.FleetCopy(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(kept, fresh) || !sameScopes(keptRows, freshRows) {
						t.Fatalf("step %d (%s): replica %d's copy\n%s\nwant a fresh read's\n%s", step, what, i, describe(kept), describe(fresh))
					}
				}
			}
			if placed == 0 || queued == 0 {
				t.Fatalf("%d placed, %d queued: the steps never took both paths", placed, queued)
			}
		})
	}
}

// TestChangePruningKeepsWhatACopyMayRead: the pruning deletes only the
// changes before the mark it took FleetChangesKept ago, never those after.
func TestChangePruningKeepsWhatACopyMayRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, createFleet)
		loaded := storetest.Count(t, st, "fleet_changes", "1 = 1")
		p := compute.NewChangePruning(st, time.Second)
		t0 := time.Now()
		if err := p.Prune(ctx, t0); err != nil {
			t.Fatal(err)
		}
		// A copy that read just after the first mark was taken.
		after, err := st.FleetMarkNow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n1'")
		if err := p.Prune(ctx, t0.Add(compute.FleetChangesKept-time.Second)); err != nil {
			t.Fatal(err)
		}
		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n2'")
		if n := storetest.Count(t, st, "fleet_changes", "1 = 1"); n != loaded+2 {
			t.Fatalf("%d changes before anything is old enough, want the load's %d and 2", n, loaded)
		}
		// PostgreSQL's marks may be held back by the server's oldest
		// transaction (another database's too): then less goes, never
		// more. SQLite's are exact.
		for _, c := range []struct {
			at   time.Duration
			left int64
		}{{compute.FleetChangesKept, 2}, {2 * compute.FleetChangesKept, 0}} {
			if err := p.Prune(ctx, t0.Add(c.at)); err != nil {
				t.Fatal(err)
			}
			n := storetest.Count(t, st, "fleet_changes", "1 = 1")
			if c.left == 2 {
				var read *store.FleetRead
				err := st.InTx(ctx, func(tx *store.Txn) error {
					var err error
					read, err = st.ReadFleet(tx, &after)
					return err
				})
				if err != nil || read.Full || !slices.Contains(read.Changed, "n1") || !slices.Contains(read.Changed, "n2") {
					t.Fatalf("at +%v: a copy read after the first mark reads %+v, %v: want n1's and n2's changes kept", c.at, read, err)
				}
			}
			if st.Dialect == store.SQLite && n != c.left || n > loaded+2 {
				t.Fatalf("at +%v: %d changes left, want %d (the load's %d and 2 before)", c.at, n, c.left, loaded)
			}
		}
	})
}

func sameScopes(a, b map[string]*models.Node) bool {
	if len(a) != len(b) {
		return false
	}
	for id, n := range a {
		if m := b[id]; m == nil || m.ClusterID != n.ClusterID || m.NodePool != n.NodePool {
			return false
		}
	}
	return true
}

func describe(nodes []*placement.NodeInfo) string {
	out := ""
	for _, n := range nodes {
		out += fmt.Sprintf("  %s %s gpus %+v holdings %+v\n", n.ID, n.Status, n.GPUs, n.Holdings)
	}
	return out
}
