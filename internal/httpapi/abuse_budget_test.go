package httpapi_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/extension"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// holdWrites blocks every write of VMs until the returned func is called,
// so a restart holds its slot of the budget as long as the test wants:
// SQLite's one write lock (BEGIN IMMEDIATE), PostgreSQL's EXCLUSIVE lock
// on vms (plain reads go on).
func holdWrites(t *testing.T, st *store.Store) func() {
	t.Helper()
	if st.Dialect == store.Postgres {
		return storetest.Lock(t, st, "LOCK TABLE vms IN EXCLUSIVE MODE")
	}
	return storetest.Lock(t, st, "UPDATE organizations SET name = name WHERE id = 'none'")
}

// waitForLockWait waits, on PostgreSQL, until a statement waits for a lock
// on vms: the restart holds its slot of the budget by then, so a probe
// sent after it cannot take the slot first (the probe, answered in a few
// milliseconds, could otherwise hold the one slot longer than the
// restart's queue wait on a loaded machine). SQLite shows no waiter.
func waitForLockWait(t *testing.T, st *store.Store) {
	t.Helper()
	if st.Dialect != store.Postgres {
		return
	}
	for i := 0; ; i++ {
		var n int64
		storetest.Scan(t, st, &n, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'vms'::regclass")
		if n > 0 {
			return
		}
		if i == 200 {
			t.Fatal("no statement ever waited for the lock on vms")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// restarts starts n restarts of vm-acme-2 as token; their statuses arrive
// on the channel as they answer.
func restarts(env *servertest.Env, token string, n int) <-chan int {
	out := make(chan int, n)
	for range n {
		go func() {
			resp := env.Request(http.MethodPost, "/v1/vms/vm-acme-2/restart", token, nil, nil)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			out <- resp.StatusCode
		}()
	}
	return out
}

// With the public budget full, /graphql and the public REST paths answer
// 503 in their API's shape with Retry-After, while /healthz and the agent's
// reports, which are outside it, keep answering.
func TestPublicBudgetLeavesHealthAndAgentsAnswering(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{PublicConcurrency: 1, QueueWait: 50 * time.Millisecond})
		cred := servertest.NodeCredential(t, st, "gpu-node-1", "71f69d83-ba66-4822-adf5-55ce55efd210")
		// Hold the one public slot: a restart waiting for the write lock.
		release := holdWrites(t, st)
		held := restarts(env, "acme-operator", 1)
		waitForLockWait(t, st)
		// Wait until the slot is taken: a public request is refused.
		var status int
		var body []byte
		for i := 0; ; i++ {
			status, body = env.Do(http.MethodGet, "/api/v1/workloads/pods/count", "globex-operator", nil, nil)
			if status == http.StatusServiceUnavailable {
				break
			}
			select {
			case s := <-held:
				t.Fatalf("the restart meant to hold the slot answered %d while the writes were held", s)
			default:
			}
			if i == 200 {
				t.Fatalf("the public budget never filled: %d %s", status, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var runai struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &runai) != nil || runai.Code != 503 || runai.Message == "" {
			t.Errorf("busy Run:ai answer: %s", body)
		}
		resp := env.Request(http.MethodGet, "/v1/vms/vm-globex-1", "globex-operator", nil, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"error":{"code":"UNAVAILABLE"`) {
			t.Errorf("busy OpenRelay answer: %d retry-after %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
		g := env.GraphQL("globex-operator", `{ vms { total } }`, nil)
		if g.Status != 503 || g.Code() != "UNAVAILABLE" {
			t.Errorf("busy GraphQL answer: %d %+v", g.Status, g.Errors)
		}
		if s, b := env.Do(http.MethodGet, "/healthz", "", nil, nil); s != 200 {
			t.Errorf("/healthz with the budget full: %d %s", s, b)
		}
		// The heartbeat is outside the budget: it waits for the database
		// (SQLite's write lock is held), never for a slot.
		hb := make(chan int, 1)
		go func() {
			body := fmt.Sprintf(`{"nodeName": "gpu-node-1", "agentVersion": "2.6.1", "gpus": [], "sequence": %d}`, servertest.Sequence())
			s, _ := env.Do(http.MethodPost, "/v1/agent/heartbeat", cred, []byte(body), nil)
			hb <- s
		}()
		time.Sleep(100 * time.Millisecond)
		release()
		if s := <-hb; s != 200 {
			t.Errorf("an agent's heartbeat with the budget full: %d", s)
		}
		if s := <-held; s != 200 {
			t.Errorf("the restart that held the slot: %d", s)
		}
		// The slot came back when its request ended.
		if s, b := env.Do(http.MethodGet, "/api/v1/workloads/pods/count", "globex-operator", nil, nil); s != 200 {
			t.Errorf("the slot never came back: %d %s", s, b)
		}
	})
}

// Finding 5: 64 bodies trickled by one key hold no slot (they are read
// before one is taken), so another key's requests answer 200 throughout;
// each slow body answers 408 at the body deadline, in its API's shape.
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		const bodyTimeout = 600 * time.Millisecond
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{PublicConcurrency: 8, QueueWait: 50 * time.Millisecond,
			BodyTimeout: bodyTimeout})
		addr := strings.TrimPrefix(env.Srv.URL, "http://")
		type slow struct {
			conn net.Conn
			face string
		}
		var conns []slow
		for i := range 64 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if i%2 == 0 {
				fmt.Fprintf(c, "POST /api/v1/metrics/samples HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer acme-metrics\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"podMetrics\": [")
				conns = append(conns, slow{c, "runai"})
			} else {
				fmt.Fprintf(c, "POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer acme-metrics\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"query\": \"")
				conns = append(conns, slow{c, "graphql"})
			}
		}
		// One byte each every 100 ms, as the attack did (every 2 s).
		stop := make(chan struct{})
		var trickle sync.WaitGroup
		trickle.Add(1)
		go func() {
			defer trickle.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				for _, s := range conns {
					s.conn.Write([]byte(" "))
				}
			}
		}()
		start := time.Now()
		for time.Since(start) < bodyTimeout/2 {
			if s, b := env.Do(http.MethodGet, "/api/v1/workloads/pods/count", "globex-operator", nil, nil); s != 200 {
				t.Fatalf("another key while 64 bodies trickle: %d %s", s, b)
			}
			if r := env.GraphQL("acme-reader", `{ vms { total } }`, nil); r.Status != 200 || len(r.Errors) != 0 {
				t.Fatalf("another key's GraphQL while 64 bodies trickle: %d %+v", r.Status, r.Errors)
			}
		}
		for _, s := range conns {
			s.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(s.conn), nil)
			if err != nil {
				t.Fatalf("a slow %s body got no answer: %v", s.face, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := `"code":408`
			if s.face == "graphql" {
				want = `"code":"REQUEST_TIMEOUT"`
			}
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), want) || !strings.Contains(string(b), "did not arrive within 600ms") {
				t.Errorf("a slow %s body: %d %s", s.face, resp.StatusCode, b)
			}
			// …and its connection is closed, not drained byte by byte.
			if n, err := s.conn.Read(make([]byte, 1)); err == nil || isTimeoutErr(err) {
				t.Errorf("a slow %s body's connection after the 408: %d more bytes, %v", s.face, n, err)
			}
		}
		if d := time.Since(start); d > bodyTimeout+3*time.Second {
			t.Errorf("the slow bodies answered after %v, past the %v body deadline", d, bodyTimeout)
		}
		close(stop)
		trickle.Wait()
	})
}

func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Finding 5: one credential holds at most its share of the budget: its
// requests past the share wait, then answer 429 saying so, while another
// credential's requests still run.
func TestBudgetShareOfOneCredential(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{PublicConcurrency: 8, CredentialConcurrency: 2,
			QueueWait: 200 * time.Millisecond})
		release := holdWrites(t, st)
		answers := restarts(env, "acme-operator", 6)
		var refused []int
		for range 4 {
			select {
			case s := <-answers:
				refused = append(refused, s)
			case <-time.After(10 * time.Second):
				t.Fatalf("only %d restarts answered while the writes are held: %v", len(refused), refused)
			}
		}
		for _, s := range refused {
			if s != http.StatusTooManyRequests {
				t.Errorf("a restart past the credential's share: %d, want 429", s)
			}
		}
		resp := env.Request(http.MethodGet, "/v1/vms", "acme-operator", nil, nil)
		b := readAll(t, resp)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" ||
			!strings.Contains(b, `"error":{"code":"RATE_LIMITED","message":"this credential holds its share of the server, 2 in flight at once; retry when one has answered"`) {
			t.Errorf("the credential at its share: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
		if s, b := env.Do(http.MethodGet, "/api/v1/workloads/pods/count", "globex-operator", nil, nil); s != 200 {
			t.Errorf("another credential while one holds its share: %d %s", s, b)
		}
		if r := env.GraphQL("acme-reader", `{ node(id: "n1") { name } }`, nil); r.Status != 200 || len(r.Errors) != 0 {
			t.Errorf("another credential's GraphQL: %d %+v", r.Status, r.Errors)
		}
		release()
		for range 2 {
			if s := <-answers; s == 429 || s == 503 {
				t.Errorf("a restart within the share: %d", s)
			}
		}
	})
}

// Finding 5: a subscription sent as a plain POST (or GET) is refused at
// once with a 400 naming the transports that carry it; 64 of them at once
// hold nothing.
func TestSubscriptionAsPlainRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{RequestTimeout: 5 * time.Second})
		start := time.Now()
		var wg sync.WaitGroup
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := env.GraphQL("acme-reader", `subscription { vmEvents { id } }`, nil)
				if r.Status != 400 || r.Code() != "BAD_REQUEST" || len(r.Errors) != 1 || r.Errors[0].Message != extension.SubscriptionTransportsMessage {
					t.Errorf("a subscription as a plain POST: %d %+v", r.Status, r.Errors)
				}
			}()
		}
		wg.Wait()
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("64 refusals took %v", d)
		}
		for _, m := range []string{"WebSocket", "graphql-transport-ws", "Server-Sent Events", "Accept: text/event-stream"} {
			if !strings.Contains(extension.SubscriptionTransportsMessage, m) {
				t.Errorf("the refusal does not name %q", m)
			}
		}
		s, b := env.Do(http.MethodGet, "/graphql?query=subscription%7BvmEvents%7Bid%7D%7D", "acme-reader", nil, nil)
		if s != 400 || !strings.Contains(string(b), "Server-Sent Events") {
			t.Errorf("a subscription as a GET: %d %s", s, b)
		}
	})
}

// Every timeout answers 504 in its API's shape, including a deadline that
// passes during the key's lookup or while waiting for a slot (it was a 503).
func TestEveryTimeoutIs504(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{RequestTimeout: time.Nanosecond})
		status, body := env.Do("GET", "/api/v1/workloads/pods", "acme-workloads", nil, nil)
		if status != 504 || !strings.Contains(string(body), `"code":504`) {
			t.Errorf("runai out of time: %d %s", status, body)
		}
		status, body = env.Do("POST", "/v1/vms/x/restart", "acme-operator", nil, nil)
		if status != 504 || !strings.Contains(string(body), `"error":{"code":"TIMEOUT"`) {
			t.Errorf("openrelay out of time: %d %s", status, body)
		}
		if r := env.GraphQL("acme-reader", `{ vms { total } }`, nil); r.Status != 504 || r.Code() != "TIMEOUT" || r.Errors[0].Extensions["status"] != float64(504) {
			t.Errorf("graphql out of time: %d %+v", r.Status, r.Errors)
		}
	})
}

// A request cannot pass for a stream by its headers: a REST path with
// Upgrade or Accept: text/event-stream is charged to the rate limit like
// any other request (an Upgrade header used to skip it).
func TestStreamHeadersSkipNoLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{
			RateLimits: map[ratelimit.Class]ratelimit.Limit{ratelimit.API: slow(2)},
		})
		h := http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}, "Accept": {"text/event-stream"}}
		var got []int
		for range 3 {
			s, _ := env.Do(http.MethodGet, "/api/v1/workloads/pods/count", "acme-workloads", nil, h)
			got = append(got, s)
		}
		if fmt.Sprint(got) != "[200 200 429]" {
			t.Errorf("three requests with stream headers and a burst of 2: %v, want [200 200 429]", got)
		}
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
