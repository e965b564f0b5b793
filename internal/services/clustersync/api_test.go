package clustersync_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// clusterFixture: the operator (ops-admin, nodes.admin), and two tenants'
// readers of Run:ai pods.
const clusterFixture = `{
 "organizations": [{"id": "org-ops", "name": "Ops", "tenantId": 9300}, {"id": "org-acme", "name": "Acme", "tenantId": 9301},
                   {"id": "org-globex", "name": "Globex", "tenantId": 9302}],
 "apiKeys": [{"token": "ops-admin", "organizationId": "org-ops", "permissions": ["nodes.admin"]},
             {"token": "acme-reader", "organizationId": "org-acme", "permissions": ["workloads.read"]},
             {"token": "globex-reader", "organizationId": "org-globex", "permissions": ["workloads.read"]}]
}`

const (
	clusterA     = "cccccccc-0000-4000-8000-00000000000a"
	clusterB     = "cccccccc-0000-4000-8000-00000000000b"
	syncWorkload = "aaaaaaaa-0000-4000-8000-000000000001"
	syncProject  = "proj-1"
)

// syncPodID is pod i's UID.
func syncPodID(i int) string { return fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", i) }

// syncPod is pod i of cluster in phase, as a connector reports it.
func syncPod(cluster string, i int, phase string) map[string]any {
	return map[string]any{
		"name": fmt.Sprintf("train-%d-worker", i), "id": syncPodID(i), "workloadId": syncWorkload,
		"revisionId": nil, "projectId": syncProject, "task": "worker", "clusterId": cluster,
		"nodeName": fmt.Sprintf("node-%d", i%7), "createdAt": "2026-03-01T10:00:00Z", "completedAt": nil,
		"containers":         []map[string]any{{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.01", "startedAt": "2026-03-01T10:00:05Z"}},
		"currentNodePool":    "a100-pool",
		"requestedNodePools": []string{"a100-pool"},
		"requestedResources": map[string]any{"gpu": map[string]any{"request": 1, "limit": 1}, "cpu": map[string]any{"request": 4, "limit": nil},
			"cpuMemory": map[string]any{"request": "16G", "limit": nil}, "gpuMemory": nil, "extendedResources": []any{}},
		"allocatedResources": nil, "tolerations": []any{}, "k8sPhase": phase,
		"k8sPhaseUpdatedAt": "2026-03-01T10:00:05Z", "ip": "10.0.0.9", "nodeAffinity": nil,
		"priorityClassName": "train", "deletedAt": nil,
	}
}

func syncBatch(seq int64, kind string, pods ...map[string]any) map[string]any {
	return map[string]any{"sequence": seq, "kind": kind,
		"projects":  []map[string]any{{"id": syncProject, "name": "team-a"}},
		"workloads": []map[string]any{{"id": syncWorkload, "name": "train-llm", "projectId": syncProject}},
		"pods":      pods}
}

// enrollCluster enrolls cluster for tenant as ops-admin: its credential.
func enrollCluster(t *testing.T, env *servertest.Env, cluster string, tenant int) string {
	t.Helper()
	status, body := servertest.Post(t, env, "/v1/admin/clusters/enroll", "ops-admin", map[string]any{"clusterId": cluster, "tenantId": tenant})
	var e struct {
		ClusterID, Credential string
		TenantID              int
	}
	if err := json.Unmarshal([]byte(body), &e); status != 201 || err != nil || e.ClusterID != cluster || e.TenantID != tenant ||
		!strings.HasPrefix(e.Credential, "gpgcl_") {
		t.Fatalf("enroll %s: %d %s", cluster, status, body)
	}
	return e.Credential
}

func syncAnswer(t *testing.T, status int, body string) map[string]any {
	t.Helper()
	var a map[string]any
	if status != 200 || json.Unmarshal([]byte(body), &a) != nil {
		t.Fatalf("sync: %d %s", status, body)
	}
	return a
}

// podsByID lists the tenant's pods (deleted or not) by id.
func podsByID(t *testing.T, env *servertest.Env, token, query string) map[string]map[string]any {
	t.Helper()
	status, body := servertest.PodsGET(t, env, token, "/api/v1/workloads/pods?verbosity=full&limit=500"+query)
	var page struct{ Pods []map[string]any }
	if status != 200 || json.Unmarshal(body, &page) != nil {
		t.Fatalf("pods: %d %s", status, body)
	}
	out := map[string]map[string]any{}
	for _, p := range page.Pods {
		out[p["id"].(string)] = p
	}
	return out
}

func TestClusterSync(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		credA := enrollCluster(t, env, clusterA, 9301)
		path := "/api/v1/clusters/" + clusterA + "/sync"

		first := syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running"), syncPod(clusterA, 2, "Pending"), syncPod(clusterA, 3, "Running"))
		status, body := servertest.Post(t, env, path, credA, first)
		a := syncAnswer(t, status, body)
		if a["podsCreated"] != 3.0 || a["podsDeleted"] != 0.0 || a["snapshotComplete"] != true || a["sequence"] != 1.0 {
			t.Errorf("first snapshot: %s", body)
		}
		pods := podsByID(t, env, "acme-reader", "")
		p1 := pods[syncPodID(1)]
		want := map[string]any{"name": "train-1-worker", "workloadId": syncWorkload, "projectId": syncProject, "clusterId": clusterA,
			"nodeName": "node-1", "k8sPhase": "Running", "createdAt": "2026-03-01T10:00:00.000Z", "ip": "10.0.0.9",
			"priorityClassName": "train", "task": "worker", "currentNodePool": "a100-pool", "workloadName": "train-llm",
			"projectName": "team-a", "deletedAt": nil, "k8sPhaseUpdatedAt": "2026-03-01T10:00:05.000Z"}
		for k, v := range want {
			if p1[k] != v {
				t.Errorf("pod 1 %s = %v, want %v (%v)", k, p1[k], v, p1)
			}
		}
		if len(pods) != 3 {
			t.Errorf("%d pods, want 3", len(pods))
		}
		if len(podsByID(t, env, "globex-reader", "")) != 0 {
			t.Errorf("another tenant sees the cluster's pods")
		}
		if _, b := servertest.PodsGET(t, env, "acme-reader", "/api/v1/workloads/pods/count"); strings.TrimSpace(string(b)) != `{"count":3}` {
			t.Errorf("count: %s", b)
		}
		if status, b := servertest.PodsGET(t, env, "acme-reader", "/api/v1/workloads/"+syncWorkload+"/pods"); status != 200 || strings.Count(string(b), `"id"`) != 3 {
			t.Errorf("workload pods: %d %s", status, b)
		}
		r := env.GraphQL("acme-reader", `{ pods(sortBy: NAME) { total pods { id k8sPhase nodeName clusterId } } }`, nil)
		var gq struct {
			Pods struct {
				Total int
				Pods  []struct{ ID, K8sPhase, NodeName, ClusterID string }
			}
		}
		env.Decode(r, &gq)
		if gq.Pods.Total != 3 || gq.Pods.Pods[1].ID != syncPodID(2) || gq.Pods.Pods[1].K8sPhase != "Pending" || gq.Pods.Pods[1].NodeName != "node-2" {
			t.Errorf("graphql pods: %+v", gq.Pods)
		}

		// A replay answers the same and changes nothing.
		updated1 := p1["updatedAt"]
		status, again := servertest.Post(t, env, path, credA, first)
		if status != 200 || again != body {
			t.Errorf("replay: %d %s, want %s", status, again, body)
		}

		// A delta: pod 2 runs; pod 1 is sent unchanged.
		status, body = servertest.Post(t, env, path, credA, syncBatch(5, "delta", syncPod(clusterA, 1, "Running"), syncPod(clusterA, 2, "Running")))
		a = syncAnswer(t, status, body)
		if a["podsUpdated"] != 1.0 || a["podsUnchanged"] != 1.0 || a["podsCreated"] != 0.0 {
			t.Errorf("delta: %s", body)
		}
		pods = podsByID(t, env, "acme-reader", "")
		if pods[syncPodID(2)]["k8sPhase"] != "Running" || pods[syncPodID(1)]["updatedAt"] != updated1 {
			t.Errorf("after the delta: %v", pods)
		}

		// Out of order: an older sequence is refused, naming the current one.
		status, body = servertest.Post(t, env, path, credA, syncBatch(4, "delta", syncPod(clusterA, 2, "Failed")))
		servertest.Expect(t, "older sequence", status, body, 409, "current sequence 5")
		servertest.Expect(t, "older sequence's details", status, body, 409, `"details":"5"`)
		status, body = servertest.Post(t, env, path, credA, syncBatch(5, "delta", syncPod(clusterA, 2, "Failed")))
		servertest.Expect(t, "sequence reused", status, body, 409, "applied already with another body")
		servertest.Expect(t, "sequence reused's details", status, body, 409, `"details":"5"`)

		// A snapshot in two parts naming pod 1 only: 2 and 3 are marked deleted.
		status, body = servertest.Post(t, env, path, credA, map[string]any{"sequence": 6, "kind": "snapshot", "more": true, "pods": []any{}})
		if a := syncAnswer(t, status, body); a["snapshotComplete"] != false || a["podsDeleted"] != 0.0 {
			t.Errorf("snapshot part 1: %s", body)
		}
		status, body = servertest.Post(t, env, path, credA, map[string]any{"sequence": 7, "kind": "snapshot", "pods": []any{syncPod(clusterA, 1, "Running")}})
		if a := syncAnswer(t, status, body); a["snapshotComplete"] != true || a["podsDeleted"] != 2.0 || a["podsUnchanged"] != 1.0 {
			t.Errorf("snapshot part 2: %s", body)
		}
		if live := podsByID(t, env, "acme-reader", ""); len(live) != 1 || live[syncPodID(1)] == nil {
			t.Errorf("after the snapshot: %v", live)
		}
		gone := podsByID(t, env, "acme-reader", "&deleted=true")
		if len(gone) != 2 || gone[syncPodID(2)]["deletedAt"] == nil || gone[syncPodID(3)]["k8sPhase"] != "Running" {
			t.Errorf("deleted pods: %v", gone)
		}

		// A delta's tombstone deletes pod 1.
		status, body = servertest.Post(t, env, path, credA, map[string]any{"sequence": 8, "kind": "delta", "deletedPodIds": []string{syncPodID(1)}})
		if a := syncAnswer(t, status, body); a["podsDeleted"] != 1.0 {
			t.Errorf("tombstone: %s", body)
		}
	})
}

func TestClusterSyncRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		credA := enrollCluster(t, env, clusterA, 9301)
		credB := enrollCluster(t, env, clusterB, 9302)
		status, body := servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running")))
		syncAnswer(t, status, body)

		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credB, syncBatch(1, "delta", syncPod(clusterA, 9, "Running")))
		servertest.Expect(t, "B writes A's path", status, body, 403, "cannot write cluster")
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterB+"/sync", credB, syncBatch(1, "delta", syncPod(clusterA, 9, "Running")))
		servertest.Expect(t, "B names A's clusterId", status, body, 403, `pods[0].clusterId`)
		// B's own cluster id on A's pod UID and workload id, and A's project
		// id, which is B's own project of that id (a project id is its
		// tenant's): the workload is refused.
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterB+"/sync", credB, syncBatch(1, "delta", syncPod(clusterB, 1, "Running")))
		servertest.Expect(t, "B writes A's workload", status, body, 403, `workloads[0].id \"`+syncWorkload+`\" is a workload of another cluster`)
		if strings.Contains(body, clusterA) || strings.Contains(body, "9301") || strings.Contains(body, "team-a") {
			t.Errorf("the refusal names the other cluster: %s", body)
		}
		b := map[string]any{"sequence": 1, "kind": "delta", "pods": []any{syncPod(clusterB, 1, "Running")},
			"projects":  []map[string]any{{"id": "proj-b", "name": "team-b"}},
			"workloads": []map[string]any{{"id": "aaaaaaaa-0000-4000-8000-0000000000b0", "name": "w", "projectId": "proj-b"}}}
		b["pods"].([]any)[0].(map[string]any)["workloadId"] = "aaaaaaaa-0000-4000-8000-0000000000b0"
		b["pods"].([]any)[0].(map[string]any)["projectId"] = "proj-b"
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterB+"/sync", credB, b)
		servertest.Expect(t, "B writes A's pod", status, body, 403, `pods[0].id`)

		// Strict parsing names the field; bounds name the limit.
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, []byte(`{"sequence": 2, "kind": "delta", "pods": [{"nmae": "x"}]}`))
		servertest.Expect(t, "unknown member", status, body, 400, "nmae")
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, []byte(`{"sequence": 2, "kind": "delta", "pods": [{"id": "`+syncPodID(9)+`"}]}`))
		servertest.Expect(t, "missing name", status, body, 400, "pods[0].name is required")
		many := make([]string, 5001)
		for i := range many {
			many[i] = fmt.Sprintf("x-%d", i)
		}
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, map[string]any{"sequence": 2, "kind": "delta", "deletedPodIds": many})
		servertest.Expect(t, "too many", status, body, 400, "(5000)")
		huge := []byte(`{"sequence": 2, "kind": "delta", "deletedPodIds": ["` + strings.Repeat("x", 17<<20) + `"]}`)
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, huge)
		servertest.Expect(t, "too large", status, body, 413, "16777216 bytes")

		// An API key writes no cluster; a revoked credential is refused.
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", "ops-admin", syncBatch(2, "delta"))
		servertest.Expect(t, "API key", status, body, 401, "an API key writes no cluster")
		status, body = servertest.Post(t, env, "/v1/admin/clusters/"+clusterA+"/revoke", "ops-admin", []byte(`{}`))
		servertest.Expect(t, "revoke", status, body, 200, `"revoked":true`)
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, syncBatch(2, "delta"))
		servertest.Expect(t, "revoked", status, body, 401, "unknown cluster credential")
		status, body = servertest.Post(t, env, "/v1/admin/clusters/enroll", "ops-admin", map[string]any{"clusterId": clusterA, "tenantId": 9302})
		servertest.Expect(t, "other tenant", status, body, 409, "enrolled for another tenant")
		status, body = servertest.Post(t, env, "/v1/admin/clusters/enroll", "acme-reader", map[string]any{"clusterId": "c-z", "tenantId": 9301})
		servertest.Expect(t, "not an operator", status, body, 403, "nodes.admin")
		// Rotation: a new credential works, from sequence 1 again; the old one no longer.
		credA2 := enrollCluster(t, env, clusterA, 9301)
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA2, syncBatch(1, "delta", syncPod(clusterA, 1, "Succeeded")))
		syncAnswer(t, status, body)
	})
}

