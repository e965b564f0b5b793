package httpapi_test

import (
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The console's root queries answer the caller's organization's or tenant's
// rows only; on the shared GPUs another organization's holder is null.
func TestConsoleRootQueriesTenancy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		cases := []struct{ token, query, want string }{
			{"acme-workloads", `{ projects { id name tenantId } }`, `{"projects":[{"id":"1","name":"vision","tenantId":1001}]}`},
			{"globex-operator", `{ projects { name } }`, `{"projects":[{"name":"globex-research"}]}`},
			{"acme-workloads", `{ workloads { name project { name } } }`, `{"workloads":[{"name":"llm-serve","project":{"name":"vision"}},{"name":"resnet-train","project":{"name":"vision"}}]}`},
			{"acme-workloads", `{ workloads(projectId: "2") { name } }`, `{"workloads":[]}`},
			{"acme-workloads", `{ workloads(limit: 1, offset: 1) { name } }`, `{"workloads":[{"name":"resnet-train"}]}`},
			{"globex-operator", `{ workloads { name } }`, `{"workloads":[{"name":"globex-job"}]}`},
			{"acme-reader", `{ gpuModels { id name manufacturer } }`, `{"gpuModels":[{"id":"mi300x","manufacturer":"AMD","name":"AMD Instinct MI300X"},{"id":"h100-80gb","manufacturer":"NVIDIA","name":"NVIDIA H100 80GB HBM3"}]}`},
			{"acme-reader", `{ gpus(nodeId: "n1", first: 5) { nodes { id vm { id } } } }`,
				`{"gpus":{"nodes":[{"id":"n1-g0","vm":{"id":"vm-acme-1"}},{"id":"n1-g1","vm":{"id":"vm-acme-1"}},{"id":"n1-g2","vm":{"id":"pod-acme-1"}},{"id":"n1-g3","vm":null},{"id":"n1-g4","vm":null}]}}`},
			{"globex-operator", `{ gpus(nodeId: "n1", first: 5) { edges { node { id vm { id organizationId } } } } }`,
				`{"gpus":{"edges":[{"node":{"id":"n1-g0","vm":null}},{"node":{"id":"n1-g1","vm":null}},{"node":{"id":"n1-g2","vm":null}},{"node":{"id":"n1-g3","vm":{"id":"vm-globex-1","organizationId":"org-globex"}}},{"node":{"id":"n1-g4","vm":{"id":"vm-globex-1","organizationId":"org-globex"}}}]}}`},
			{"acme-reader", `{ gpus(health: FAILED) { totalCount nodes { id health failedReason } } }`, `{"gpus":{"nodes":[{"failedReason":"XID 79","health":"FAILED","id":"n1-g7"}],"totalCount":1}}`},
			{"acme-reader", `{ gpus(modelId: "mi300x") { totalCount } }`, `{"gpus":{"totalCount":4}}`},
			{"acme-reader", `{ nodeList(limit: 1) { nodes { name } next total } }`, `{"nodeList":{"next":1,"nodes":[{"name":"gpu-node-1"}],"total":2}}`},
			{"acme-reader", `{ nodeList(offset: 1) { nodes { name } next total } }`, `{"nodeList":{"next":null,"nodes":[{"name":"gpu-node-2"}],"total":2}}`},
			{"acme-reader", `{ nodesConnection { totalCount nodes { name vms { id } } } }`, `{"nodesConnection":{"nodes":[{"name":"gpu-node-1","vms":[{"id":"vm-acme-1"},{"id":"vm-acme-2"},{"id":"pod-acme-1"}]},{"name":"gpu-node-2","vms":[]}],"totalCount":2}}`},
			{"acme-reader", `{ vmsConnection { totalCount nodes { id } } }`, `{"vmsConnection":{"nodes":[{"id":"pod-acme-1"},{"id":"vm-acme-2"},{"id":"vm-acme-1"}],"totalCount":3}}`},
			{"globex-operator", `{ vmsConnection { totalCount nodes { id } } }`, `{"vmsConnection":{"nodes":[{"id":"vm-globex-1"}],"totalCount":1}}`},
			{"acme-workloads", `{ podsConnection { totalCount nodes { tenantId } } }`, `{"podsConnection":{"nodes":[{"tenantId":1001},{"tenantId":1001},{"tenantId":1001}],"totalCount":3}}`},
			{"globex-operator", `{ podsConnection(where: {nodeName: {eq: "gpu-node-1"}}) { totalCount nodes { tenantId } } }`, `{"podsConnection":{"nodes":[{"tenantId":1002}],"totalCount":1}}`},
		}
		for _, c := range cases {
			if got := servertest.Data(t, env.GraphQL(c.token, c.query, nil)); got != c.want {
				t.Errorf("%s %s\n got %s\nwant %s", c.token, c.query, got, c.want)
			}
		}
		forbidden := []struct{ token, query string }{
			{"acme-reader", `{ projects { id } }`},
			{"acme-reader", `{ workloads { id } }`},
			{"acme-reader", `{ podsConnection { totalCount } }`},
			{"acme-workloads", `{ gpuModels { id } }`},
			{"acme-workloads", `{ gpus { totalCount } }`},
			{"acme-workloads", `{ nodeList { total } }`},
			{"acme-workloads", `{ nodesConnection { totalCount } }`},
			{"acme-workloads", `{ vmsConnection { totalCount } }`},
		}
		for _, c := range forbidden {
			if r := env.GraphQL(c.token, c.query, nil); r.Code() != "FORBIDDEN" {
				t.Errorf("%s %s: %s %+v, want FORBIDDEN", c.token, c.query, r.Data, r.Errors)
			}
		}
		if r := env.GraphQL("", `{ gpus { totalCount } }`, nil); r.Code() != "UNAUTHENTICATED" {
			t.Errorf("no key: %+v", r.Errors)
		}
	})
}

// A connection's first sizes its cost as limit sizes an offset page's: the
// same nesting is refused at first: 500 and answered at first: 5.
func TestConnectionCostMultipliesByFirst(t *testing.T) {
	env := servertest.New(t, storetest.Open(t, store.SQLite), servertest.Base)
	const q = `query($n: Int) { gpus(first: $n) { edges { node { node { gpus { node { gpus { node { vms { id } } } } } } } } } }`
	r := env.GraphQL("acme-reader", q, map[string]any{"n": 500})
	if len(r.Errors) != 1 || r.Code() != "BAD_REQUEST" || r.Errors[0].Message != "operation has complexity 714001, which exceeds the limit of 200000" {
		t.Fatalf("first 500: %+v", r.Errors)
	}
	if r := env.GraphQL("acme-reader", q, map[string]any{"n": 5}); len(r.Errors) > 0 {
		t.Fatalf("first 5: %+v", r.Errors)
	}
}

// The console examples of docs/getting-started.md (Schema for consoles) run as written.
func TestREADMEConsoleExamples(t *testing.T) {
	env := servertest.New(t, storetest.Open(t, store.SQLite), servertest.Base)
	for token, q := range map[string]string{
		"acme-reader": `{ gpus(health: FAILED, first: 20) { totalCount edges { cursor node { index node { name } vm { name } } }
                                   pageInfo { hasNextPage endCursor } } }`,
		"acme-workloads": `{ podsConnection(where: {k8sPhase: {eq: "Running"}, createdAt: {gte: "2024-06-01T00:00:00Z"}}, first: 50) {
    nodes { name nodeName } pageInfo { hasNextPage endCursor } } }`,
	} {
		if got := servertest.Data(t, env.GraphQL(token, q, nil)); len(got) < 60 {
			t.Errorf("%s: %s", q, got)
		}
	}
}
