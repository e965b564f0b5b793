package abuse

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"gpugraph/bench"
)

// slowBodies holds many POSTs whose bodies arrive one byte every 2 s
// (finding 5) while the victim queries; a slot a slow body holds is one
// the victim waits for.
func slowBodies(ctx context.Context, e *env, r *Result) error {
	// Each worker holds one slow body until the server answers it (or cuts
	// it), then starts another, for the attack window.
	hold := min(10*time.Second, e.cfg.Box-time.Second)
	err := e.flood(ctx, r, noisyRequests(e.engine), func(ctx context.Context, i int) {
		r.Statuses.Add(e.slowBody(ctx, i, hold))
	})
	r.OK = !serverErrors(&r.Statuses)
	return err
}

// serverErrors says an answer was a 5xx other than the documented 503
// (busy) and 504 (out of time).
func serverErrors(s *Statuses) bool {
	return !s.All(func(k string) bool {
		return !strings.HasPrefix(k, "5") || strings.HasPrefix(k, "503") || strings.HasPrefix(k, "504")
	})
}

// slowBody sends one request's headers announcing a 1,000-byte body, then
// one byte every 2 s for hold, and answers the status the server gave
// ("open": none by then; "reset": it closed the connection unanswered).
func (e *env) slowBody(ctx context.Context, i int, hold time.Duration) string {
	addr := strings.TrimPrefix(e.base(i), "http://")
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "refused"
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", addr, ReaderKey); err != nil {
		return "reset"
	}
	got := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if f := strings.Fields(line); err == nil && len(f) >= 2 {
			got <- f[1]
			return
		}
		got <- "reset"
	}()
	body := `{"query": "{ __typename }", "variables": {"pad": "` + strings.Repeat("x", 1000) + `"}}`
	end := time.NewTimer(hold)
	defer end.Stop()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for k := 0; ; k++ {
		select {
		case s := <-got:
			return s
		case <-end.C:
			return "open"
		case <-ctx.Done():
			return "open"
		case <-tick.C:
			_, _ = conn.Write([]byte{body[k%len(body)]})
		}
	}
}

// websocketQueries runs 1,000 queries over one WebSocket as fast as the
// server takes them (finding 7) while the victim queries; no more may run
// than the key's rate limit lets HTTP run.
func websocketQueries(ctx context.Context, e *env, r *Result) error {
	const ops = 1000
	q, _ := json.Marshal(map[string]string{"query": `{ vms(limit: 50) { total vms { id name status node { name gpus { index health } } } } }`})
	var ran int
	var took time.Duration
	var dialErr error
	err := e.noisy(ctx, r, e.victimQuery(), ops, ops, func(ctx context.Context) {
		conn, err := bench.DialGraphQLWS(ctx, e.base(0), ReaderKey)
		if err != nil {
			dialErr = err
			return
		}
		defer conn.CloseNow()
		conn.SetReadLimit(16 << 20)
		start := time.Now()
		go func() {
			for i := 1; i <= ops; i++ {
				if wsjson.Write(ctx, conn, bench.WSMessage{ID: strconv.Itoa(i), Type: "subscribe", Payload: q}) != nil {
					return
				}
			}
		}()
		answered := map[string]bool{}
		for len(answered) < ops {
			var m bench.WSMessage
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				r.Statuses.AddN(closed(err, ctx), ops-len(answered))
				break
			}
			switch m.Type {
			case "ping":
				_ = wsjson.Write(ctx, conn, bench.WSMessage{Type: "pong"})
			case "next":
				if answered[m.ID] {
					continue
				}
				answered[m.ID] = true
				if code, _ := gqlCode(m.Payload); code != "" {
					r.Statuses.Add("error " + code)
					continue
				}
				ran++
				r.Statuses.Add("ran")
			case "error":
				if !answered[m.ID] {
					answered[m.ID] = true
					r.Statuses.Add("error " + wsErrorCode(m.Payload))
				}
			case "complete":
				if !answered[m.ID] {
					answered[m.ID] = true
					r.Statuses.Add("complete with no answer")
				}
			}
		}
		took = time.Since(start)
	})
	if dialErr != nil {
		return fmt.Errorf("the WebSocket: %w", dialErr)
	}
	// One WebSocket is served by one replica, which holds 1/N of the
	// key's limit (burst 100 and 50/s for the whole deployment).
	n := len(e.reps)
	allowed := 100/n + int(50/float64(n)*took.Seconds()) + 5
	r.Outcome = fmt.Sprintf("%d ran in %s, the rate limit allows %d", ran, took.Round(time.Millisecond), allowed)
	r.OK = ran <= allowed
	return err
}

// closed says how a WebSocket read ended: the server's close code, or
// "open" when the phase ran out of time first.
func closed(err error, ctx context.Context) string {
	if ctx.Err() != nil {
		return "open"
	}
	if c := websocket.CloseStatus(err); c != -1 {
		return fmt.Sprintf("closed %d", c)
	}
	return "reset"
}

// wsErrorCode is the code of a graphql-transport-ws error message's first
// error.
func wsErrorCode(payload json.RawMessage) string {
	var errs []struct {
		Extensions map[string]any `json:"extensions"`
	}
	if json.Unmarshal(payload, &errs) != nil || len(errs) == 0 {
		return "?"
	}
	c, _ := errs[0].Extensions["code"].(string)
	return c
}

// websocketNoInit opens 100 upgrades from one address that never send
// connection_init (finding 7) and waits for the servers to close them.
func websocketNoInit(ctx context.Context, e *env, r *Result) error {
	const conns = 100
	within := 10 * time.Second
	wait := min(within+2*time.Second, e.cfg.Box-time.Second)
	err := e.set(ctx, r, conns, conns, func(ctx context.Context) {
		parallel(conns, func(i int) { r.Statuses.Add(e.noInit(ctx, i, within, wait)) })
	})
	r.OK = r.Statuses.All(func(k string) bool {
		return strings.HasPrefix(k, "refused") || (strings.HasPrefix(k, "closed") && !strings.HasSuffix(k, "late"))
	})
	return err
}

// noInit upgrades and sends nothing, reading until the server closes the
// connection or wait passes.
func (e *env) noInit(ctx context.Context, i int, within, wait time.Duration) string {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.base(i), "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		if resp != nil {
			return fmt.Sprintf("refused %d", resp.StatusCode)
		}
		return "refused"
	}
	defer conn.CloseNow()
	for {
		if _, _, err := conn.Read(ctx); err != nil {
			s := closed(err, ctx)
			if s != "open" && time.Since(start) > within {
				s += " late"
			}
			return s
		}
	}
}
