package store_test

import (
	"context"
	"testing"
	"time"

	"gpugraph/models"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// A batch's written pods take its mark in their own upsert, and the pods it
// names unchanged by the UPDATE of the rest: the end of a snapshot marks
// deleted exactly the pods no batch since its mark named, and a written
// pod's search key is kept as on any other write.
func TestWriteClusterMarksWrittenAndUnchangedPods(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			st := storetest.Open(t, d)
			ctx := context.Background()
			const tenant, cluster = 1001, "cccccccc-0000-4000-8000-000000000001"
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			pod := func(id, phase string) models.Pod {
				wl, node := "train", "dgx-01"
				return models.Pod{ID: id, Name: "pod-" + id, WorkloadID: "w1", WorkloadName: &wl, ClusterID: cluster, NodeName: &node,
					TenantID: tenant, K8sPhase: phase, CreatedAt: at, K8sPhaseUpdatedAt: at, UpdatedAt: at}
			}
			write := func(w store.ClusterWrites) {
				t.Helper()
				if err := st.InTx(ctx, func(tx *store.Txn) error { return st.WriteCluster(tx, w) }); err != nil {
					t.Fatal(err)
				}
			}
			write(store.ClusterWrites{Mark: 1,
				Projects:  []models.Project{{ID: "team-a", Name: "team-a", TenantID: tenant}},
				Workloads: []models.Workload{{ID: "w1", Name: "train", ProjectID: "team-a", ClusterID: cluster, TenantID: tenant}},
				Pods:      []models.Pod{pod("a", "Pending"), pod("b", "Pending"), pod("c", "Pending")},
				Seen:      []string{"a", "b", "c"}})
			// Batch 2: a changed (written), b named unchanged, c not named.
			write(store.ClusterWrites{Mark: 2, Pods: []models.Pod{pod("a", "Running")}, Seen: []string{"a", "b"}})
			var n int64
			err := st.InTx(ctx, func(tx *store.Txn) error {
				var err error
				n, err = st.MarkUnseenPodsDeleted(tx, tenant, cluster, 2, at.Add(time.Hour))
				return err
			})
			if err != nil || n != 1 {
				t.Fatalf("pods marked deleted at the end of a snapshot from mark 2: %d (%v), want 1 (c)", n, err)
			}
			var got map[string]*models.Pod
			err = st.InTx(ctx, func(tx *store.Txn) error {
				var err error
				got, err = st.StoredPods(tx, []string{"a", "b", "c"})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for id, want := range map[string]struct {
				phase   string
				deleted bool
			}{"a": {"Running", false}, "b": {"Pending", false}, "c": {"Pending", true}} {
				p := got[id]
				if p == nil || p.K8sPhase != want.phase || (p.DeletedAt != nil) != want.deleted {
					t.Errorf("pod %s: %+v, want phase %s, deleted %v", id, p, want.phase, want.deleted)
				}
			}
			if want := models.PodSearchText("pod-a", got["a"].NodeName, got["a"].WorkloadName, nil); got["a"].SearchText != want {
				t.Errorf("pod a's search key %q, want %q", got["a"].SearchText, want)
			}
		})
	}
}