// TestClusterSnapshotGivesSQLiteStatistics: SQLite gathers no planner
// statistics by itself, so a cluster's completed snapshot (which may have
// written every pod of the cluster) leaves the pods table analyzed; a
// delta or a snapshot's earlier part does not (figure 10: a Pods read at
// 30,000 pods took 26 ms without them, 1.2 ms with).
func TestClusterSnapshotGivesSQLiteStatistics(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	env := servertest.New(t, st, clusterFixture)
	cred := enrollCluster(t, env, clusterA, 9301)
	path := "/api/v1/clusters/" + clusterA + "/sync"
	analyzed := func() int64 {
		// No sqlite_stat1 at all (never analyzed) reads as none.
		if storetest.Count(t, st, "sqlite_master", "name = 'sqlite_stat1'") == 0 {
			return 0
		}
		return storetest.Count(t, st, "sqlite_stat1", "tbl = 'pods'")
	}
	first := syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running"))
	first["more"] = true
	steps := []struct {
		name  string
		batch map[string]any
		want  bool
	}{
		{"a snapshot's first part", first, false},
		{"a delta", syncBatch(2, "delta", syncPod(clusterA, 1, "Succeeded")), false},
		{"the snapshot's last part", syncBatch(3, "snapshot", syncPod(clusterA, 2, "Running")), true},
	}
	for _, s := range steps {
		status, body := servertest.Post(t, env, path, cred, s.batch)
		if status != 200 {
			t.Fatalf("%s: %d %s", s.name, status, body)
		}
		if got := analyzed() > 0; got != s.want {
			t.Errorf("after %s: pods analyzed %t, want %t", s.name, got, s.want)
		}
	}
}
