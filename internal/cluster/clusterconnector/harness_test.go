package clusterconnector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/lockedbuf"
	"gpugraph/internal/store"
)

// fixture: the operator (nodes.admin, who enrolls clusters) and a reader
// of tenant 9401's pods.
const fixture = `{
 "organizations": [{"id": "org-ops", "name": "Ops", "tenantId": 9400}, {"id": "org-acme", "name": "Acme", "tenantId": 9401}],
 "apiKeys": [{"token": "ops-admin", "organizationId": "org-ops", "permissions": ["nodes.admin"]},
             {"token": "acme-reader", "organizationId": "org-acme", "permissions": ["workloads.read"]}]
}`

const (
	clusterA = "cccccccc-0000-4000-8000-0000000000a1"
	clusterB = "cccccccc-0000-4000-8000-0000000000b2"
)

// fault is what the front answers in the server's place: a status with a
// message (and Retry-After when retryAfter is not ""), or, with lose, the
// server's answer is thrown away after the server applied the request
// and a 502 answered instead (an answer lost on the way back).
type fault struct {
	status     int
	retryAfter string
	lose       bool
}

// exchange is one request the front saw and what it answered.
type exchange struct {
	at     time.Time
	auth   string
	body   []byte
	batch  clusterbatch.Batch
	status int
	answer string
}

// harness is a real gpugraph server (servertest, on a real database)
// behind a front that records every sync request and can answer in the
// server's place (fault) to play a server that is down or overloaded.
type harness struct {
	t     *testing.T
	env   *servertest.Env
	front *httptest.Server
	mu    sync.Mutex
	seen  []exchange
	// fault, when set, is asked for each request (its 1-based number).
	fault func(n int) fault
	log   *lockedbuf.Buffer
}

func newHarness(t *testing.T, st *store.Store) *harness {
	t.Helper()
	h := &harness{t: t, env: servertest.New(t, st, fixture), log: &lockedbuf.Buffer{}}
	h.front = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.front.Close)
	return h
}

func (h *harness) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	x := exchange{at: time.Now(), auth: strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), body: body}
	_ = json.Unmarshal(body, &x.batch)
	h.mu.Lock()
	n := len(h.seen) + 1
	f := h.fault
	h.mu.Unlock()
	var ft fault
	if f != nil {
		ft = f(n)
	}
	if ft.status == 0 || ft.lose {
		req, _ := http.NewRequest(r.Method, h.env.Srv.URL+r.URL.Path, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		x.status, x.answer = resp.StatusCode, strings.TrimSpace(string(out))
		if !ft.lose {
			w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
			w.WriteHeader(resp.StatusCode)
			_, _ = w.Write(out)
			h.record(x)
			return
		}
		ft.status = http.StatusBadGateway
	}
	if ft.retryAfter != "" {
		w.Header().Set("Retry-After", ft.retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ft.status)
	fmt.Fprintf(w, `{"message":"the front answers %d"}`, ft.status)
	if x.status == 0 {
		x.status, x.answer = ft.status, fmt.Sprintf(`{"message":"the front answers %d"}`, ft.status)
	}
	h.record(x)
}

func (h *harness) record(x exchange) {
	h.mu.Lock()
	h.seen = append(h.seen, x)
	h.mu.Unlock()
}

// reset forgets the requests seen so far.
func (h *harness) reset() {
	h.mu.Lock()
	h.seen = nil
	h.mu.Unlock()
}

// exchanges are the requests the front saw so far.
func (h *harness) exchanges() []exchange {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]exchange(nil), h.seen...)
}

// waitExchanges waits until the front saw n requests and answers them.
func (h *harness) waitExchanges(n int) []exchange {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		xs := h.exchanges()
		if len(xs) >= n {
			return xs
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the front saw %d requests within 30 s, want %d; the log:\n%s", len(xs), n, h.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// enroll enrolls cluster for tenant 9401 as the operator: its credential.
func (h *harness) enroll(cluster string) string {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"clusterId": cluster, "tenantId": 9401})
	status, out := h.env.Do(http.MethodPost, "/v1/admin/clusters/enroll", "ops-admin", body, nil)
	var e struct{ Credential string }
	if err := json.Unmarshal(out, &e); status != http.StatusCreated || err != nil || !strings.HasPrefix(e.Credential, "gpgcl_") {
		h.t.Fatalf("enroll %s: %d %s", cluster, status, out)
	}
	return e.Credential
}

// syncURL is the front's sync path of cluster.
func (h *harness) syncURL(cluster string) string {
	return h.front.URL + "/api/v1/clusters/" + cluster + "/sync"
}

// logger logs at debug level into h.log.
func (h *harness) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// pods are tenant 9401's pods by id (the deleted ones with deleted).
func (h *harness) pods(deleted bool) map[string]map[string]any {
	h.t.Helper()
	path := "/api/v1/workloads/pods?verbosity=full&limit=500"
	if deleted {
		path += "&deleted=true"
	}
	status, body := h.env.Do(http.MethodGet, path, "acme-reader", nil, nil)
	var page struct{ Pods []map[string]any }
	if status != http.StatusOK || json.Unmarshal(body, &page) != nil {
		h.t.Fatalf("GET %s: %d %s", path, status, body)
	}
	out := map[string]map[string]any{}
	for _, p := range page.Pods {
		out[p["id"].(string)] = p
	}
	return out
}

// fields fails unless p's fields are want's, exactly (compared as JSON).
func fields(t *testing.T, what string, p, want map[string]any) {
	t.Helper()
	if p == nil {
		t.Errorf("%s: no such pod", what)
		return
	}
	for k, v := range want {
		g, _ := json.Marshal(p[k])
		w, _ := json.Marshal(v)
		if !bytes.Equal(g, w) {
			t.Errorf("%s: %s = %s, want %s", what, k, g, w)
		}
	}
}

// podUID is synthetic pod i's UID.
func podUID(i int) string { return fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", i) }

// created is when the synthetic pods were created.
var created = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// syntheticBatch is a batch of cluster's pods ids, as the connector maps
// and assembles them (Conventions.Map, Connector.batch) from pods in
// namespace team-a of project team-a.
func syntheticBatch(cluster, kind string, ids ...int) *clusterbatch.Batch {
	c := &Connector{cfg: Config{ClusterID: cluster, Conventions: RunaiConventions()}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"runai/queue": "team-a"}}}
	var mapped []Mapped
	for _, i := range ids {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("job-%d", i), Namespace: "team-a", UID: types.UID(podUID(i)), CreationTimestamp: metav1.NewTime(created)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1"}}},
		}
		mapped = append(mapped, c.cfg.Conventions.Map(p, Related{ClusterID: cluster, Namespace: ns}))
	}
	return c.batch(kind, mapped)
}
