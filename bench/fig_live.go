package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"gpugraph/bench/fleetgen"
	"gpugraph/bench/proc"
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/services"
	"gpugraph/internal/services/live"
	"gpugraph/models"
)

const (
	rowLiveRate    = "events/s delivered to 1,000 WebSocket subscribers of vmEvents"
	rowLiveLatency = "event commit → arrival at a subscriber, p50 / p99"
	rowLiveMemory  = "resident memory per open subscriber"
)

// liveNodes is the fleet of figure 8: one VM per node cycles between
// deploying and stopped (restart, stop), each change one event.
const liveNodes = 25

// liveFigure is figure 8: cfg.LiveSubscribers WebSocket subscribers of
// vmEvents on one replica, all of one organization (one key, its per-key
// cap raised), so every event goes to every subscriber; writers restart
// and stop VMs until cfg.LiveEvents events were committed. Latency runs
// from the event's time (stamped in its transaction, just before commit)
// to the moment a subscriber decoded it; memory is the process's resident
// set grown by opening the subscriptions, over their number (both ends
// run in this process, so it counts the client's side too: an upper bound).
func (r *runner) liveFigure(ctx context.Context) error {
	c := r.cfg
	n, events := c.LiveSubscribers, c.LiveEvents
	db, err := FreshDB(ctx, r.engine, c.PostgresURL)
	if err != nil {
		return err
	}
	defer db.Drop()
	f := fleetgen.Generate(fleetgen.Options{Nodes: liveNodes, Tenants: 1, Seed: c.Seed, VMsPerNode: 1, VMGPUs: 2})
	if _, err := dataset.Load(ctx, db.Store, f); err != nil {
		return err
	}
	feed := live.New(db.Store, live.Limits{PerKey: n, Buffer: 1024})
	defer feed.Shutdown()
	// One key, one address: its connection caps raised as the feed's, and
	// its share of the server as wide as the other figures' (its restarts
	// run while the subscribers' operations are in flight).
	svc := services.New(db.Store, services.Config{Live: feed})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Services: svc,
		Loaders: loaders.NewFactory(db.Store, svc.Metering, c.LoaderWait), Database: db.Store,
		WebSocketsPerAddress: -1, WebSocketsPerCredential: n, CredentialConcurrency: 64}))
	defer srv.Close()
	client := &Client{Base: srv.URL, Token: fleetgen.Token(0), HTTP: NewHTTPClient(4)}

	runtime.GC()
	before := residentBytes()
	subs := make([]*liveSub, n)
	for i := range subs {
		s, err := dialLive(ctx, srv.URL, fleetgen.Token(0))
		if err != nil {
			for _, s := range subs[:i] {
				s.close()
			}
			return fmt.Errorf("subscriber %d: %w", i, err)
		}
		subs[i] = s
	}
	defer func() {
		for _, s := range subs {
			s.close()
		}
	}()
	// Every stream is registered once the feed counts it open.
	for deadline := time.Now().Add(2 * time.Minute); feed.Open.Load() < int64(n); {
		if time.Now().After(deadline) {
			var m WSMessage
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			err := wsjson.Read(rctx, subs[n-1].conn, &m)
			cancel()
			return fmt.Errorf("%d of %d subscriptions opened; the last one read %s %s %v", feed.Open.Load(), n, m.Type, m.Payload, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	perSub := float64(residentBytes()-before) / float64(n)

	var received atomic.Int64
	for _, s := range subs {
		go s.read(&received)
	}
	start := time.Now()
	committed, err := cycleVMs(ctx, client, f.VMs, events)
	if err != nil {
		return err
	}
	want := int64(committed) * int64(n)
	deadline := time.Now().Add(2 * time.Minute)
	for received.Load() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	if got := received.Load(); got < want {
		return fmt.Errorf("%d of %d deliveries arrived (%d dropped lagging)", got, want, feed.DroppedLagging.Load())
	}
	var lat []time.Duration
	for _, s := range subs {
		s.mu.Lock()
		lat = append(lat, s.lat...)
		s.mu.Unlock()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	r.logf("%d events to %d subscribers: %d deliveries in %s", committed, n, want, elapsed.Round(time.Millisecond))
	r.rep.Set(8, rowLiveRate, r.engine, fmt.Sprintf("%.0f (%d events × %d subscribers in %s)",
		float64(want)/elapsed.Seconds(), committed, n, elapsed.Round(time.Millisecond)))
	r.rep.Set(8, rowLiveLatency, r.engine, ms(q(0.5))+" / "+ms(q(0.99)))
	r.rep.Set(8, rowLiveMemory, r.engine, fmt.Sprintf("%.1f KiB", perSub/1024))
	return nil
}

// cycleVMs restarts and stops the VMs in turn, one writer per VM, until
// events transitions were committed; it answers how many were.
func cycleVMs(ctx context.Context, client *Client, vms []dataset.VM, events int) (int, error) {
	var done atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for _, v := range vms {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			for i := 0; ; i++ {
				if done.Add(1) > int64(events) {
					done.Add(-1)
					return
				}
				op := "/restart"
				if i%2 == 1 {
					op = "/stop"
				}
				status, body, err := client.Do(ctx, http.MethodPost, "/v1/vms/"+id+op, nil)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("%s %s: %d %.200s", op, id, status, body)
				}
				if err != nil {
					done.Add(-1)
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}(v.ID)
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return 0, err
	}
	return int(done.Load()), nil
}

// liveSub is one graphql-transport-ws subscriber of vmEvents.
type liveSub struct {
	conn *websocket.Conn
	mu   sync.Mutex
	lat  []time.Duration
}

// WSMessage is a graphql-transport-ws message.
type WSMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// DialGraphQLWS opens a graphql-transport-ws connection to base's /graphql
// and initialises it with token (connection_init, connection_ack).
func DialGraphQLWS(ctx context.Context, base, token string) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(1 << 20)
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + token})
	if err := wsjson.Write(ctx, conn, WSMessage{Type: "connection_init", Payload: init}); err != nil {
		conn.CloseNow()
		return nil, err
	}
	var ack WSMessage
	if err := wsjson.Read(ctx, conn, &ack); err != nil || ack.Type != "connection_ack" {
		conn.CloseNow()
		return nil, fmt.Errorf("connection_init: %s %v", ack.Type, err)
	}
	return conn, nil
}

