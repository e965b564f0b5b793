package middleware

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/ratelimit"
)

// Route is what the gate needs to know of one route, declared where the
// route is registered: its policy (body bound, rate class, public or
// infrastructure), the API it belongs to (API, the face label of /metrics, and
// WriteError, which answers the gate's refusals in that API's shape), and
// whether it serves the subscriptions' streams (/graphql only).
type Route struct {
	route.Policy
	API        string
	WriteError func(http.ResponseWriter, *http.Request, *apierr.Error)
	Streams    bool
}

// Gate is what every API route passes through before its handler, in
// this order (docs/decisions/0011-limits.md):
//
//  0. the path and query held to text (notText): a 400 before anything
//     else, authentication too, since no route can read such a request;
//  1. the request timeout (a stream has none: its operations get it);
//  2. the body, read whole under its own deadline (bodies), so a slow
//     client holds no slot and no database connection;
//  3. a slot of the public budget, keyed by the credential the request
//     carries before any lookup (the bearer's hash; the client's address
//     when it sends none), so one credential holds at most its share;
//  4. authentication, then the credential's rate limit.
//
// GraphQL's dataloaders are no part of it: the /graphql route builds its
// own (loaders.Factory.Middleware), and no REST request or agent report
// builds any.
//
// The agents' reports skip 3 and the rate limit. A WebSocket counts
// against its address's and, once connection_init names it, its
// credential's connection caps.
type Gate struct {
	timeout, queueWait time.Duration
	public             *budget
	bodies             *bodies
	authn              *auth.Authenticator
	rl                 *RateLimits
	// isStream and isWebsocket tell the requests the transports take as a
	// stream (transport.IsStream, transport.IsWebsocket).
	isStream, isWebsocket func(*http.Request) bool
	// WebSocket connections open per client address and per credential.
	wsAddrs, wsCreds *budget
	refused          *prometheus.CounterVec
}

// The reasons gpugraph_requests_refused_total counts.
const (
	refusedBusy          = "busy"
	refusedShare         = "credential_share"
	refusedTimeout       = "timeout"
	refusedBodyTimeout   = "body_timeout"
	refusedWSAddress     = "websocket_address"
	refusedWSCredential  = "websocket_credential"
	refusedWSInitTimeout = "websocket_init_timeout"
)

// noCap is a count no connection cap reaches.
const noCap = 1 << 62

// GateConfig is what the gate holds requests to (httpapi.Config's
// fields of the same names, docs/decisions/0011-limits.md), and what it asks of the
// rest of the server.
type GateConfig struct {
	RequestTimeout, QueueWait                     time.Duration
	PublicConcurrency, CredentialConcurrency      int
	BodyTimeout                                   time.Duration
	BodyMemory                                    int64
	WebSocketsPerAddress, WebSocketsPerCredential int // negative: no cap
	Authenticator                                 *auth.Authenticator
	RateLimits                                    *RateLimits
	Registry                                      prometheus.Registerer
	IsStream, IsWebsocket                         func(*http.Request) bool
}

// NewGate builds the gate; its refusals are counted on cfg.Registry.
func NewGate(cfg GateConfig) *Gate {
	if cfg.WebSocketsPerAddress < 0 {
		cfg.WebSocketsPerAddress = noCap
	}
	g := &Gate{
		timeout:   cfg.RequestTimeout,
		queueWait: cfg.QueueWait,
		public:    newBudget(int64(cfg.PublicConcurrency), int64(cfg.CredentialConcurrency)),
		bodies: &bodies{timeout: cfg.BodyTimeout, wait: cfg.QueueWait,
			mem: newBudget(cfg.BodyMemory, cfg.BodyMemory/4)},
		authn:       cfg.Authenticator,
		rl:          cfg.RateLimits,
		isStream:    cfg.IsStream,
		isWebsocket: cfg.IsWebsocket,
		wsAddrs:     newBudget(noCap, int64(cfg.WebSocketsPerAddress)),
		wsCreds:     newBudget(noCap, int64(cfg.WebSocketsPerCredential)),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpugraph_requests_refused_total",
			Help: "Requests and WebSocket connections refused by the server's bounds, by reason (busy, credential_share, timeout, body_timeout, websocket_address, websocket_credential, websocket_init_timeout).",
		}, []string{"reason"}),
	}
	cfg.Registry.MustRegister(g.refused)
	for _, r := range []string{refusedBusy, refusedShare, refusedTimeout, refusedBodyTimeout, refusedWSAddress, refusedWSCredential, refusedWSInitTimeout} {
		g.refused.WithLabelValues(r) // every series from the start
	}
	return g
}

// Route wraps h, the handler of rt, in the gate.
func (g *Gate) Route(rt Route, h http.Handler) http.Handler {
	inner := g.authn.Middleware(g.rl.limit(rt, h))
	limit := rt.MaxBody
	if limit == 0 {
		limit = route.MaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := notText(r); e != nil {
			rt.WriteError(w, r, e)
			return
		}
		stream := rt.Streams && g.isStream(r)
		if stream {
			r = r.WithContext(withStream(r.Context()))
		} else {
			ctx, cancel := context.WithTimeout(r.Context(), g.timeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		key := budgetKey(r)
		release, e := g.bodies.read(w, r, key, limit)
		if e != nil {
			g.refuse(w, r, rt, e)
			return
		}
		defer release()
		switch {
		case stream:
			g.serveStream(w, r, rt, inner)
		case rt.Infrastructure:
			inner.ServeHTTP(w, r)
		default:
			if err := g.public.acquire(r.Context(), key, 1, g.queueWait); err != nil {
				g.refuse(w, r, rt, refusal(err, g.public.share))
				return
			}
			defer g.public.release(key, 1)
			inner.ServeHTTP(w, r)
		}
	})
}

// serveStream serves a subscription's stream. Its operations are charged
// one by one (extension.StreamBudget); the connection itself holds no slot
// and no write deadline (an SSE stream lives as long as its client; a
// WebSocket is hijacked, which clears the connection's deadlines). A
// WebSocket counts against its address's cap here, and against its
// credential's once connection_init names it (AdmitWebsocket).
func (g *Gate) serveStream(w http.ResponseWriter, r *http.Request, rt Route, inner http.Handler) {
	if !g.isWebsocket(r) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		inner.ServeHTTP(w, r)
		return
	}
	addr := remoteHost(r)
	if err := g.wsAddrs.acquire(r.Context(), addr, 1, 0); err != nil {
		g.refuse(w, r, rt, apierr.New(http.StatusTooManyRequests, tooManyConnectionsCode,
			"this address holds %d WebSocket connections already, the most one address may hold", g.wsAddrs.share))
		return
	}
	defer g.wsAddrs.release(addr, 1)
	inner.ServeHTTP(w, r)
}

