package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services"
	livefeed "gpugraph/internal/services/live"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// liveWorld is the compute tests' world (servertest.World) with n
// CPU-only running VMs of Acme (vm-0 …) and one of Globex (vm-g), and an
// empty event log.
func liveWorld(t *testing.T, st *store.Store, n int) {
	t.Helper()
	servertest.ResetOps(t, st, liveFixture(n))
}

// liveFixture is liveWorld's data set, for worlds built on it.
func liveFixture(n int) *dataset.File {
	f := servertest.World()
	for i := range n {
		servertest.AddVM(f, servertest.VMSpec{ID: fmt.Sprintf("vm-%d", i), Node: "n1", Status: "running", CPU: 1, RAM: 1, Disk: 1})
	}
	servertest.AddVM(f, servertest.VMSpec{ID: "vm-g", Org: "org-globex", Node: "n1", Status: "running", CPU: 1, RAM: 1, Disk: 1})
	return f
}

// liveServer serves st as the command does (no answer-checking recorder,
// which could not upgrade a WebSocket).
func liveServer(t *testing.T, st *store.Store, feed *livefeed.Feed) *httptest.Server {
	t.Helper()
	if feed == nil {
		feed = livefeed.New(st, livefeed.Limits{})
	}
	srv := httptest.NewServer(servertest.Handler(st, servertest.Options{Services: services.Config{Live: feed}, LoaderWait: time.Millisecond}, servertest.Config{}))
	t.Cleanup(func() { feed.Shutdown(); srv.Close() })
	return srv
}

// act runs one mutation (stopVm, terminateVm) through srv's GraphQL.
func act(t *testing.T, srv *httptest.Server, token, field, id string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": `mutation($id: ID!) { ` + field + `(id: $id) { id } }`,
		"variables": map[string]any{"id": id}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Errors []any }
	_ = json.NewDecoder(resp.Body).Decode(&r)
	if resp.StatusCode != 200 || len(r.Errors) > 0 {
		t.Fatalf("%s %s: %d %v", field, id, resp.StatusCode, r.Errors)
	}
}

// gotEvent is one vmEvents message.
type gotEvent struct {
	ID, VMID, From, To, Transition, Actor string
	VM                                    *struct{ ID, Status string }
}

func subscribe(t *testing.T, srv *httptest.Server, token string, vars map[string]any) *servertest.WS {
	t.Helper()
	return servertest.Subscribe(t, srv.URL, token, `subscription($ids: [ID!], $after: ID) {
		vmEvents(ids: $ids, after: $after) { id vmId from to transition actor vm { id status } } }`, vars)
}

// events reads n events, failing on anything else.
func events(s *servertest.WS, n int) []gotEvent {
	s.T.Helper()
	return servertest.NextData(s, n, func(d struct{ VMEvents gotEvent }) gotEvent { return d.VMEvents })
}

// wantEvents reads the events want names (vmId:status, space-separated,
// in order) from s, and ends the test at once, naming what it read,
// unless they are exactly those (what says which stream); it answers them.
func wantEvents(s *servertest.WS, what, want string) []gotEvent {
	s.T.Helper()
	got := events(s, len(strings.Fields(want)))
	if ids(got) != want {
		s.T.Fatalf("%s: events %s, want %s", what, ids(got), want)
	}
	return got
}

func ids(evs []gotEvent) string {
	var b []string
	for _, e := range evs {
		b = append(b, e.VMID+":"+strings.ToLower(e.To))
	}
	return strings.Join(b, " ")
}

