package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	gqltransport "github.com/99designs/gqlgen/graphql/handler/transport"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/live"
)

// WebSocket close codes of graphql-transport-ws: a refused
// connection_init, one that did not come in time, and a credential over
// its connection cap.
const (
	closeUnauthorized = 4401
	closeForbidden    = 4403
	closeInitTimeout  = 4408
	closeTooManyConns = 4429
	initTimeoutReason = "connection initialisation timeout"
)

// Websocket is gqlgen's graphql-transport-ws transport (which speaks the
// legacy graphql-ws too, at no cost) over coder/websocket, keeping each
// accepted connection where its streams find it (Conns). A browser's
// upgrade carries no header, so the credential comes in connection_init
// (wsCaller), looked up within lookupTimeout, a request's time; the
// connection then counts against its credential's cap (Conns.Admit).
func Websocket(authn *auth.Authenticator, lookupTimeout time.Duration) gqltransport.Websocket {
	return gqltransport.Websocket{
		Implementation:        closableWebsocket{},
		KeepAlivePingInterval: 15 * time.Second,
		PingPongInterval:      15 * time.Second,
		InitFunc: func(ctx context.Context, p gqltransport.InitPayload) (context.Context, *gqltransport.InitPayload, error) {
			h, _ := ctx.Value(connKey{}).(*connHolder)
			if h != nil && !h.initialized() {
				// The init deadline passed while the message was read: the
				// connection is being closed with 4408 already.
				return gqltransport.WithWebsocketCloseCode(ctx, closeInitTimeout), nil, errors.New(initTimeoutReason)
			}
			// The key's lookup is a request's work: it gets a request's time.
			lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
			c, err := wsCaller(lctx, authn, p)
			cancel()
			code := closeUnauthorized
			if e, ok := apierr.As(err); ok && e.Status == http.StatusForbidden {
				code = closeForbidden
			}
			if err == nil && h != nil {
				if err = h.admit(c); err != nil {
					code = closeTooManyConns
				}
			}
			if err != nil {
				ctx = gqltransport.WithWebsocketCloseCode(ctx, code)
				return gqltransport.AppendCloseReason(ctx, err.Error()), nil, err
			}
			ctx = auth.WithCaller(ctx, c)
			if h != nil {
				ctx = live.WithCloser(ctx, h.close)
			}
			return ctx, nil, nil
		},
	}
}

// wsCaller authenticates a WebSocket: the upgrade of a browser carries no
// header, so the key comes in connection_init's payload
// {"Authorization": "Bearer …"}; a header key on the upgrade works too.
func wsCaller(ctx context.Context, authn *auth.Authenticator, p gqltransport.InitPayload) (*auth.Caller, error) {
	if token := bearer(p.Authorization()); token != "" {
		return authn.Lookup(ctx, token)
	}
	return auth.Authenticate(ctx)
}

func bearer(h string) string {
	if len(h) > 7 && (h[:7] == "Bearer " || h[:7] == "bearer ") {
		return h[7:]
	}
	return ""
}

// IsWebsocket reports whether r asks for a WebSocket (which authenticates
// in connection_init, not in the upgrade's headers): what gqlgen's
// WebSocket transport takes.
func IsWebsocket(r *http.Request) bool { return gqltransport.Websocket{}.Supports(r) }

// IsStream reports whether r opens a subscription's stream: exactly the
// requests gqlgen's WebSocket and SSE transports take, so a plain GET or
// POST cannot pass for one (and skip the request timeout and the budget)
// by its headers alone.
func IsStream(r *http.Request) bool {
	return IsWebsocket(r) || gqltransport.SSE{}.Supports(r)
}

// connKey holds, in an upgrade request's context, the connection the
// transport accepted, so a stream can close it with its own code.
type connKey struct{}

// Conns is what the server's gate holds of each WebSocket: how long its
// connection_init may take (closed with 4408 after, InitTimedOut called),
// and its place in its credential's connection cap, taken once
// connection_init names the credential (Admit; a refusal closes it with
// 4429) and given back when the connection's handler returns.
type Conns struct {
	InitTimeout  time.Duration
	Admit        func(*auth.Caller) (release func(), err error)
	InitTimedOut func()
}

