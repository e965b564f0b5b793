package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// A refusal names the kind of credential the caller sent: the 403 of a
// missing permission says "this access token" to a caller with an access
// token and "this API key" to one with a key, on every face; an agent's
// secrets sent where a user's credential goes are named as what they are.
func TestRefusalsNameTheCredential(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		token := func(perms string) string {
			t.Helper()
			app := servertest.NewApplication(t, env, `{"permissions": [`+perms+`]}`)
			var tok servertest.TokenAnswer
			servertest.Call(t, env, "POST", "/api/v1/token", "",
				`{"grantType":"client_credentials","clientId":"`+app.ClientID+`","clientSecret":"`+app.ClientSecret+`"}`, 200, &tok)
			return tok.AccessToken
		}
		workloads, compute := token(`"workloads.read"`), token(`"compute.read"`)
		for _, c := range []struct {
			what, method, path, credential, want string
		}{
			{"OpenRelay, token", "GET", "/v1/vms", workloads, "FORBIDDEN: this access token lacks the compute.read permission"},
			{"OpenRelay, key", "GET", "/v1/vms", "acme-workloads", "FORBIDDEN: this API key lacks the compute.read permission"},
			{"OpenRelay operate, token", "POST", "/v1/vms/vm-acme-1/restart", compute, "FORBIDDEN: this access token lacks the compute.operate permission"},
			{"Run:ai, token", "GET", "/api/v1/workloads/pods", compute, "this access token lacks the workloads.read permission"},
			{"Run:ai, key", "GET", "/api/v1/workloads/pods", "acme-reader", "this API key lacks the workloads.read permission"},
			{"admin, token", "GET", "/v1/admin/keys", workloads, "FORBIDDEN: this access token lacks the admin permission"},
			{"ingest, token", "POST", "/api/v1/metrics/samples", workloads, "this access token lacks the metrics.write permission"},
		} {
			var body []byte
			if c.method == "POST" {
				body = []byte(`{}`)
			}
			status, got := env.Do(c.method, c.path, c.credential, body, http.Header{"Content-Type": {"application/json"}})
			if status != 403 || servertest.ErrorMessage(t, got) != c.want {
				t.Errorf("%s: %d %s, want 403 %s", c.what, status, got, c.want)
			}
		}
		// GraphQL says the same, in its error's message.
		for _, c := range []struct{ credential, want string }{
			{workloads, "this access token lacks the compute.read permission"},
			{"acme-workloads", "this API key lacks the compute.read permission"},
		} {
			if r := env.GraphQL(c.credential, `{ vms { total } }`, nil); len(r.Errors) != 1 || r.Code() != "FORBIDDEN" || r.Errors[0].Message != c.want {
				t.Errorf("GraphQL vms: %+v, want FORBIDDEN %s", r.Errors, c.want)
			}
		}
	})
}

func TestAgentSecretsNamedOnUserPaths(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.IdentityFixture)
		credential := servertest.EnrollNode(t, env, "dgx-a")
		status, body := servertest.Post(t, env, "/v1/admin/nodes/enroll", "ops-admin", map[string]string{"nodeName": "dgx-b", "clusterId": "c1"})
		var e struct{ BootstrapToken string }
		if status != 201 || json.Unmarshal([]byte(body), &e) != nil {
			t.Fatalf("enroll: %d %s", status, body)
		}
		for _, c := range []struct{ what, token, want string }{
			{"node credential", credential, "UNAUTHENTICATED: a node credential reports to /v1/agent/inventory and /v1/agent/heartbeat only: send an API key or an access token here"},
			{"bootstrap token", e.BootstrapToken, "UNAUTHENTICATED: a bootstrap token is exchanged for a node credential at POST " + agentapi.RegisterPath + " only: send an API key or an access token here"},
		} {
			status, got := env.Do("GET", "/v1/vms", c.token, nil, nil)
			if status != 401 || servertest.ErrorMessage(t, got) != c.want {
				t.Errorf("%s on /v1/vms: %d %s, want 401 %s", c.what, status, got, c.want)
			}
		}
		// Where they belong they still work: the credential reports, the
		// bootstrap token registers.
		if s, b := servertest.Post(t, env, "/v1/agent/heartbeat", credential, servertest.HeartbeatOf("dgx-a", servertest.Sequence())); s != 200 {
			t.Errorf("heartbeat with the node credential: %d %s", s, b)
		}
		servertest.RegisterNode(t, env, e.BootstrapToken, "dgx-b")
	})
}
