package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"gpugraph/httpapi"
	"gpugraph/httpapi/servertest"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// With the public budget full, /graphql and the public REST paths answer
// 503 in their API's shape with Retry-After, while /healthz and the agent's
// reports, which are outside it, keep answering.
func TestPublicBudgetLeavesHealthAndAgentsAnswering(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{PublicConcurrency: 1, QueueWait: 50 * time.Millisecond})
		cred := servertest.NodeCredential(t, st, "gpu-node-1", "71f69d83-ba66-4822-adf5-55ce55efd210")
		// Hold the one public slot: a sample batch whose body never ends.
		c, err := net.Dial("tcp", strings.TrimPrefix(env.Srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/v1/metrics/samples HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer acme-metrics\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"podMetrics\": [")
		// Wait until the slot is taken: a public request is refused.
		var status int
		var body []byte
		for i := 0; i < 100; i++ {
			status, body = env.Do(http.MethodGet, "/api/v1/workloads/pods/count", "acme-operator", nil, nil)
			if status == http.StatusServiceUnavailable {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if status != http.StatusServiceUnavailable {
			t.Fatalf("the public budget never filled: %d %s", status, body)
		}
		var runai struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &runai) != nil || runai.Code != 503 || runai.Message == "" {
			t.Errorf("busy Run:ai answer: %s", body)
		}
		resp := env.Request(http.MethodPost, "/v1/vms/vm-acme-2/restart", "acme-operator", nil, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"error":{"code":"UNAVAILABLE"`) {
			t.Errorf("busy OpenRelay answer: %d retry-after %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
		g := env.GraphQL("acme-operator", `{ vms { total } }`, nil)
		if g.Status != 503 || g.Code() != "UNAVAILABLE" {
			t.Errorf("busy GraphQL answer: %d %+v", g.Status, g.Errors)
		}
		if s, b := env.Do(http.MethodGet, "/healthz", "", nil, nil); s != 200 {
			t.Errorf("/healthz with the budget full: %d %s", s, b)
		}
		hb := fmt.Sprintf(`{"nodeName": "gpu-node-1", "agentVersion": "2.6.1", "gpus": [], "sequence": %d}`, servertest.Sequence())
		if s, b := env.Do(http.MethodPost, "/v1/agent/heartbeat", cred, []byte(hb), nil); s != 200 {
			t.Errorf("an agent's heartbeat with the public budget full: %d %s", s, b)
		}
		// The slot comes back when its request ends.
		c.Close()
		for i := 0; i < 100; i++ {
			if status, _ = env.Do(http.MethodGet, "/api/v1/workloads/pods/count", "acme-operator", nil, nil); status == 200 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("the slot never came back: %d", status)
	})
}

// An answer over the response cap is refused whole with a sentence that says
// what to change, not cut short.
func TestResponseCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{ResponseLimit: 200})
		r := env.GraphQL("acme-operator", `{ pods(limit: 500) { pods { id name nodeName createdAt k8sPhase } } }`, nil)
		if r.Code() != "RESPONSE_TOO_LARGE" || string(r.Data) != "null" || !strings.Contains(r.Errors[0].Message, "smaller limit") {
			t.Errorf("over the cap: %+v %s", r.Errors, r.Data)
		}
		small := env.GraphQL("acme-operator", `{ pods(limit: 1) { pods { id } } }`, nil)
		if len(small.Errors) != 0 {
			t.Errorf("under the cap: %+v", small.Errors)
		}
	})
}
