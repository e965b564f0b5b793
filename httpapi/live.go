package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/live"
	"gpugraph/loaders"
)

// WebSocket close codes of graphql-transport-ws: a refused
// connection_init, one that did not come in time, and a credential over
// its connection cap.
const (
	closeUnauthorized   = 4401
	closeForbidden      = 4403
	closeInitTimeout    = 4408
	closeTooManyConns   = 4429
	initTimeoutReason   = "connection initialisation timeout"
	tooManyConnsMessage = "this credential holds %d WebSocket connections already, the most one credential may hold"
)

// addLive adds the subscription transports, graphql-transport-ws (and the
// legacy graphql-ws, which gqlgen speaks at no cost) and SSE, and fresh
// loaders per event. The transports must come before POST, which would take
// an SSE request for a plain one.
func addLive(srv *handler.Server, cfg Config, g *gate) {
	authn := g.authn
	srv.AroundResponses(freshLoadersPerEvent(g.newLoaders))
	srv.AddTransport(sseJSON{})
	srv.AddTransport(transport.Websocket{
		Implementation:        closableWebsocket{},
		KeepAlivePingInterval: 15 * time.Second,
		PingPongInterval:      15 * time.Second,
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			h, _ := ctx.Value(connKey{}).(*connHolder)
			if h != nil && !h.initialized() {
				// The init deadline passed while the message was read: the
				// connection is being closed with 4408 already.
				return transport.WithWebsocketCloseCode(ctx, closeInitTimeout), nil, errors.New(initTimeoutReason)
			}
			// The key's lookup is a request's work: it gets a request's time.
			lctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
			c, err := wsCaller(lctx, authn, p)
			cancel()
			if err == nil && h != nil {
				err = h.admit(c)
			}
			if err != nil {
				code := closeUnauthorized
				if e, ok := apierr.As(err); ok && e.Status == http.StatusForbidden {
					code = closeForbidden
				} else if ok && e.Code == TooManyConnectionsCode {
					code = closeTooManyConns
				}
				ctx = transport.WithWebsocketCloseCode(ctx, code)
				return transport.AppendCloseReason(ctx, err.Error()), nil, err
			}
			ctx = auth.WithCaller(ctx, c)
			if h != nil {
				ctx = live.WithCloser(ctx, h.close)
			}
			return ctx, nil, nil
		},
	})
}

// wsCaller authenticates a WebSocket: the upgrade of a browser carries no
// header, so the key comes in connection_init's payload
// {"Authorization": "Bearer …"}; a header key on the upgrade works too.
func wsCaller(ctx context.Context, authn *auth.Authenticator, p transport.InitPayload) (*auth.Caller, error) {
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

// isWebsocket reports whether r asks for a WebSocket (which authenticates
// in connection_init, not in the upgrade's headers): what gqlgen's
// WebSocket transport takes.
func isWebsocket(r *http.Request) bool { return transport.Websocket{}.Supports(r) }

// isStream reports whether r opens a subscription's stream: exactly the
// requests gqlgen's WebSocket and SSE transports take, so a plain GET or
// POST cannot pass for one (and skip the request timeout and the budget)
// by its headers alone.
func isStream(r *http.Request) bool {
	return isWebsocket(r) || transport.SSE{}.Supports(r)
}

// freshLoadersPerEvent gives every event of a subscription its own
// dataloaders: the connection's would cache the VM as it was at the first
// event. They are scoped to the caller, as every request's are.
func freshLoadersPerEvent(newLoaders loaders.Factory) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if !graphql.HasOperationContext(ctx) {
			return next(ctx) // an error answered before any operation
		}
		if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
			ctx = loaders.With(ctx, newLoaders(auth.FromContext(ctx)))
		}
		return next(ctx)
	}
}

// connKey holds, in an upgrade request's context, the connection the
// transport accepted, so a stream can close it with its own code.
type connKey struct{}

// connHolder is one WebSocket's state besides gqlgen's: the accepted
// connection, the deadline of its connection_init, and its place in its
// credential's connection cap (taken at init, given back by done).
type connHolder struct {
	initTimeout time.Duration
	creds       *budget
	refused     *prometheus.CounterVec

	mu        sync.Mutex
	conn      transport.WebsocketConn
	initTimer *time.Timer
	timedOut  bool
	credKey   string
}

// accepted keeps conn and starts its connection_init deadline: a client
// that upgrades and says nothing is closed with 4408, as
// graphql-transport-ws says.
func (h *connHolder) accepted(conn transport.WebsocketConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conn = conn
	if h.initTimeout > 0 {
		h.initTimer = time.AfterFunc(h.initTimeout, func() {
			h.mu.Lock()
			h.timedOut = true
			h.mu.Unlock()
			h.refused.WithLabelValues(refusedWSInitTimeout).Inc()
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
	key := "cred:" + c.CredentialKey()
	if err := h.creds.acquire(context.Background(), key, 1, 0); err != nil {
		h.refused.WithLabelValues(refusedWSCredential).Inc()
		return apierr.New(http.StatusTooManyRequests, TooManyConnectionsCode, tooManyConnsMessage, h.creds.share)
	}
	h.mu.Lock()
	h.credKey = key
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
	if h.credKey != "" {
		h.creds.release(h.credKey, 1)
		h.credKey = ""
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

// withStreamEnd prepares an SSE request so that its stream can end it with
// its own reason (sseEnd); an upgrade has its connHolder from the gate.
func withStreamEnd(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case isWebsocket(r):
		case isStream(r):
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

func (closableWebsocket) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := transport.CoderWebsocketImplementation{}.Accept(w, r, o)
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

// registerLiveMetrics exposes the feed's counters on /metrics.
func registerLiveMetrics(reg *prometheus.Registry, f *live.Feed) {
	reg.MustRegister(
		f.NotifyLag,
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_subscriptions_closed_revoked_total",
			Help: "Streams closed because their API key was revoked or their organization suspended or deleted (close code 4403)."},
			func() float64 { return float64(f.ClosedRevoked.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gpugraph_subscriptions_open",
			Help: "Open GraphQL subscriptions (vmEvents, nodeEvents) of this process."},
			func() float64 { return float64(f.Open.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_subscription_events_delivered_total",
			Help: "Events handed to subscribers."},
			func() float64 { return float64(f.Delivered.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_subscriptions_dropped_lagging_total",
			Help: "Subscribers closed because they fell a whole buffer behind (close code 4409)."},
			func() float64 { return float64(f.DroppedLagging.Load()) }),
	)
}
