package httpapi_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"gpugraph/clusterbatch"
	"gpugraph/clustersync"
	"gpugraph/httpapi/servertest"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

const (
	workloadA = "aaaaaaaa-0000-4000-8000-00000000000a"
	workloadB = "aaaaaaaa-0000-4000-8000-00000000000b"
)

// tenantPod is pod i of cluster in workload and project "42", named name.
func tenantPod(cluster, workload, id, name string) map[string]any {
	p := syncPod(cluster, 0, "Running")
	p["id"], p["workloadId"], p["projectId"], p["name"] = id, workload, "42", name
	return p
}

// tenantBatch reports project "42" named project, workload in it, and pods.
func tenantBatch(seq int64, project, workload string, pods ...map[string]any) map[string]any {
	if pods == nil {
		pods = []map[string]any{}
	}
	return map[string]any{"sequence": seq, "kind": "delta",
		"projects":  []map[string]any{{"id": "42", "name": project}},
		"workloads": []map[string]any{{"id": workload, "name": "job", "projectId": "42"}},
		"pods":      pods}
}

// Run:ai's project ids are small integers of each tenant's own: tenant A's
// cluster reporting project "42" leaves tenant B's own project "42" B's,
// and each tenant reads its own project, pods and names.
func TestClusterSyncProjectIDsAreEachTenants(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		credA := enrollCluster(t, env, clusterA, 9301)
		credB := enrollCluster(t, env, clusterB, 9302)
		status, body := post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, tenantBatch(1, "acme-research", workloadA,
			tenantPod(clusterA, workloadA, syncPodID(1), "a-1"), tenantPod(clusterA, workloadA, syncPodID(2), "a-2")))
		if a := syncAnswer(t, status, body); a["podsCreated"] != 2.0 || a["projects"] != 1.0 {
			t.Errorf("A's batch: %s", body)
		}
		status, body = post(t, env, "/api/v1/clusters/"+clusterB+"/sync", credB, tenantBatch(1, "globex-infra", workloadB,
			tenantPod(clusterB, workloadB, syncPodID(3), "b-3")))
		if a := syncAnswer(t, status, body); a["podsCreated"] != 1.0 || a["projects"] != 1.0 {
			t.Errorf("B's batch with its own project 42: %s", body)
		}

		for _, c := range []struct {
			token, project, workload string
			pods                     []string
		}{
			{"acme-reader", "acme-research", workloadA, []string{syncPodID(1), syncPodID(2)}},
			{"globex-reader", "globex-infra", workloadB, []string{syncPodID(3)}},
		} {
			tenant := map[string]int{"acme-reader": 9301, "globex-reader": 9302}[c.token]
			if got, want := data(t, env.GraphQL(c.token, `{ projects { id name tenantId } }`, nil)),
				fmt.Sprintf(`{"projects":[{"id":"42","name":%q,"tenantId":%d}]}`, c.project, tenant); got != want {
				t.Errorf("%s projects: %s, want %s", c.token, got, want)
			}
			if got, want := data(t, env.GraphQL(c.token, `{ workloads(projectId: "42") { id project { name } } }`, nil)),
				fmt.Sprintf(`{"workloads":[{"id":%q,"project":{"name":%q}}]}`, c.workload, c.project); got != want {
				t.Errorf("%s workloads of project 42: %s, want %s", c.token, got, want)
			}
			for _, q := range []string{"&filterBy=projectId==42", "&search=" + c.project, "&search=research", "&search=infra"} {
				pods := podsByID(t, env, c.token, q)
				want := c.pods
				if (q == "&search=research" || q == "&search=infra") && !strings.Contains(c.project, strings.TrimPrefix(q, "&search=")) {
					want = nil // the other tenant's project name
				}
				var got []string
				for id, p := range pods {
					got = append(got, id)
					if p["projectId"] != "42" || p["projectName"] != c.project {
						t.Errorf("%s %s: pod %s is of project %v %v, want 42 %s", c.token, q, id, p["projectId"], p["projectName"], c.project)
					}
				}
				sort.Strings(got)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s pods%s: %v, want %v", c.token, q, got, want)
				}
			}
			r := env.GraphQL(c.token, `{ pods(filterBy: ["projectId==42"]) { total pods { project { id name tenantId } workload { project { name } } } } }`, nil)
			var gq struct {
				Pods struct {
					Total int
					Pods  []struct {
						Project struct {
							ID, Name string
							TenantID int
						}
						Workload struct{ Project struct{ Name string } }
					}
				}
			}
			env.Decode(r, &gq)
			if gq.Pods.Total != len(c.pods) {
				t.Errorf("%s graphql pods of project 42: %d, want %d", c.token, gq.Pods.Total, len(c.pods))
			}
			for _, p := range gq.Pods.Pods {
				if p.Project.ID != "42" || p.Project.Name != c.project || p.Project.TenantID != tenant || p.Workload.Project.Name != c.project {
					t.Errorf("%s graphql pod's project %+v, workload's %+v, want 42 %s of %d", c.token, p.Project, p.Workload.Project, c.project, tenant)
				}
			}
		}
	})
}

// A tenant's clusters may register clustersync.MaxTenantProjects projects
// in all; a batch that would take it past them is refused whole, 403 as
// Kubernetes' ResourceQuota's "exceeded quota". Projects the tenant has
// already are sent again freely, and another tenant's bound is its own.
func TestClusterSyncProjectQuota(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, clusterFixture)
		credA := enrollCluster(t, env, clusterA, 9301)
		credB := enrollCluster(t, env, clusterB, 9302)
		pathA := "/api/v1/clusters/" + clusterA + "/sync"
		projects := func(from, n int) []map[string]any {
			out := make([]map[string]any, n)
			for i := range out {
				out[i] = map[string]any{"id": fmt.Sprint(from + i), "name": fmt.Sprintf("p-%d", from+i)}
			}
			return out
		}
		seq := int64(0)
		for from := 0; from < clustersync.MaxTenantProjects; from += clusterbatch.MaxProjects {
			seq++
			status, body := post(t, env, pathA, credA, map[string]any{"sequence": seq, "kind": "delta", "projects": projects(from, clusterbatch.MaxProjects)})
			syncAnswer(t, status, body)
		}
		// The last 999 again and one more: refused, nothing written.
		status, body := post(t, env, pathA, credA, map[string]any{"sequence": seq + 1, "kind": "delta",
			"projects": projects(clustersync.MaxTenantProjects-999, 1000)})
		const want = `{"code":403,"message":"exceeded quota: the batch's new projects (1) would give the tenant 10001 projects, above the bound of 10000 a tenant may have","requestId":"servertest"}`
		if status != 403 || body != want {
			t.Errorf("past the bound: %d %s\nwant 403 %s", status, body, want)
		}
		var n int64
		if err := st.DB.Raw("SELECT COUNT(*) FROM projects WHERE tenant_id = 9301").Scan(&n).Error; err != nil || n != clustersync.MaxTenantProjects {
			t.Errorf("tenant 9301 has %d projects (%v), want %d", n, err, clustersync.MaxTenantProjects)
		}
		// Known projects, renamed: no new one, taken.
		status, body = post(t, env, pathA, credA, map[string]any{"sequence": seq + 1, "kind": "delta", "projects": []map[string]any{{"id": "7", "name": "renamed"}}})
		syncAnswer(t, status, body)
		// Another tenant's project "10000": its first.
		status, body = post(t, env, "/api/v1/clusters/"+clusterB+"/sync", credB, map[string]any{"sequence": 1, "kind": "delta", "projects": projects(clustersync.MaxTenantProjects, 1)})
		syncAnswer(t, status, body)
	})
}
