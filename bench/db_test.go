package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

func wrap(st *store.Store) *DB { return &DB{Store: st, drop: func() {}} }

func TestBulkPods(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		db := wrap(st)
		if _, err := dataset.Load(ctx, st, fleetgen.Generate(fleetgen.Options{Tenants: 1})); err != nil {
			t.Fatal(err)
		}
		if err := InsertBulkPods(ctx, db, 1000); err != nil {
			t.Fatal(err)
		}
		var phases []struct {
			K8sPhase string
			N        int
		}
		storetest.Scan(t, st, &phases, "SELECT k8s_phase, count(*) AS n FROM pods GROUP BY k8s_phase ORDER BY k8s_phase")
		total := 0
		for _, p := range phases {
			total += p.N
		}
		if len(phases) != 4 || total != 1000 {
			t.Fatalf("phases = %+v", phases)
		}
		// Rows written by SQL read back through the model as the loader's do.
		var last, first models.Pod
		storetest.Take(t, st, &last, "pods", "id = ?", "bulk-p-0000999")
		storetest.Take(t, st, &first, "pods", "id = ?", "bulk-p-0000000")
		if !last.CreatedAt.Equal(fleetgen.Epoch) || !first.CreatedAt.Equal(fleetgen.Epoch.Add(-999*30*time.Second)) ||
			last.Name != "job-000099-9" || last.WorkloadID != "bulk-w-000099" || len(last.Containers) != 1 ||
			last.TenantID != fleetgen.TenantID(0) || *last.ProjectName != "bulk-project-3" {
			t.Fatalf("first %v, last %+v", first.CreatedAt, last)
		}
		// Times compare as instants: the newest pod is the last one.
		var newest string
		storetest.Scan(t, st, &newest, "SELECT id FROM pods WHERE created_at > ? ORDER BY created_at LIMIT 1", fleetgen.Epoch.Add(-time.Second))
		if newest != "bulk-p-0000999" {
			t.Fatalf("newest = %q", newest)
		}
		if storetest.HasColumn(st, "pods", "search_text") {
			var s string
			storetest.Scan(t, st, &s, "SELECT search_text FROM pods WHERE id = ?", last.ID)
			// models.PodSearchText of these ASCII fields.
			want := strings.ToLower(strings.Join([]string{last.Name, deref(last.NodeName), *last.WorkloadName, *last.ProjectName}, "\x1f"))
			if s != want {
				t.Fatalf("search_text %q, want %q", s, want)
			}
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestBulkSamples(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := fleetgen.Generate(fleetgen.Options{Nodes: 2, Pods: 20, Tenants: 1, Seed: 1})
		if _, err := dataset.Load(ctx, st, f); err != nil {
			t.Fatal(err)
		}
		ids := []string{f.Pods[0].ID, f.Pods[1].ID}
		if err := InsertBulkSamples(ctx, wrap(st), ids, 500); err != nil {
			t.Fatal(err)
		}
		var got []models.MetricSample
		storetest.Scan(t, st, &got, "SELECT * FROM metric_samples WHERE pod_id = ? AND ts >= ? ORDER BY ts", ids[1], fleetgen.Epoch.Add(-fleetgen.SampleStep))
		if len(got) != 2 || !got[1].TS.Equal(fleetgen.Epoch) || got[1].Labels != "{}" || got[1].Type != "CPU_USAGE_CORES" ||
			got[1].Value != float64((499*7919)%6400)/100 {
			t.Fatalf("samples = %+v", got)
		}
		n := storetest.Count(t, st, "metric_samples", "")
		if n != 1000 {
			t.Fatalf("%d samples", n)
		}
	})
}

func TestDoubleAllocations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := fleetgen.Generate(fleetgen.Options{Nodes: 3, Tenants: 1, Seed: 1, VMsPerNode: 2, VMGPUs: 2})
		f.VMs[0].Status, f.VMs[0].GPUIDs = models.VMRunning, []string{"node-00000-g0", "node-00000-g1"}
		f.VMs[1].Status, f.VMs[1].GPUIDs = models.VMRunning, []string{"node-00000-g2", "node-00000-g3"}
		if _, err := dataset.Load(ctx, st, f); err != nil {
			t.Fatal(err)
		}
		db := wrap(st)
		if n, err := doubleAllocations(ctx, db); err != nil || n != 0 {
			t.Fatalf("clean fleet: %d, %v", n, err)
		}
		// One GPU claimed by a second VM: the first now holds one too few.
		storetest.Exec(t, st, "UPDATE gpus SET holder_vm_id = ? WHERE id = ?", f.VMs[1].ID, "node-00000-g1")
		if n, _ := doubleAllocations(ctx, db); n != 2 {
			t.Fatalf("stolen GPU: %d violations, want 2 (one VM short, one over)", n)
		}
		storetest.Exec(t, st, "UPDATE gpus SET holder_vm_id = ? WHERE id = ?", f.VMs[0].ID, "node-00000-g1")
		storetest.Exec(t, st, "UPDATE vms SET cpu_cores = 210 WHERE id = ?", f.VMs[0].ID)
		if n, _ := doubleAllocations(ctx, db); n != 1 {
			t.Fatalf("CPU over capacity: %d violations, want 1", n)
		}
	})
}