// Each event once and in order, with the VM as it stands; another
// organization's subscriber sees nothing of it.
func TestLiveVMEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 2)
		srv := liveServer(t, st, nil)
		acme := subscribe(t, srv, "acme-reader", nil)
		only1 := subscribe(t, srv, "acme-reader", map[string]any{"ids": []string{"vm-1"}})
		globex := subscribe(t, srv, "globex-operator", nil)
		time.Sleep(100 * time.Millisecond) // the subscriptions start "now"

		act(t, srv, "acme-operator", "stopVm", "vm-0")
		act(t, srv, "acme-operator", "stopVm", "vm-1")
		act(t, srv, "acme-operator", "terminateVm", "vm-0")
		got := wantEvents(acme, "acme", "vm-0:stopped vm-1:stopped vm-0:terminated")
		// The VM as it stands when sent: here the last event's is settled.
		if got[0].VM == nil || got[0].VM.ID != "vm-0" || got[2].VM == nil || got[2].VM.Status != "TERMINATED" {
			t.Errorf("vm objects %+v %+v", got[0].VM, got[2].VM)
		}
		if got[0].Actor != "user "+servertest.KeyActor("acme-operator").ID || got[0].From != "RUNNING" || got[0].Transition != "user-stop" {
			t.Errorf("event %+v", got[0])
		}
		for i := 1; i < len(got); i++ {
			if a, b := atoi(t, got[i-1].ID), atoi(t, got[i].ID); b <= a {
				t.Errorf("ids out of order: %s after %s", got[i].ID, got[i-1].ID)
			}
		}
		acme.Quiet()
		wantEvents(only1, "ids filter", "vm-1:stopped")
		// Globex's first event is its own: it saw none of Acme's.
		act(t, srv, "globex-operator", "stopVm", "vm-g")
		wantEvents(globex, "globex", "vm-g:stopped")
		acme.Quiet()
	})
}

// A key in connection_init is required: none, or an unknown one, closes
// the socket with 4401.
func TestLiveRefusesWithoutKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 1)
		srv := liveServer(t, st, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql",
			&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		_ = wsjson.Write(ctx, conn, servertest.WSMessage{Type: "connection_init", Payload: json.RawMessage(`{"Authorization":"Bearer nope"}`)})
		for {
			var m servertest.WSMessage
			err := wsjson.Read(ctx, conn, &m)
			if err != nil {
				if c := websocket.CloseStatus(err); c != 4401 {
					t.Fatalf("close %v (%d), want 4401", err, c)
				}
				return
			}
		}
	})
}

// Resume with after across a forced disconnect, with writes in between:
// no gap, no duplicate, then live again.
func TestLiveResumeAfter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 3)
		srv := liveServer(t, st, nil)
		s := subscribe(t, srv, "acme-reader", nil)
		time.Sleep(100 * time.Millisecond)
		act(t, srv, "acme-operator", "stopVm", "vm-0")
		first := events(s, 1)
		s.Conn.CloseNow()

		act(t, srv, "acme-operator", "stopVm", "vm-1")
		act(t, srv, "globex-operator", "stopVm", "vm-g")
		act(t, srv, "acme-operator", "terminateVm", "vm-0")

		r := subscribe(t, srv, "acme-reader", map[string]any{"after": first[0].ID})
		wantEvents(r, "replay", "vm-1:stopped vm-0:terminated")
		act(t, srv, "acme-operator", "stopVm", "vm-2")
		wantEvents(r, "live after replay", "vm-2:stopped")
		r.Quiet()
	})
}

// Transitions committed while a subscriber is replaying: it reads every
// event of the log once, in id order, across the switch to live.
func TestLiveReplayDuringWrites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		const n = 12
		liveWorld(t, st, n)
		srv := liveServer(t, st, nil)
		for i := range n / 2 { // a log to replay
			act(t, srv, "acme-operator", "stopVm", fmt.Sprintf("vm-%d", i))
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // writes during the replay and after it
			defer wg.Done()
			for i := n / 2; i < n; i++ {
				act(t, srv, "acme-operator", "stopVm", fmt.Sprintf("vm-%d", i))
			}
			for i := range n {
				act(t, srv, "acme-operator", "terminateVm", fmt.Sprintf("vm-%d", i))
			}
		}()
		s := subscribe(t, srv, "acme-reader", map[string]any{"after": "0"})
		got := events(s, n+n)
		wg.Wait()
		s.Quiet()
		var want []string
		for _, e := range eventsOfOrg(t, st, "org-acme") {
			want = append(want, fmt.Sprint(e))
		}
		var have []string
		for _, e := range got {
			have = append(have, e.ID)
		}
		if strings.Join(have, " ") != strings.Join(want, " ") {
			t.Fatalf("delivered ids\n%v\nlog\n%v", have, want)
		}
	})
}

