package httpapi

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/loaders"
	"gpugraph/rest"
)

// route is what the gate needs to know of one route: its REST policy
// (body bound, rate class, public or infrastructure), and whether it
// serves the subscriptions' streams (/graphql only).
type route struct {
	rest.Policy
	streams bool
}

// gate is what every API route passes through before its handler, in
// this order (README "Limits"):
//
//  1. the request timeout (a stream has none: its operations get it);
//  2. the body, read whole under its own deadline (bodies), so a slow
//     client holds no slot and no database connection;
//  3. a slot of the public budget, keyed by the credential the request
//     carries before any lookup (the bearer's hash; the client's address
//     when it sends none), so one credential holds at most its share;
//  4. authentication, then the credential's rate limit;
//  5. fresh dataloaders for the caller.
//
// The agents' reports skip 3 and the rate limit. A WebSocket counts
// against its address's and, once connection_init names it, its
// credential's connection caps.
type gate struct {
	timeout, queueWait time.Duration
	public             *budget
	bodies             *bodies
	authn              *auth.Authenticator
	rl                 *rateLimits
	newLoaders         loaders.Factory
	// WebSocket connections open per client address and per credential.
	wsAddrs, wsCreds *budget
	wsInitTimeout    time.Duration
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

func newGate(cfg Config, authn *auth.Authenticator, newLoaders loaders.Factory, rl *rateLimits, reg *prometheus.Registry) *gate {
	if cfg.WebSocketsPerAddress < 0 {
		cfg.WebSocketsPerAddress = noCap
	}
	g := &gate{
		timeout:   cfg.RequestTimeout,
		queueWait: cfg.QueueWait,
		public:    newBudget(int64(cfg.PublicConcurrency), int64(cfg.CredentialConcurrency)),
		bodies: &bodies{timeout: cfg.BodyTimeout, wait: cfg.QueueWait,
			mem: newBudget(cfg.BodyMemory, cfg.BodyMemory/4)},
		authn:         authn,
		rl:            rl,
		newLoaders:    newLoaders,
		wsAddrs:       newBudget(noCap, int64(cfg.WebSocketsPerAddress)),
		wsCreds:       newBudget(noCap, int64(cfg.WebSocketsPerCredential)),
		wsInitTimeout: cfg.WebSocketInitTimeout,
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpugraph_requests_refused_total",
			Help: "Requests and WebSocket connections refused by the server's bounds, by reason (busy, credential_share, timeout, body_timeout, websocket_address, websocket_credential, websocket_init_timeout).",
		}, []string{"reason"}),
	}
	reg.MustRegister(g.refused)
	for _, r := range []string{refusedBusy, refusedShare, refusedTimeout, refusedBodyTimeout, refusedWSAddress, refusedWSCredential, refusedWSInitTimeout} {
		g.refused.WithLabelValues(r) // every series from the start
	}
	return g
}

// route wraps h, the handler of rt, in the gate.
func (g *gate) route(rt route, h http.Handler) http.Handler {
	inner := g.authn.Middleware(g.rl.limit(rt.Policy, g.newLoaders.Middleware(h)))
	limit := rt.MaxBody
	if limit == 0 {
		limit = rest.MaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stream := rt.streams && isStream(r)
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
			g.refuse(w, r, e)
			return
		}
		defer release()
		switch {
		case stream:
			g.serveStream(w, r, inner)
		case rt.Infrastructure:
			inner.ServeHTTP(w, r)
		default:
			if err := g.public.acquire(r.Context(), key, 1, g.queueWait); err != nil {
				g.refuse(w, r, refusal(err, g.public.share))
				return
			}
			defer g.public.release(key, 1)
			inner.ServeHTTP(w, r)
		}
	})
}

// serveStream serves a subscription's stream. Its operations are charged
// one by one (streamBudget); the connection itself holds no slot and no
// write deadline (an SSE stream lives as long as its client; a WebSocket
// is hijacked, which clears the connection's deadlines).
func (g *gate) serveStream(w http.ResponseWriter, r *http.Request, inner http.Handler) {
	if !isWebsocket(r) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		inner.ServeHTTP(w, r)
		return
	}
	addr := remoteHost(r)
	if err := g.wsAddrs.acquire(r.Context(), addr, 1, 0); err != nil {
		g.refuse(w, r, apierr.New(http.StatusTooManyRequests, TooManyConnectionsCode,
			"this address holds %d WebSocket connections already, the most one address may hold", g.wsAddrs.share))
		return
	}
	defer g.wsAddrs.release(addr, 1)
	h := &connHolder{initTimeout: g.wsInitTimeout, creds: g.wsCreds, refused: g.refused}
	defer h.done()
	inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connKey{}, h)))
}

// TooManyConnectionsCode refuses a WebSocket over its address's or its
// credential's connection cap.
const TooManyConnectionsCode = "TOO_MANY_CONNECTIONS"

// refuse answers e in the shape of r's API and counts it.
func (g *gate) refuse(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	reason := refusedBusy
	switch {
	case e.Code == RequestTimeoutCode:
		reason = refusedBodyTimeout
	case e.Code == TooManyConnectionsCode:
		reason = refusedWSAddress
	case e.Status == http.StatusTooManyRequests:
		reason = refusedShare
	case e.Status == http.StatusGatewayTimeout:
		reason = refusedTimeout
	}
	g.refused.WithLabelValues(reason).Inc()
	writeAPIError(w, r, e)
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
