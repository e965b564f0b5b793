package clustersync_test

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/services/clustersync"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
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
		status, body := servertest.Post(t, env, "/api/v1/clusters/"+clusterA+"/sync", credA, tenantBatch(1, "acme-research", workloadA,
			tenantPod(clusterA, workloadA, syncPodID(1), "a-1"), tenantPod(clusterA, workloadA, syncPodID(2), "a-2")))
		if a := syncAnswer(t, status, body); a["podsCreated"] != 2.0 || a["projects"] != 1.0 {
			t.Errorf("A's batch: %s", body)
		}
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterB+"/sync", credB, tenantBatch(1, "globex-infra", workloadB,
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
			if got, want := servertest.Data(t, env.GraphQL(c.token, `{ projects { id name tenantId } }`, nil)),
				fmt.Sprintf(`{"projects":[{"id":"42","name":%q,"tenantId":%d}]}`, c.project, tenant); got != want {
				t.Errorf("%s projects: %s, want %s", c.token, got, want)
			}
			if got, want := servertest.Data(t, env.GraphQL(c.token, `{ workloads(projectId: "42") { id project { name } } }`, nil)),
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
			status, body := servertest.Post(t, env, pathA, credA, map[string]any{"sequence": seq, "kind": "delta", "projects": projects(from, clusterbatch.MaxProjects)})
			syncAnswer(t, status, body)
		}
		// The last 999 again and one more: refused, nothing written.
		status, body := servertest.Post(t, env, pathA, credA, map[string]any{"sequence": seq + 1, "kind": "delta",
			"projects": projects(clustersync.MaxTenantProjects-999, 1000)})
		const want = `{"code":403,"message":"exceeded quota: the batch's new projects (1) would give the tenant 10001 projects, above the bound of 10000 a tenant may have","requestId":"servertest"}`
		if status != 403 || body != want {
			t.Errorf("past the bound: %d %s\nwant 403 %s", status, body, want)
		}
		if n := storetest.Count(t, st, "projects", "tenant_id = ?", 9301); n != clustersync.MaxTenantProjects {
			t.Errorf("tenant 9301 has %d projects, want %d", n, clustersync.MaxTenantProjects)
		}
		// Known projects, renamed: no new one, taken.
		status, body = servertest.Post(t, env, pathA, credA, map[string]any{"sequence": seq + 1, "kind": "delta", "projects": []map[string]any{{"id": "7", "name": "renamed"}}})
		syncAnswer(t, status, body)
		// Another tenant's project "10000": its first.
		status, body = servertest.Post(t, env, "/api/v1/clusters/"+clusterB+"/sync", credB, map[string]any{"sequence": 1, "kind": "delta", "projects": projects(clustersync.MaxTenantProjects, 1)})
		syncAnswer(t, status, body)
	})
}

// Two tenants' connectors, on two replicas of one PostgreSQL, report one
// new pod id at the same moment: both read no such pod, and the write
// itself decides. Each round exactly one is told 200 podsCreated 1, the
// other the 403 its read would have given once the first committed, and
// the stored pod is the winner's whole.
func TestClusterSyncOneNewPodTwoTenantsAtOnce(t *testing.T) {
	st := storetest.Replicas(t, store.Postgres, 2)
	envA := servertest.New(t, st[0], clusterFixture)
	envB := servertest.New(t, st[1], "")
	credA := enrollCluster(t, envA, clusterA, 9301)
	credB := enrollCluster(t, envA, clusterB, 9302)
	type side struct {
		env                      *servertest.Env
		cluster, cred, workload  string
		tenant                   int
		project, namePrefix, who string
	}
	sides := []side{
		{envA, clusterA, credA, workloadA, 9301, "acme-research", "a-", "A"},
		{envB, clusterB, credB, workloadB, 9302, "globex-infra", "b-", "B"},
	}
	for _, s := range sides {
		status, body := servertest.Post(t, s.env, "/api/v1/clusters/"+s.cluster+"/sync", s.cred, tenantBatch(1, s.project, s.workload))
		syncAnswer(t, status, body)
	}
	wins := map[string]int{}
	for round := range 30 {
		id := fmt.Sprintf("dddddddd-0000-4000-8000-%012d", round)
		type answer struct {
			status int
			body   string
		}
		answers := make([]answer, len(sides))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range sides {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b := map[string]any{"sequence": round + 2, "kind": "delta",
					"pods": []any{tenantPod(s.cluster, s.workload, id, fmt.Sprintf("%s%d", s.namePrefix, round))}}
				<-start
				answers[i].status, answers[i].body = servertest.Post(t, s.env, "/api/v1/clusters/"+s.cluster+"/sync", s.cred, b)
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, a := range answers {
			if a.status == 200 {
				if winner >= 0 {
					t.Errorf("round %d: both told 200: %s / %s", round, answers[0].body, answers[1].body)
				}
				winner = i
				if a := syncAnswer(t, a.status, a.body); a["podsCreated"] != 1.0 {
					t.Errorf("round %d: %s's answer %v, want podsCreated 1", round, sides[i].who, a)
				}
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: neither told 200: %v", round, answers)
		}
		loser := answers[1-winner]
		want := `{"code":403,"message":"pods[0].id \"` + id + `\" is a pod of another cluster; this cluster cannot write it","requestId":"servertest"}`
		if loser.status != 403 || loser.body != want {
			t.Errorf("round %d: %s told %d %s\nwant 403 %s", round, sides[1-winner].who, loser.status, loser.body, want)
		}
		w := sides[winner]
		wins[w.who]++
		var row []string
		storetest.Scan(t, st[0], &row, "SELECT tenant_id || ' ' || cluster_id || ' ' || workload_id || ' ' || name || ' ' || project_name FROM pods WHERE id = ?", id)
		if want := fmt.Sprintf("%d %s %s %s%d %s", w.tenant, w.cluster, w.workload, w.namePrefix, round, w.project); fmt.Sprint(row) != "["+want+"]" {
			t.Errorf("round %d: stored %v, want %s's whole row %s", round, row, w.who, want)
		}
		for _, s := range sides {
			pods := podsByID(t, s.env, map[string]string{"A": "acme-reader", "B": "globex-reader"}[s.who], "&filterBy=name=="+url.QueryEscape(fmt.Sprintf("%s%d", s.namePrefix, round)))
			if (len(pods) == 1) != (s.who == w.who) {
				t.Errorf("round %d: %s reads %v", round, s.who, pods)
			}
		}
	}
	t.Logf("rounds won: %v", wins)
}