func eventsOfOrg(t *testing.T, st *store.Store, org string) []int64 {
	var out []int64
	storetest.Scan(t, st, &out, "SELECT seq FROM vm_events WHERE organization_id = ? ORDER BY seq", org)
	return out
}

func atoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}

// Two servers on one PostgreSQL, each with its own store and listener: a
// transition committed through one reaches a subscriber of the other.
func TestLiveAcrossReplicas(t *testing.T) {
	st := storetest.Replicas(t, store.Postgres, 2)
	a, b := st[0], st[1]
	liveWorld(t, a, 2)
	srvA, srvB := liveServer(t, a, nil), liveServer(t, b, nil)
	s := subscribe(t, srvA, "acme-reader", nil)
	time.Sleep(100 * time.Millisecond)
	act(t, srvB, "acme-operator", "stopVm", "vm-0")
	act(t, srvB, "acme-operator", "terminateVm", "vm-1")
	wantEvents(s, "replica A", "vm-0:stopped vm-1:terminated")
	s.Quiet()
}

// Shutdown ends every stream with 1001 "going away".
func TestLiveShutdownGoingAway(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 1)
		feed := livefeed.New(st, livefeed.Limits{})
		srv := liveServer(t, st, feed)
		s := subscribe(t, srv, "acme-reader", nil)
		time.Sleep(100 * time.Millisecond)
		feed.Shutdown()
		for {
			m, err := s.Read(5 * time.Second)
			if err != nil {
				if c := websocket.CloseStatus(err); c != livefeed.CloseGoingAway || !strings.Contains(err.Error(), "GOING_AWAY") ||
					!strings.Contains(err.Error(), "resume with after: ") {
					t.Fatalf("close %v (%d), want 1001 GOING_AWAY saying where to resume", err, c)
				}
				return
			}
			if m.Type == "next" {
				t.Fatalf("unexpected %s", m.Payload)
			}
		}
	})
}

// A subscriber that stops reading is dropped with SUBSCRIBER_LAGGING once
// its buffer stays full; a fast one on the same feed keeps receiving.
func TestLiveSlowConsumerDropped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		const n = 8
		liveWorld(t, st, n)
		feed := livefeed.New(st, livefeed.Limits{Buffer: 2, Grace: 50 * time.Millisecond})
		srv := liveServer(t, st, feed)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c, err := (&auth.Authenticator{Store: st}).Lookup(ctx, "acme-reader")
		if err != nil {
			t.Fatal(err)
		}
		var ended *apierr.Error
		endedCh := make(chan struct{})
		slow, err := feed.VMEvents(ctx, c, nil, nil, func(e *apierr.Error) { ended = e; close(endedCh) })
		if err != nil {
			t.Fatal(err)
		}
		fast := subscribe(t, srv, "acme-reader", nil)
		time.Sleep(100 * time.Millisecond)
		for i := range n {
			act(t, srv, "acme-operator", "stopVm", fmt.Sprintf("vm-%d", i))
		}
		if got := events(fast, n); len(got) != n {
			t.Fatalf("fast got %d", len(got))
		}
		select {
		case <-endedCh:
		case <-time.After(10 * time.Second):
			t.Fatal("the slow subscriber was never dropped")
		}
		if ended.Code != livefeed.CodeLagging || !strings.Contains(ended.Message, "resume with after: ") {
			t.Errorf("end %s %q", ended.Code, ended.Message)
		}
		var kept int
		for range slow {
			kept++
		}
		if kept != 2 {
			t.Errorf("the slow subscriber's buffer held %d events, want 2", kept)
		}
		if got := feed.DroppedLagging.Load(); got != 1 {
			t.Errorf("dropped %d", got)
		}
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		for _, want := range []string{"gpugraph_subscriptions_dropped_lagging_total 1", "gpugraph_subscriptions_open 1",
			fmt.Sprintf("gpugraph_subscription_events_delivered_total %d", n+2)} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

