package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
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
			write(store.ClusterWrites{TenantID: tenant, ClusterID: cluster, Mark: 1,
				Projects:  []models.Project{{ID: "team-a", Name: "team-a", TenantID: tenant}},
				Workloads: []models.Workload{{ID: "w1", Name: "train", ProjectID: "team-a", ClusterID: cluster, TenantID: tenant}},
				Pods:      []models.Pod{pod("a", "Pending"), pod("b", "Pending"), pod("c", "Pending")},
				Seen:      []string{"a", "b", "c"}})
			// Batch 2: a changed (written), b named unchanged, c not named.
			write(store.ClusterWrites{TenantID: tenant, ClusterID: cluster, Mark: 2, Pods: []models.Pod{pod("a", "Running")}, Seen: []string{"a", "b"}})
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

// The write itself keeps what another cluster or tenant holds, whatever
// its caller read: a pod or workload of the same id is not replaced, a
// revision of the same id with another workload is not taken, and the
// write answers RowsOfOtherOwner naming them (the transaction then rolls
// back: nothing of the batch is written). Two tenants' connectors that
// report one new pod id at once both read no row; this is what leaves the
// second one its 403.
func TestWriteClusterKeepsOtherOwnersRows(t *testing.T) {
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			st := storetest.Open(t, d)
			ctx := context.Background()
			const tenantA, tenantB = 1001, 1002
			const clusterA, clusterB = "cccccccc-0000-4000-8000-00000000000a", "cccccccc-0000-4000-8000-00000000000b"
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			pod := func(id, name, workload, cluster string, tenant int, rev *string) models.Pod {
				return models.Pod{ID: id, Name: name, WorkloadID: workload, RevisionID: rev, ClusterID: cluster, TenantID: tenant,
					K8sPhase: "Running", CreatedAt: at, K8sPhaseUpdatedAt: at, UpdatedAt: at}
			}
			write := func(w store.ClusterWrites) error {
				return st.InTx(ctx, func(tx *store.Txn) error { return st.WriteCluster(tx, w) })
			}
			revA := "r1"
			if err := write(store.ClusterWrites{TenantID: tenantA, ClusterID: clusterA, Mark: 1,
				Projects:  []models.Project{{ID: "42", Name: "research", TenantID: tenantA}},
				Workloads: []models.Workload{{ID: "wa", Name: "train", ProjectID: "42", ClusterID: clusterA, TenantID: tenantA}},
				Revisions: []models.Revision{{ID: revA, WorkloadID: "wa"}},
				Pods:      []models.Pod{pod("x", "a-pod", "wa", clusterA, tenantA, &revA)},
				Seen:      []string{"x"}}); err != nil {
				t.Fatal(err)
			}
			// B's batches, as if its reads had found nothing of A's.
			projectB := []models.Project{{ID: "42", Name: "infra", TenantID: tenantB}}
			workloadB := models.Workload{ID: "wb", Name: "serve", ProjectID: "42", ClusterID: clusterB, TenantID: tenantB}
			for _, c := range []struct {
				name  string
				w     store.ClusterWrites
				table string
				id    string
			}{
				{"A's pod id", store.ClusterWrites{TenantID: tenantB, ClusterID: clusterB, Mark: 1, Projects: projectB,
					Workloads: []models.Workload{workloadB},
					Pods:      []models.Pod{pod("y", "b-pod", "wb", clusterB, tenantB, nil), pod("x", "b-pod", "wb", clusterB, tenantB, nil)},
					Seen:      []string{"y", "x"}}, "pods", "x"},
				{"A's workload id", store.ClusterWrites{TenantID: tenantB, ClusterID: clusterB, Mark: 1, Projects: projectB,
					Workloads: []models.Workload{workloadB, {ID: "wa", Name: "serve", ProjectID: "42", ClusterID: clusterB, TenantID: tenantB}}},
					"workloads", "wa"},
				{"A's revision id", store.ClusterWrites{TenantID: tenantB, ClusterID: clusterB, Mark: 1, Projects: projectB,
					Workloads: []models.Workload{workloadB}, Revisions: []models.Revision{{ID: "r1", WorkloadID: "wb"}}},
					"revisions", "r1"},
				// The same cluster id as A's but tenant B: still another owner.
				{"A's pod id under A's cluster id", store.ClusterWrites{TenantID: tenantB, ClusterID: clusterA, Mark: 1, Projects: projectB,
					Workloads: []models.Workload{{ID: "wb2", Name: "serve", ProjectID: "42", ClusterID: clusterA, TenantID: tenantB}},
					Pods:      []models.Pod{pod("x", "b-pod", "wb2", clusterA, tenantB, nil)}}, "pods", "x"},
			} {
				err := write(c.w)
				var taken *store.RowsOfOtherOwner
				if !errors.As(err, &taken) || taken.Table != c.table || fmt.Sprint(taken.IDs) != fmt.Sprintf("map[%s:true]", c.id) {
					t.Errorf("%s: %v, want RowsOfOtherOwner of %s {%s}", c.name, err, c.table, c.id)
				}
			}
			var pods []struct {
				ID, Name, WorkloadID, ClusterID string
				TenantID                        int
			}
			st.DB.Raw("SELECT id, name, workload_id, cluster_id, tenant_id FROM pods ORDER BY id").Scan(&pods)
			if fmt.Sprint(pods) != "[{x a-pod wa "+clusterA+" 1001}]" {
				t.Errorf("pods after B's batches: %v, want A's x alone, as A wrote it", pods)
			}
			var rest []string
			st.DB.Raw(`SELECT 'w ' || id || ' ' || cluster_id || ' ' || tenant_id FROM workloads
				UNION ALL SELECT 'r ' || id || ' ' || workload_id FROM revisions
				UNION ALL SELECT 'p ' || id || ' ' || tenant_id || ' ' || name FROM projects ORDER BY 1`).Scan(&rest)
			if want := "[p 42 1001 research r r1 wa w wa " + clusterA + " 1001]"; fmt.Sprint(rest) != want {
				t.Errorf("rows after B's batches: %v, want %s (B's rolled back whole)", rest, want)
			}
			// B's batch of its own rows alone is written.
			if err := write(store.ClusterWrites{TenantID: tenantB, ClusterID: clusterB, Mark: 1, Projects: projectB,
				Workloads: []models.Workload{workloadB}, Pods: []models.Pod{pod("y", "b-pod", "wb", clusterB, tenantB, nil)}}); err != nil {
				t.Fatalf("B's own rows: %v", err)
			}
		})
	}
}
