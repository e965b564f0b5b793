package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Finding 7: the WebSocket transport is held to the rate limit, the
// budget, the request timeout, an init deadline and connection caps.

// sub is one graphql-transport-ws connection of the suite's
// (servertest.WS, with the operations of the budget's tests below).
type sub struct {
	t    *testing.T
	conn *websocket.Conn
}

type wsMsg = servertest.WSMessage

func (s *sub) ws() *servertest.WS { return &servertest.WS{T: s.t, Conn: s.conn} }

func (s *sub) send(m wsMsg) { s.ws().Send(m) }

func (s *sub) next() wsMsg {
	s.t.Helper()
	return s.ws().Next()
}

func (s *sub) read(d time.Duration) (wsMsg, error) { return s.ws().Read(d) }

func (s *sub) closedWith() (websocket.StatusCode, string) {
	s.t.Helper()
	return s.ws().ClosedWith()
}

// wsURL is env's /graphql as a WebSocket address.
func wsURL(env *servertest.Env) string {
	return "ws" + strings.TrimPrefix(env.Srv.URL, "http") + "/graphql"
}

// dialWS upgrades to graphql-transport-ws without saying anything yet.
func dialWS(t *testing.T, env *servertest.Env) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, wsURL(env), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err == nil {
		t.Cleanup(func() { conn.CloseNow() })
	}
	return conn, resp, err
}

// openWS upgrades and sends connection_init as token; the answer to the
// init is the caller's to read.
func openWS(t *testing.T, env *servertest.Env, token string) *sub {
	t.Helper()
	conn, _, err := dialWS(t, env)
	if err != nil {
		t.Fatal(err)
	}
	s := &sub{t: t, conn: conn}
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + token})
	s.send(wsMsg{Type: "connection_init", Payload: init})
	return s
}

// initWS is openWS with the connection_ack read.
func initWS(t *testing.T, env *servertest.Env, token string) *sub {
	t.Helper()
	s := openWS(t, env, token)
	if m := s.next(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %s %s", m.Type, m.Payload)
	}
	return s
}

// operate sends query as operation id.
func (s *sub) operate(id, query string) {
	q, _ := json.Marshal(map[string]any{"query": query})
	s.send(wsMsg{ID: id, Type: "subscribe", Payload: q})
}

// wsResult is one operation's answer over a WebSocket.
type wsResult struct {
	Data   json.RawMessage
	Errors []servertest.Error
}

func (r wsResult) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// results reads the answers (next, then complete) of n operations, by id.
func (s *sub) results(n int) map[string]wsResult {
	s.t.Helper()
	out := map[string]wsResult{}
	completed := 0
	for completed < n {
		m := s.next()
		switch m.Type {
		case "next":
			var r wsResult
			if err := json.Unmarshal(m.Payload, &r); err != nil {
				s.t.Fatalf("payload %s: %v", m.Payload, err)
			}
			out[m.ID] = r
		case "complete":
			completed++
		default:
			s.t.Fatalf("message %s %s, want next or complete", m.Type, m.Payload)
		}
	}
	return out
}

// 1,000 queries over one WebSocket are charged to the key's rate limit:
// past its burst each answers the 429 error HTTP answers, and HTTP shares
// the same bucket.
func TestWebSocketRateLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{
			RateLimits: map[ratelimit.Class]ratelimit.Limit{ratelimit.API: slow(5)},
		})
		s := initWS(t, env, "acme-reader")
		const n = 1000
		for i := range n {
			s.operate(fmt.Sprint(i), `{ node(id: "n1") { name } }`)
		}
		answered, limited := 0, 0
		for id, r := range s.results(n) {
			switch {
			case len(r.Errors) == 0 && strings.Contains(string(r.Data), "gpu-node-1"):
				answered++
			case r.code() == "RATE_LIMITED" && r.Errors[0].Extensions["status"] == float64(429) &&
				r.Errors[0].Message == fmt.Sprintf("this credential sent more requests than its rate limit allows; retry in %v s", r.Errors[0].Extensions["retryAfter"]):
				// retryAfter: the whole seconds until a token is back
				// (1,000 at the start, less as the test runs).
				limited++
			default:
				t.Fatalf("operation %s: %s %+v", id, r.Data, r.Errors)
			}
		}
		if answered != 5 || limited != n-5 {
			t.Errorf("%d answered, %d refused; want the burst of 5 answered and %d refused", answered, limited, n-5)
		}
		if r := env.GraphQL("acme-reader", `{ node(id: "n1") { name } }`, nil); r.Status != 429 || r.Code() != "RATE_LIMITED" {
			t.Errorf("HTTP after the WebSocket spent the bucket: %d %+v", r.Status, r.Errors)
		}
	})
}

// An upgrade that never sends connection_init is closed with 4408 at the
// init deadline.
func TestWebSocketInitDeadline(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{WebSocketInitTimeout: 300 * time.Millisecond})
		conn, _, err := dialWS(t, env)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _, err = conn.Read(ctx)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4408 || ce.Reason != "connection initialisation timeout" {
			t.Fatalf("an upgrade that says nothing: %v, want close 4408", err)
		}
		if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
			t.Errorf("closed after %v, want the 300ms init deadline", d)
		}
		// One that says connection_init in time is not closed.
		s := initWS(t, env, "acme-reader")
		time.Sleep(400 * time.Millisecond)
		s.operate("1", `{ node(id: "n1") { name } }`)
		if r := s.results(1)["1"]; len(r.Errors) != 0 {
			t.Errorf("a query after the init deadline on an initialised socket: %+v", r.Errors)
		}
	})
}