// The retention sweep deletes old events; an after older than the oldest
// kept is a clear error naming it, one just before it replays.
func TestLiveRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 2)
		srv := liveServer(t, st, nil)
		act(t, srv, "acme-operator", "stopVm", "vm-0")
		act(t, srv, "acme-operator", "stopVm", "vm-1")
		act(t, srv, "acme-operator", "terminateVm", "vm-0")
		log := eventsOfOrg(t, st, "org-acme")
		old := store.Now().Add(-8 * 24 * time.Hour)
		storetest.Exec(t, st, "UPDATE vm_events SET at = ? WHERE organization_id = 'org-acme' AND seq IN ?", old, log[:2])
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel() // one round, then it waits for the next until ctx ends
		livefeed.NewRetention(st, livefeed.DefaultEventRetention, time.Hour).Run(ctx)
		if kept := eventsOfOrg(t, st, "org-acme"); len(kept) != 1 || kept[0] != log[2] {
			t.Fatalf("kept %v of %v", kept, log)
		}

		s := subscribe(t, srv, "acme-reader", map[string]any{"after": fmt.Sprint(log[0])})
		m := s.Next()
		if want := fmt.Sprintf("the oldest event kept is %d", log[2]); !strings.Contains(string(m.Payload), "EVENTS_EXPIRED") ||
			!strings.Contains(string(m.Payload), want) {
			t.Fatalf("%s %s: want EVENTS_EXPIRED naming %d", m.Type, m.Payload, log[2])
		}
		r := subscribe(t, srv, "acme-reader", map[string]any{"after": fmt.Sprint(log[2] - 1)})
		wantEvents(r, "replay", "vm-0:terminated")
	})
}

// SSE: the key in the header, events as text/event-stream.
func TestLiveSSE(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 1)
		srv := liveServer(t, st, nil)
		body := `{"query":"subscription { vmEvents { vmId to } }"}`
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer acme-reader")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("%d %s", resp.StatusCode, ct)
		}
		time.Sleep(100 * time.Millisecond)
		act(t, srv, "acme-operator", "stopVm", "vm-0")
		buf := make([]byte, 4096)
		var got string
		for !strings.Contains(got, `"vmId":"vm-0","to":"STOPPED"`) {
			n, err := resp.Body.Read(buf)
			if err != nil {
				t.Fatalf("read after %q: %v", got, err)
			}
			got += string(buf[:n])
		}
		if !strings.Contains(got, "event: next") {
			t.Errorf("stream %q", got)
		}
	})
}

// A key holds at most PerKey open subscriptions; a closed one frees its place.
func TestLivePerKeyCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		liveWorld(t, st, 1)
		srv := liveServer(t, st, livefeed.New(st, livefeed.Limits{PerKey: 1}))
		first := subscribe(t, srv, "acme-reader", nil)
		time.Sleep(100 * time.Millisecond)
		second := subscribe(t, srv, "acme-reader", nil)
		if m := second.Next(); !strings.Contains(string(m.Payload), livefeed.CodeTooManySubscriptions) {
			t.Fatalf("second subscription: %s %s", m.Type, m.Payload)
		}
		other := subscribe(t, srv, "acme-operator", nil) // another key has its own
		first.Conn.CloseNow()
		time.Sleep(200 * time.Millisecond)
		third := subscribe(t, srv, "acme-reader", nil)
		time.Sleep(100 * time.Millisecond)
		act(t, srv, "acme-operator", "stopVm", "vm-0")
		wantEvents(third, "third", "vm-0:stopped")
		wantEvents(other, "other key", "vm-0:stopped")
	})
}