// AdmitWebsocket counts a WebSocket against its credential's connection
// cap once connection_init has named c (transport.Conns.Admit); release
// gives its place back.
func (g *Gate) AdmitWebsocket(c *auth.Caller) (release func(), err error) {
	key := "cred:" + c.CredentialKey()
	if err := g.wsCreds.acquire(context.Background(), key, 1, 0); err != nil {
		g.refused.WithLabelValues(refusedWSCredential).Inc()
		return nil, apierr.New(http.StatusTooManyRequests, tooManyConnectionsCode, tooManyConnsMessage, g.wsCreds.share)
	}
	return func() { g.wsCreds.release(key, 1) }, nil
}

// WebsocketInitTimedOut counts a WebSocket closed because its
// connection_init did not come in time (transport.Conns.InitTimedOut).
func (g *Gate) WebsocketInitTimedOut() { g.refused.WithLabelValues(refusedWSInitTimeout).Inc() }

// tooManyConnectionsCode refuses a WebSocket over its address's or its
// credential's connection cap.
const (
	tooManyConnectionsCode = "TOO_MANY_CONNECTIONS"
	tooManyConnsMessage    = "this credential holds %d WebSocket connections already, the most one credential may hold"
)

// refuse answers e in the shape of rt's API and counts it.
func (g *Gate) refuse(w http.ResponseWriter, r *http.Request, rt Route, e *apierr.Error) {
	reason := refusedBusy
	switch {
	case e.Code == requestTimeoutCode:
		reason = refusedBodyTimeout
	case e.Code == tooManyConnectionsCode:
		reason = refusedWSAddress
	case e.Status == http.StatusTooManyRequests:
		reason = refusedShare
	case e.Status == http.StatusGatewayTimeout:
		reason = refusedTimeout
	}
	g.refused.WithLabelValues(reason).Inc()
	rt.WriteError(w, r, e)
}

// budgetKey names whom a request's slot is charged to before any lookup:
// the credential it carries (the hash auth looks it up by, the same as
// auth.Caller.CredentialKey), else its client's address. An unknown
// bearer is refused by the lookup right after, so a client inventing
// bearers holds each slot only for one indexed read.
func budgetKey(r *http.Request) string {
	if b := auth.BearerToken(r); b != "" {
		return "cred:" + auth.HashToken(b)
	}
	return "addr:" + remoteHost(r)
}

// remoteHost is r's client address without its port.
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

type streamKey struct{}

// withStream marks ctx as a stream's (a WebSocket's or an SSE request's).
func withStream(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamKey{}, true)
}

// onStream reports whether ctx is a stream's.
func onStream(ctx context.Context) bool { v, _ := ctx.Value(streamKey{}).(bool); return v }

// What the GraphQL extensions ask of the gate (extension.Gate): a
// stream's operations and a mutation's restarts are charged against the
// budgets of the HTTP requests.

// OnStream reports whether ctx is a stream's: the gate charged its
// connection, not its operations.
func (g *Gate) OnStream(ctx context.Context) bool { return onStream(ctx) }

// Limited reports whether class has a rate limit at all.
func (g *Gate) Limited(class ratelimit.Class) bool { return g.rl.lim.Enabled(class) }

// Charge spends n tokens of class from c's rate limit, or answers the 429
// and counts it as GraphQL's (the extensions' face).
func (g *Gate) Charge(c *auth.Caller, class ratelimit.Class, n int) *apierr.Error {
	if ok, after := g.rl.lim.Allow(limitKey(c), class, n); !ok {
		g.rl.refused.WithLabelValues(string(class), graphQLFace).Inc()
		return rateLimitedError(class, after)
	}
	return nil
}

// graphQLFace is the API (face label) of the refusals the extensions ask for.
const graphQLFace = "graphql"

// Slot takes a slot of the public budget for c, waiting as an HTTP
// request waits, or answers and counts the refusal.
func (g *Gate) Slot(ctx context.Context, c *auth.Caller) (release func(), e *apierr.Error) {
	key := "cred:" + c.CredentialKey()
	if err := g.public.acquire(ctx, key, 1, g.queueWait); err != nil {
		g.refused.WithLabelValues(refusedReason(err)).Inc()
		return nil, refusal(err, g.public.share)
	}
	return func() { g.public.release(key, 1) }, nil
}

// Timeout is an HTTP request's timeout.
func (g *Gate) Timeout() time.Duration { return g.timeout }

// refusedReason is the refusal counter's reason for a budget's error.
func refusedReason(err error) string {
	switch refusal(err, 0).Status {
	case http.StatusTooManyRequests:
		return refusedShare
	case http.StatusGatewayTimeout:
		return refusedTimeout
	}
	return refusedBusy
}
