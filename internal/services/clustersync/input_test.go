package clustersync_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// stored counts the rows of the cluster sync's tables.
func stored(t *testing.T, st *store.Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"pods", "workloads", "projects", "revisions"} {
		n := storetest.Count(t, st, table, "")
		out[table] = n
	}
	return out
}

// A NUL, or bytes that are not UTF-8, in any text of a batch is a 400
// naming the member on both engines (PostgreSQL's text holds neither: it
// was a 500, which the connector retries for good); nothing of the batch
// is written, and the next batch with the same sequence applies.
func TestClusterSyncRefusesNonText(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		cred := enrollCluster(t, env, clusterA, 9301)
		path := "/api/v1/clusters/" + clusterA + "/sync"
		before := stored(t, st)
		for _, c := range []struct {
			name string
			set  func(b map[string]any)
			want string
		}{
			{"project name", func(b map[string]any) { b["projects"].([]map[string]any)[0]["name"] = "a\x00b" }, "projects[0].name contains a NUL character"},
			{"workload name", func(b map[string]any) { b["workloads"].([]map[string]any)[0]["name"] = "a\x00b" }, "workloads[0].name contains a NUL character"},
			{"pod name", func(b map[string]any) { pod(b, 1)["name"] = "a\x00b" }, "pods[1].name contains a NUL character"},
			{"k8sPhase", func(b map[string]any) { pod(b, 1)["k8sPhase"] = "a\x00b" }, "pods[1].k8sPhase contains a NUL character"},
			{"priorityClassName", func(b map[string]any) { pod(b, 1)["priorityClassName"] = "a\x00b" }, "pods[1].priorityClassName contains a NUL character"},
			{"nodeName", func(b map[string]any) { pod(b, 1)["nodeName"] = "a\x00b" }, "pods[1].nodeName contains a NUL character"},
			{"ip", func(b map[string]any) { pod(b, 1)["ip"] = "a\x00b" }, "pods[1].ip contains a NUL character"},
			{"a member name", func(b map[string]any) { pod(b, 1)["x\x00"] = 1 }, "pods[1] holds a member name with a NUL character"},
		} {
			b := syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running"), syncPod(clusterA, 2, "Running"))
			c.set(b)
			status, body := servertest.Post(t, env, path, cred, b)
			if got := servertest.RunaiError(t, c.name, status, body, 400); got != c.want {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}
		// Bytes that are not UTF-8 (json.Marshal would replace them).
		raw, _ := json.Marshal(syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running")))
		raw = []byte(strings.Replace(string(raw), `"train-1-worker"`, "\"train-\xff\"", 1))
		status, body := servertest.Post(t, env, path, cred, raw)
		if got, want := servertest.RunaiError(t, "pod name not UTF-8", status, body, 400), "pods[0].name holds text that is not valid UTF-8"; !strings.HasPrefix(got, want) {
			t.Errorf("pod name not UTF-8: %q, want %q…", got, want)
		}
		if after := stored(t, st); after["pods"] != before["pods"] || after["workloads"] != before["workloads"] || after["projects"] != before["projects"] {
			t.Errorf("refused batches wrote rows: %v, before %v", after, before)
		}
		status, body = servertest.Post(t, env, path, cred, syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running")))
		if a := syncAnswer(t, status, body); a["podsCreated"] != 1.0 {
			t.Errorf("sequence 1 after the refusals: %s", body)
		}
	})
}

// pod is the i-th pod of a batch syncBatch made.
func pod(b map[string]any, i int) map[string]any { return b["pods"].([]map[string]any)[i] }

// A batch's pod id, workloadId and revisionId are UUIDs, as Run:ai's
// schema has them: another is a 400 naming the member, and nothing of the
// batch stays (its valid pods, workload and project neither); the
// workload id it named is no workload. Upper case is the same id.
func TestClusterSyncRefusesNonUUIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		cred := enrollCluster(t, env, clusterA, 9301)
		path := "/api/v1/clusters/" + clusterA + "/sync"
		before := stored(t, st)
		const wl = "not-a-uuid-wl"
		for _, c := range []struct {
			name string
			set  func(b map[string]any)
			want string
		}{
			{"pod id", func(b map[string]any) { pod(b, 1)["id"] = "not-a-uuid-pod" },
				`pods[1].id "not-a-uuid-pod" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
			{"workloadId", func(b map[string]any) {
				b["workloads"] = append(b["workloads"].([]map[string]any), map[string]any{"id": wl, "name": "w", "projectId": syncProject})
				pod(b, 1)["workloadId"] = wl
			}, `workloads[1].id "not-a-uuid-wl" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
			{"pod's workloadId", func(b map[string]any) { pod(b, 1)["workloadId"] = wl },
				`pods[1].workloadId "not-a-uuid-wl" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
			{"revisionId", func(b map[string]any) { pod(b, 1)["revisionId"] = "rev-1" },
				`pods[1].revisionId "rev-1" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`},
		} {
			b := syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running"), syncPod(clusterA, 2, "Running"))
			pod(b, 0)["revisionId"] = "dddddddd-0000-4000-8000-000000000001"
			c.set(b)
			status, body := servertest.Post(t, env, path, cred, b)
			if got := servertest.RunaiError(t, c.name, status, body, 400); got != c.want {
				t.Errorf("%s: %q, want %q", c.name, got, c.want)
			}
		}
		status, body := servertest.Post(t, env, path, cred, map[string]any{"sequence": 1, "kind": "delta", "deletedPodIds": []string{"gone"}})
		if got, want := servertest.RunaiError(t, "tombstone", status, body, 400), `deletedPodIds[0] "gone" is not a UUID (8-4-4-4-12 hex digits), as Run:ai's schema has it`; got != want {
			t.Errorf("tombstone: %q, want %q", got, want)
		}
		if after := stored(t, st); after["pods"] != before["pods"] || after["workloads"] != before["workloads"] ||
			after["projects"] != before["projects"] || after["revisions"] != before["revisions"] {
			t.Errorf("refused batches wrote rows: %v, before %v", after, before)
		}
		if status, body := servertest.PodsGET(t, env, "acme-reader", "/api/v1/workloads/"+wl+"/pods"); status != 404 {
			t.Errorf("the refused workload: %d %s", status, body)
		}

		// Upper case: stored, answered and found in lower case.
		b := syncBatch(1, "snapshot", syncPod(clusterA, 1, "Running"))
		pod(b, 0)["id"] = strings.ToUpper(syncPodID(1))
		pod(b, 0)["workloadId"] = strings.ToUpper(syncWorkload)
		b["workloads"].([]map[string]any)[0]["id"] = strings.ToUpper(syncWorkload)
		pod(b, 0)["revisionId"] = "DDDDDDDD-0000-4000-8000-000000000001"
		status, body = servertest.Post(t, env, path, cred, b)
		syncAnswer(t, status, body)
		p := podsByID(t, env, "acme-reader", "")[syncPodID(1)]
		if p == nil || p["workloadId"] != syncWorkload || p["revisionId"] != "dddddddd-0000-4000-8000-000000000001" {
			t.Errorf("upper-case ids stored as %v", p)
		}
		if status, body := servertest.PodsGET(t, env, "acme-reader", "/api/v1/workloads/"+syncWorkload+"/pods"); status != 200 || strings.Count(string(body), `"id"`) != 1 {
			t.Errorf("the workload's pods: %d %s", status, body)
		}
	})
}