// WebSockets are capped per client address (429 on the upgrade) and per
// credential (4429 at connection_init); a closed one frees its place.
func TestWebSocketConnectionCaps(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{WebSocketsPerAddress: 3, WebSocketsPerCredential: 2})
		a1 := initWS(t, env, "acme-reader")
		initWS(t, env, "acme-reader")
		s := openWS(t, env, "acme-reader")
		if code, reason := s.closedWith(); code != 4429 || reason != "this credential holds 2 WebSocket connections already, the most one credential may hold" {
			t.Errorf("a third connection of one credential: %d %q, want 4429", code, reason)
		}
		// The refused one gives its place back once the server has seen
		// its close (after the close frame the client read): a third of
		// the address. Until then an upgrade is refused with 429.
		var g *sub
		for i := 0; g == nil; i++ {
			conn, resp, err := dialWS(t, env)
			switch {
			case err == nil:
				g = &sub{t: t, conn: conn}
			case resp == nil || resp.StatusCode != 429:
				t.Fatalf("a third connection of the address: %v %v, want 101 (or 429 until the refused one is gone)", err, resp)
			case i == 100:
				t.Fatalf("the refused connection never gave its place back: %v", err)
			default:
				time.Sleep(20 * time.Millisecond)
			}
		}
		init, _ := json.Marshal(map[string]any{"Authorization": "Bearer globex-operator"})
		g.send(wsMsg{Type: "connection_init", Payload: init})
		if m := g.next(); m.Type != "connection_ack" {
			t.Fatalf("globex-operator's connection_init: %s %s", m.Type, m.Payload)
		}
		_, resp, err := dialWS(t, env)
		if err == nil || resp == nil || resp.StatusCode != 429 {
			t.Fatalf("a fourth connection of one address: %v %v, want 429", err, resp)
		}
		a1.conn.Close(websocket.StatusNormalClosure, "")
		g.conn.Close(websocket.StatusNormalClosure, "")
		// Places free as the server sees the closes.
		for i := 0; ; i++ {
			conn, _, err := dialWS(t, env)
			if err == nil {
				s := &sub{t: t, conn: conn}
				init, _ := json.Marshal(map[string]any{"Authorization": "Bearer acme-reader"})
				s.send(wsMsg{Type: "connection_init", Payload: init})
				if m, err := s.read(5 * time.Second); err == nil && m.Type == "connection_ack" {
					return
				}
			}
			if i == 100 {
				t.Fatalf("no place came back: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// A query or mutation over a WebSocket keeps the request timeout (one
// TIMEOUT error, status 504) and holds a slot of the budget while it
// runs: past its credential's share it answers 429, as HTTP does; the
// connection stays usable.
func TestWebSocketOperationsTimeoutAndBudget(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{RequestTimeout: 500 * time.Millisecond,
			PublicConcurrency: 8, CredentialConcurrency: 2, QueueWait: 100 * time.Millisecond})
		s := initWS(t, env, "acme-operator")
		release := holdWrites(t, st)
		start := time.Now()
		for i := range 4 {
			s.operate(fmt.Sprint(i), `mutation { restartVm(id: "vm-acme-2") { id status } }`)
		}
		// Two take the credential's two slots and wait for the write lock;
		// the other two answer at once.
		for id, r := range s.results(2) {
			if r.code() != "RATE_LIMITED" || r.Errors[0].Extensions["status"] != float64(429) ||
				r.Errors[0].Message != "this credential holds its share of the server, 2 in flight at once; retry when one has answered" {
				t.Errorf("operation %s past the share: %s %+v", id, r.Data, r.Errors)
			}
		}
		// PostgreSQL cancels the waiting statements at the deadline; SQLite's
		// busy wait does not see it, so the lock goes once the deadline has
		// passed and its next statement sees it.
		time.Sleep(time.Until(start.Add(700 * time.Millisecond)))
		release()
		for id, r := range s.results(2) {
			if r.code() != "TIMEOUT" || len(r.Errors) != 1 || r.Errors[0].Extensions["status"] != float64(504) || string(r.Data) != "null" {
				t.Errorf("operation %s past the request timeout: %s %+v", id, r.Data, r.Errors)
			}
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the operations answered after %v, past the 500ms timeout", d)
		}
		s.operate("q", `{ node(id: "n1") { name } }`)
		if r := s.results(1)["q"]; len(r.Errors) != 0 {
			t.Errorf("a query on the same connection afterwards: %+v", r.Errors)
		}
	})
}

// A query or mutation sent over SSE keeps the request timeout as well
// (it skipped it, and the budget, as a stream).
func TestSSEOperationTimeout(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{RequestTimeout: 500 * time.Millisecond})
		release := holdWrites(t, st)
		start := time.Now()
		answer := make(chan string, 1)
		go func() {
			body := `{"query":"mutation { restartVm(id: \"vm-acme-2\") { id } }"}`
			resp := env.Request(http.MethodPost, "/graphql", "acme-operator", []byte(body), http.Header{"Accept": {"text/event-stream"}})
			answer <- readAll(t, resp)
		}()
		// See the SQLite note of TestWebSocketOperationsTimeoutAndBudget.
		time.Sleep(700 * time.Millisecond)
		release()
		select {
		case got := <-answer:
			if !strings.Contains(got, `"code":"TIMEOUT"`) || !strings.Contains(got, `"status":504`) {
				t.Errorf("a mutation over SSE past the request timeout: %s", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a mutation over SSE never answered")
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("answered after %v", d)
		}
	})
}