func dialLive(ctx context.Context, base, token string) (*liveSub, error) {
	conn, err := DialGraphQLWS(ctx, base, token)
	if err != nil {
		return nil, err
	}
	q, _ := json.Marshal(map[string]any{"query": "subscription { vmEvents { id at } }"})
	if err := wsjson.Write(ctx, conn, WSMessage{ID: "1", Type: "subscribe", Payload: q}); err != nil {
		conn.CloseNow()
		return nil, err
	}
	return &liveSub{conn: conn}, nil
}

// read decodes events until the connection closes, noting each one's
// latency from its time.
func (s *liveSub) read(received *atomic.Int64) {
	ctx := context.Background()
	for {
		var m WSMessage
		if err := wsjson.Read(ctx, s.conn, &m); err != nil {
			return
		}
		switch m.Type {
		case "ping":
			_ = wsjson.Write(ctx, s.conn, WSMessage{Type: "pong"})
		case "next":
			now := time.Now()
			var p struct {
				Data struct{ VMEvents struct{ At string } }
			}
			if json.Unmarshal(m.Payload, &p) != nil {
				continue
			}
			at, err := models.ParseTime(p.Data.VMEvents.At)
			if err != nil {
				continue
			}
			s.mu.Lock()
			s.lat = append(s.lat, now.Sub(at))
			s.mu.Unlock()
			received.Add(1)
		}
	}
}

func (s *liveSub) close() { s.conn.CloseNow() }

// residentBytes is this process's resident set (VmRSS), 0 where /proc
// does not say.
func residentBytes() int64 {
	m, _ := proc.Memory(os.Getpid())
	return m.RSS
}
