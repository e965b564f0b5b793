package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// benchPods is the size of the generated pods table.
const benchPods = 100_000

// BenchmarkPods times, on PostgreSQL (TEST_DATABASE_URL), a filtered and
// sorted 500-pod page and a count over a generated table of benchPods pods
// of two tenants (90% Acme's, 20% deleted, half completed), through the
// store and through the REST face (which adds the key lookup and JSON):
//
//	TEST_DATABASE_URL=postgres://… go test ./internal/httpapi -run '^$' -bench Pods -benchtime 50x
func BenchmarkPods(b *testing.B) {
	st := storetest.Open(b, store.Postgres) // skips without TEST_DATABASE_URL
	env := servertest.New(b, st, `{"organizations": [{"id": "org-acme", "name": "Acme", "tenantId": 1001}],
		"apiKeys": [{"token": "acme-workloads", "organizationId": "org-acme", "permissions": ["workloads.read"]}]}`)
	generatePods(b, st, benchPods)
	ctx := context.Background()

	query := func(b *testing.B, filters []string, search, sortBy, sortOrder string) store.PodQuery {
		f, err := filterby.Parse(filters)
		if err != nil {
			b.Fatal(err)
		}
		s, err := filterby.ParseSort(sortBy, sortOrder)
		if err != nil {
			b.Fatal(err)
		}
		return store.PodQuery{TenantID: 1001, Filters: f, Search: search, Sort: s}
	}
	pages := []struct {
		name            string
		filters         []string
		search          string
		sortBy, order   string
		offset, minimum int
	}{
		{"default order", nil, "", "", "", 0, 500},
		{"phase filter, name desc", []string{"k8sPhase==Running"}, "", "name", "desc", 0, 500},
		{"two filters, nodeName, offset 5000", []string{"nodeName=^gpu-node-1", "createdAt>=2024-01-15T00:00:00Z"}, "", "nodeName", "asc", 5000, 500},
		{"search, completedAt desc", nil, "worker-3", "completedAt", "desc", 0, 500},
		{"rare filter, createdAt", []string{"nodeName==gpu-node-7"}, "", "createdAt", "asc", 0, 100},
	}
	for _, p := range pages {
		b.Run("page/"+p.name, func(b *testing.B) {
			q := query(b, p.filters, p.search, p.sortBy, p.order)
			for b.Loop() {
				pods, _, err := st.PodPage(ctx, q, p.offset, 500)
				if err != nil || len(pods) < p.minimum {
					b.Fatalf("%d pods, %v", len(pods), err)
				}
			}
		})
	}
	counts := []struct {
		name    string
		filters []string
		search  string
	}{
		{"all", nil, ""},
		{"phase filter", []string{"k8sPhase==Running"}, ""},
		{"two filters", []string{"nodeName=^gpu-node-1", "createdAt>=2024-01-15T00:00:00Z"}, ""},
		{"search", nil, "worker-3"},
	}
	for _, c := range counts {
		b.Run("count/"+c.name, func(b *testing.B) {
			q := query(b, c.filters, c.search, "", "")
			for b.Loop() {
				if n, err := st.CountPods(ctx, q); err != nil || n == 0 {
					b.Fatalf("%d, %v", n, err)
				}
			}
		})
	}
	for _, path := range []string{
		"/api/v1/workloads/pods?limit=500&filterBy=k8sPhase%3D%3DRunning&sortBy=name&sortOrder=desc",
		"/api/v1/workloads/pods/count?filterBy=k8sPhase%3D%3DRunning",
	} {
		b.Run("REST "+path, func(b *testing.B) {
			for b.Loop() {
				if status, body := env.Do(http.MethodGet, path, "acme-workloads", nil, nil); status != http.StatusOK {
					b.Fatalf("%d %s", status, body)
				}
			}
		})
	}
}

// generatePods fills the pods table with n pods (and their projects and
// workloads) in a few INSERT … SELECT FROM generate_series statements.
func generatePods(b *testing.B, st *store.Store, n int) {
	b.Helper()
	stmts := []string{
		`INSERT INTO projects (id, name, tenant_id)
			SELECT 'bp' || g, 'project-' || g, CASE WHEN g <= 9 THEN 1001 ELSE 1002 END FROM generate_series(1, 10) g`,
		`INSERT INTO workloads (id, name, project_id, cluster_id, tenant_id)
			SELECT 'bw' || g, 'workload-' || g, 'bp' || (1 + g % 10), 'cluster-1', CASE WHEN 1 + g % 10 <= 9 THEN 1001 ELSE 1002 END
			FROM generate_series(1, 200) g`,
		fmt.Sprintf(`INSERT INTO pods (id, tenant_id, name, priority_class_name, workload_id, cluster_id, project_id,
				node_name, created_at, completed_at, containers, current_node_pool, requested_node_pools,
				requested_resources, allocated_resources, tolerations, k8s_phase, ip, task, node_affinity,
				k8s_phase_updated_at, updated_at, deleted_at, project_name, workload_name, search_text)
			SELECT id, CASE WHEN wl %% 10 = 9 THEN 1002 ELSE 1001 END, name, 'normal', 'bw' || wl, 'cluster-1',
				'bp' || (1 + wl %% 10), node, created, CASE WHEN g %% 2 = 0 THEN created + interval '1 hour' END,
				'[{"name":"main","image":"nvcr.io/nvidia/pytorch:24.01-py3","startedAt":"2024-01-01T00:00:00Z"}]',
				CASE WHEN g %% 7 = 0 THEN NULL ELSE 'pool-' || (g %% 3) END, '["default"]',
				'{"gpuRequestType":"portion","gpu":{"limit":1,"request":1},"gpuMemory":null,"cpu":{"limit":8,"request":4},"cpuMemory":{"limit":"64G","request":"32G"},"extendedResources":null}',
				'{"gpu":1,"gpuMemory":"80Gi","cpu":4,"cpuMemory":"32G","extendedResources":[]}',
				'[{"key":"nvidia.com/gpu","operator":"Exists","value":"","effect":"NoSchedule","tolerationSeconds":null}]',
				(ARRAY['Running', 'Pending', 'Succeeded', 'Failed'])[1 + g %% 4], '10.0.' || (g %% 250) || '.' || (g %% 200), NULL,
				'{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"gpu","operator":"In","values":["h100"]}]}]},"preferred":null}',
				created, created, CASE WHEN g %% 5 = 0 THEN created + interval '1 day' END,
				'project-' || (1 + wl %% 10), 'workload-' || wl,
				lower(name) || chr(31) || coalesce(node, '') || chr(31) || 'workload-' || wl || chr(31) || 'project-' || (1 + wl %% 10)
			FROM (SELECT g, lpad(g::text, 8, '0') || '-0000-4000-8000-000000000000' AS id,
					'job-' || ((g * 7919) %% %[1]d) || '-worker-' || (g %% 8) AS name,
					1 + g %% 200 AS wl,
					CASE WHEN g %% 50 = 0 THEN NULL ELSE 'gpu-node-' || (g %% 300) END AS node,
					timestamptz '2024-01-01 00:00:00+00' + ((g * 7919) %% %[1]d) * interval '1 minute' AS created
				FROM generate_series(1, %[1]d) g) s`, n),
		// What autovacuum does soon after a bulk load; it lets counts read indexes only.
		`VACUUM ANALYZE pods`,
	}
	for _, s := range stmts {
		storetest.Exec(b, st, s)
	}
}
