package httpapi_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Only /graphql builds dataloaders (its resolvers read through them): a
// REST request of either API and an agent's reports build none. A GraphQL
// request builds one set for its caller; a query over SSE one more for its
// operation (extension.StreamBudget), as a stream's operations get their
// own.
func TestOnlyGraphQLBuildsLoaders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var built atomic.Int64
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.CountLoaders(httpapi.Config{}, &built))
		cred := servertest.NodeCredential(t, st, "dgx-07", "c-9")

		if status, body := env.Do(http.MethodGet, "/v1/vms", "acme-reader", nil, nil); status != 200 {
			t.Fatalf("GET /v1/vms: %d %s", status, body)
		}
		if status, body := env.Do(http.MethodGet, "/api/v1/workloads/pods", "acme-workloads", nil, nil); status != 200 {
			t.Fatalf("GET /api/v1/workloads/pods: %d %s", status, body)
		}
		if status, body := servertest.Post(t, env, agentapi.InventoryPath, cred, sequenced(mockInventory("dgx-07"))); status != 201 {
			t.Fatalf("inventory: %d %s", status, body)
		}
		hb := agentapi.HeartbeatRequest{NodeName: "dgx-07", AgentVersion: "2.6.1"}
		if status, body := servertest.Post(t, env, agentapi.HeartbeatPath, cred, sequenced(hb)); status != 200 {
			t.Fatalf("heartbeat: %d %s", status, body)
		}
		if n := built.Load(); n != 0 {
			t.Fatalf("two REST requests and two agent reports built %d sets of dataloaders, want 0", n)
		}

		if r := env.GraphQL("acme-reader", `{ vms { vms { id node { id gpus { id } } } } }`, nil); r.Status != 200 || len(r.Errors) > 0 {
			t.Fatalf("a GraphQL query: %d %+v", r.Status, r.Errors)
		}
		if n := built.Load(); n != 1 {
			t.Fatalf("a GraphQL query built %d sets of dataloaders, want 1", n)
		}
		resp := env.Request(http.MethodPost, "/graphql", "acme-reader", []byte(`{"query":"{ nodes { id } }"}`), http.Header{"Accept": {"text/event-stream"}})
		if got := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(got, `"nodes":[`) {
			t.Fatalf("a query over SSE: %d %s", resp.StatusCode, got)
		}
		if n := built.Load(); n != 3 {
			t.Fatalf("after a query over SSE, %d sets of dataloaders built, want 3 (its request's and its operation's)", n)
		}
	})
}
