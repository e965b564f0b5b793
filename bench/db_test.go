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
		if err := st.DB.Raw("SELECT k8s_phase, count(*) AS n FROM pods GROUP BY k8s_phase ORDER BY k8s_phase").Scan(&phases).Error; err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, p := range phases {
			total += p.N
		}
		if len(phases) != 4 || total != 1000 {
			t.Fatalf("phases = %+v", phases)
		}
		// Rows written by SQL read back through the model as the loader's do.
		var last, first models.Pod
		if err := st.DB.Where("id = ?", "bulk-p-0000999").Take(&last).Error; err != nil {
			t.Fatal(err)
		}
		if err := st.DB.Where("id = ?", "bulk-p-0000000").Take(&first).Error; err != nil {
			t.Fatal(err)
		}
		if !last.CreatedAt.Equal(fleetgen.Epoch) || !first.CreatedAt.Equal(fleetgen.Epoch.Add(-999*30*time.Second)) ||
			last.Name != "job-000099-9" || last.WorkloadID != "bulk-w-000099" || len(last.Containers) != 1 ||
			last.TenantID != fleetgen.TenantID(0) || *last.ProjectName != "bulk-project-3" {
			t.Fatalf("first %v, last %+v", first.CreatedAt, last)
		}
		// Times compare as instants: the newest pod is the last one.
		var newest string
		if err := st.DB.Raw("SELECT id FROM pods WHERE created_at > ? ORDER BY created_at LIMIT 1", fleetgen.Epoch.Add(-time.Second)).Scan(&newest).Error; err != nil || newest != "bulk-p-0000999" {
			t.Fatalf("newest = %q, %v", newest, err)
		}
		if st.DB.Migrator().HasColumn("pods", "search_text") {
			var s string
			st.DB.Raw("SELECT search_text FROM pods WHERE id = ?", last.ID).Scan(&s)
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
		if err := st.DB.Where("pod_id = ? AND ts >= ?", ids[1], fleetgen.Epoch.Add(-fleetgen.SampleStep)).Order("ts").Find(&got).Error; err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !got[1].TS.Equal(fleetgen.Epoch) || got[1].Labels != "{}" || got[1].Type != "CPU_USAGE_CORES" ||
			got[1].Value != float64((499*7919)%6400)/100 {
			t.Fatalf("samples = %+v", got)
		}
		var n int64
		st.DB.Model(&models.MetricSample{}).Count(&n)
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
		st.DB.Exec("UPDATE gpus SET holder_vm_id = ? WHERE id = ?", f.VMs[1].ID, "node-00000-g1")
		if n, _ := doubleAllocations(ctx, db); n != 2 {
			t.Fatalf("stolen GPU: %d violations, want 2 (one VM short, one over)", n)
		}
		st.DB.Exec("UPDATE gpus SET holder_vm_id = ? WHERE id = ?", f.VMs[0].ID, "node-00000-g1")
		st.DB.Exec("UPDATE vms SET cpu_cores = 210 WHERE id = ?", f.VMs[0].ID)
		if n, _ := doubleAllocations(ctx, db); n != 1 {
			t.Fatalf("CPU over capacity: %d violations, want 1", n)
		}
	})
}