// A cluster id is a UUID, one id in any case: the upper-case spelling of
// a cluster enrolled for another tenant is that cluster (409), for the
// same tenant the same row (enrolling again rotates its credential); its
// connector may spell it either way, and its pods carry it in lower case,
// the case filterBy finds.
func TestClusterIDCase(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		upper := strings.ToUpper(clusterA)
		first := enrollCluster(t, env, clusterA, 9301)
		status, body := servertest.Post(t, env, "/v1/admin/clusters/enroll", "ops-admin", map[string]any{"clusterId": upper, "tenantId": 9302})
		servertest.Expect(t, "upper case for another tenant", status, body, 409, `"code":"CLUSTER_OF_OTHER_TENANT"`)
		servertest.Expect(t, "upper case for another tenant", status, body, 409, `cluster \"`+clusterA+`\" is enrolled for another tenant`)
		status, body = servertest.Post(t, env, "/v1/admin/clusters/enroll", "ops-admin", map[string]any{"clusterId": "not-a-uuid", "tenantId": 9301})
		if got, want := servertest.OpenRelayError(t, "not a UUID", status, body, 400),
			`clusterId "not-a-uuid" must be a UUID (8-4-4-4-12 hex digits), as Run:ai's cluster ids are: the Pods API answers it as one`; got != want {
			t.Errorf("not a UUID: %q, want %q", got, want)
		}

		status, body = servertest.Post(t, env, "/v1/admin/clusters/enroll", "ops-admin", map[string]any{"clusterId": upper, "tenantId": 9301})
		var e struct{ ClusterID, Credential string }
		if err := json.Unmarshal([]byte(body), &e); status != 201 || err != nil || e.ClusterID != clusterA {
			t.Fatalf("upper case for the same tenant: %d %s", status, body)
		}
		if rows := storetest.Count(t, st, "cluster_syncs", ""); rows != 1 {
			t.Errorf("%d cluster rows, want 1", rows)
		}
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", first, syncBatch(1, "delta"))
		servertest.Expect(t, "the rotated credential", status, body, 401, "unknown cluster credential")

		// The connector spells its id in upper case, in the path and its pods.
		b := syncBatch(1, "snapshot", syncPod(upper, 1, "Running"), syncPod(upper, 2, "Running"))
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+upper+"/sync", e.Credential, b)
		if a := syncAnswer(t, status, body); a["clusterId"] != clusterA || a["podsCreated"] != 2.0 {
			t.Errorf("sync: %s", body)
		}
		for _, id := range []string{clusterA, upper} {
			pods := podsByID(t, env, "acme-reader", "&filterBy="+url.QueryEscape("clusterId=="+id))
			if len(pods) != 2 || pods[syncPodID(1)]["clusterId"] != clusterA {
				t.Errorf("filterBy=clusterId==%s: %v", id, pods)
			}
		}
		status, body = servertest.Post(t, env, "/v1/admin/clusters/"+upper+"/revoke", "ops-admin", []byte(`{}`))
		servertest.Expect(t, "revoke in upper case", status, body, 200, `{"clusterId":"`+clusterA+`","revoked":true}`)
		status, body = servertest.Post(t, env, "/v1/admin/clusters/not-a-uuid/revoke", "ops-admin", nil)
		servertest.Expect(t, "revoke not a UUID", status, body, 400, `clusterId \"not-a-uuid\" must be a UUID`)
	})
}