// connHolder is one WebSocket's state besides gqlgen's: the accepted
// connection, the deadline of its connection_init, and its place in its
// credential's connection cap (taken at init, given back by done).
type connHolder struct {
	Conns

	mu        sync.Mutex
	conn      gqltransport.WebsocketConn
	initTimer *time.Timer
	timedOut  bool
	release   func()
}

// accepted keeps conn and starts its connection_init deadline: a client
// that upgrades and says nothing is closed with 4408, as
// graphql-transport-ws says.
func (h *connHolder) accepted(conn gqltransport.WebsocketConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conn = conn
	if h.InitTimeout > 0 {
		h.initTimer = time.AfterFunc(h.InitTimeout, func() {
			h.mu.Lock()
			h.timedOut = true
			h.mu.Unlock()
			if h.InitTimedOut != nil {
				h.InitTimedOut()
			}
			h.close(closeInitTimeout, initTimeoutReason, nil)
		})
	}
}

// initialized stops the init deadline; false when it had passed already.
func (h *connHolder) initialized() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.initTimer != nil {
		h.initTimer.Stop()
	}
	return !h.timedOut
}

// admit counts the connection against c's credential's cap.
func (h *connHolder) admit(c *auth.Caller) error {
	if h.Admit == nil {
		return nil
	}
	release, err := h.Admit(c)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.release = release
	h.mu.Unlock()
	return nil
}

// done ends the connection's accounting once its handler has returned.
func (h *connHolder) done() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.initTimer != nil {
		h.initTimer.Stop()
	}
	if h.release != nil {
		h.release()
		h.release = nil
	}
}

func (h *connHolder) close(code int, reason string, _ *apierr.Error) {
	h.mu.Lock()
	conn := h.conn
	h.mu.Unlock()
	if conn != nil {
		_ = conn.WriteClose(code, reason)
		_ = conn.Close()
	}
}

// Streams prepares a stream's request so that the stream can end it with
// its own reason: an upgrade gets its connection's holder (held to c), an
// SSE request a response the stream can end (sseEnd).
func (c Conns) Streams(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case IsWebsocket(r):
			h := &connHolder{Conns: c}
			defer h.done()
			r = r.WithContext(context.WithValue(r.Context(), connKey{}, h))
		case IsStream(r):
			sw := &sseEnd{ResponseWriter: w}
			// The stream may end after the handler has returned (its
			// client gone): the response is then no longer ours to write.
			defer sw.finish()
			w = sw
			r = r.WithContext(live.WithCloser(r.Context(), sw.end))
		}
		next.ServeHTTP(w, r)
	})
}

// sseEnd is an SSE response a stream can end with a last message: a
// "next" event whose payload is a GraphQL result carrying the error (as
// graphql-sse delivers an operation's errors), then "complete". What the
// transport writes after it is dropped. Writes are serialized, since the
// stream ends it from its own goroutine.
type sseEnd struct {
	http.ResponseWriter
	mu    sync.Mutex
	ended bool
}

func (s *sseEnd) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return len(b), nil
	}
	return s.ResponseWriter.Write(b)
}

func (s *sseEnd) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		_ = http.NewResponseController(s.ResponseWriter).Flush()
	}
}

func (s *sseEnd) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *sseEnd) finish() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
}

func (s *sseEnd) end(code int, _ string, e *apierr.Error) {
	body, _ := json.Marshal(map[string]any{"errors": []any{map[string]any{
		"message":    e.Message,
		"extensions": map[string]any{"code": e.Code, "status": e.Status, "closeCode": code},
	}}})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	_, _ = fmt.Fprintf(s.ResponseWriter, "event: next\ndata: %s\n\nevent: complete\n\n", body)
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// closableWebsocket is gqlgen's coder/websocket implementation, keeping the
// accepted connection where the request's streams find it.
type closableWebsocket struct{}

func (closableWebsocket) Accept(w http.ResponseWriter, r *http.Request, o gqltransport.WebsocketAcceptOptions) (gqltransport.WebsocketConn, error) {
	conn, err := gqltransport.CoderWebsocketImplementation{}.Accept(w, r, o)
	if err != nil {
		return nil, err
	}
	h, ok := r.Context().Value(connKey{}).(*connHolder)
	if !ok {
		return nil, errors.New("websocket upgrade without its connection holder")
	}
	h.accepted(conn)
	return conn, nil
}
