// Package rest serves the documented REST paths of the two source APIs
// (OpenRelay's restart, Run:ai's pods) for clients that already speak them.
// Handlers only translate: they parse parameters, call the same services
// the GraphQL resolvers call (one services.Services, handed to both faces),
// and write the answer in the seed's shape. A route names the gate of the
// service its handler calls (pods.Service.MayRead, …), asked before any
// parameter is read; it names no permission of its own.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/edge"
	"gpugraph/internal/lib/ratelimit"
	"gpugraph/internal/lib/reqid"
	"gpugraph/internal/services"
)

// API holds what the handlers delegate to.
type API struct {
	// Services are the services the handlers call, built once per
	// process by the command and shared with the GraphQL face.
	Services *services.Services
}

// Mux is where Register mounts the paths (an *http.ServeMux, or one that
// also records its patterns).
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Register mounts every REST path on mux; wrap adds what every route
// needs around it (authentication, the budget, the rate limit) as the
// route's Policy says.
func Register(mux Mux, api *API, wrap func(Policy, http.Handler) http.Handler) {
	for _, r := range api.routes() {
		mux.Handle(r.pattern, wrap(PolicyOf(r.handler), r.handler))
	}
}

// Policy is what a route may cost, declared with the route (Costs) and
// read by the server's wiring: how large its body may be, which rate class
// it spends, whether it is public traffic. The zero Policy is a public API
// route whose body is at most MaxBody bytes and that spends one api token.
type Policy struct {
	// MaxBody bounds the request body in bytes (MaxBody when 0).
	MaxBody int64
	// Rate is the class the route spends besides api ("" for none).
	Rate ratelimit.Class
	// Infrastructure marks the node agents' reports: outside the public
	// budget and the per-credential rate limits, so abuse of the public API
	// cannot starve heartbeats.
	Infrastructure bool
	// Face is the API the route belongs to: the server's gate answers its
	// refusals (429, 503, 408) in that API's error shape, and labels them
	// with it in /metrics. A route served through runai or openRelay has
	// its face already.
	Face Face
}

// Face is one of the REST APIs gpugraph serves.
type Face string

// The REST faces.
const (
	Runai     Face = "runai"
	OpenRelay Face = "openrelay"
)

// WriteError answers e in f's error shape.
func (f Face) WriteError(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	if f == Runai {
		WriteRunaiError(w, r, e)
		return
	}
	WriteOpenRelayError(w, r, e)
}

// MaxBody bounds the body of a route that declares no other bound.
const MaxBody = 1 << 20

// Costs declares h's Policy where its route is listed.
func Costs(p Policy, h http.Handler) http.Handler { return costed{Handler: h, policy: p} }

// PolicyOf answers the Policy h was declared with (the zero one if none),
// its Face the one runai or openRelay gave h when Costs named none.
func PolicyOf(h http.Handler) Policy {
	var p Policy
	if c, ok := h.(costed); ok {
		p, h = c.policy, c.Handler
	}
	if f, ok := h.(faced); ok && p.Face == "" {
		p.Face = f.face
	}
	return p
}

// faced is a handler that answers its errors in face's shape.
type faced struct {
	http.Handler
	face Face
}

type costed struct {
	http.Handler
	policy Policy
}

type route struct {
	pattern string
	handler http.Handler
}

func (api *API) routes() []route {
	var rs []route
	rs = append(rs, api.openRelayRoutes()...)
	rs = append(rs, api.runaiRoutes()...)
	rs = append(rs, api.agentRoutes()...)
	rs = append(rs, api.metricsRoutes()...)
	rs = append(rs, api.vmRoutes()...)
	rs = append(rs, api.adminRoutes()...)
	rs = append(rs, api.credentialRoutes()...)
	rs = append(rs, api.instanceTypeRoutes()...)
	rs = append(rs, api.quotaRoutes()...)
	rs = append(rs, api.clusterRoutes()...)
	return rs
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // messages may say <API key>; this is not HTML
	if err := enc.Encode(v); err != nil {
		slog.Error("write response", "err", err)
	}
}

// errorOf turns any error into the answer a client may see; internal causes
// are logged here and never written out.
func errorOf(r *http.Request, err error) *apierr.Error {
	e, ok := apierr.As(err)
	if !ok && (r.Context().Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		// Out of time (or the client left): one line, and the API's shape
		// with a 504, not "internal error".
		slog.WarnContext(r.Context(), "request ran out of time", "path", r.URL.Path, "err", err)
		return TimeoutError()
	}
	if !ok {
		slog.ErrorContext(r.Context(), "internal error", "err", err, "path", r.URL.Path)
	}
	return e
}

// pathParams are the wildcards of every REST pattern.
var pathParams = []string{"id", "workloadId", "podId", "revisionId"}

// listParams are the query parameters that take several values, repeated
// (filterBy=a&filterBy=b) as the Run:ai and OpenRelay documents define
// them; every other one takes one.
var listParams = map[string]bool{"filterBy": true, "metricType": true, "status": true}

// CheckParams holds every path and query parameter to the edge's bounds
// (valid UTF-8, no NUL, bounded length and count) before a handler reads
// them; the handlers' own parsers check their syntax. A parameter that
// takes one value given twice (limit=5&limit=500) is refused rather than
// read as its first, naming it: a proxy or a cache may read the other.
func CheckParams(r *http.Request) error {
	for _, name := range pathParams {
		if err := edge.Text(name, r.PathValue(name), edge.MaxID); err != nil {
			return err
		}
	}
	q := r.URL.Query()
	if len(q) > edge.MaxParamValues {
		return apierr.BadRequest("the query string has %d parameters, more than %d", len(q), edge.MaxParamValues)
	}
	for _, name := range slices.Sorted(maps.Keys(q)) { // the first bad one, the same at every run
		values := q[name]
		if err := edge.Text("a parameter name", name, 64); err != nil {
			return err
		}
		if len(values) > edge.MaxParamValues {
			return apierr.BadRequest("%s is repeated %d times, more than %d", name, len(values), edge.MaxParamValues)
		}
		if len(values) > 1 && !listParams[name] {
			return apierr.BadRequest("%s is given %d times; it takes one value", name, len(values))
		}
		max := edge.MaxParam
		if name == "search" {
			max = edge.MaxSearch
		}
		for _, v := range values {
			if err := edge.Text(name, v, max); err != nil {
				return err
			}
		}
	}
	return nil
}

// TimeoutError is what a request that ran out of time answers, in each
// API's error shape.
func TimeoutError() *apierr.Error { return apierr.Timeout() }

// setErrorHeaders sets what an error's status asks for besides its body:
// Retry-After, and on a 401 the challenge of RFC 6750.
func setErrorHeaders(w http.ResponseWriter, r *http.Request, e *apierr.Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Status == http.StatusUnauthorized {
		SetChallenge(w, r)
	}
}

// SetChallenge sets WWW-Authenticate on a 401: error="invalid_token" when
// the request sent a token (unknown, expired or revoked), a bare challenge
// when it sent none (RFC 6750, section 3.1).
func SetChallenge(w http.ResponseWriter, r *http.Request) {
	c := `Bearer realm="gpugraph"`
	if auth.BearerToken(r) != "" {
		c += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", c)
}

// handlerFunc answers an error instead of writing it; runai and openRelay
// write it in their API's shape.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// gate is a service's check of a caller's permission (compute.Service's
// MayRead, credentials.Service's MayAdminister, …): a route names the one
// of the service it calls, and never a permission of its own.
type gate func(*auth.Caller) error

// runai serves h as a Run:ai path: the caller must pass may, the gate of
// the service h calls, checked before any parameter (401/403 come before
// 400), and errors are written as {"code", "message", "details"}.
func runai(may gate, h handlerFunc) http.Handler {
	return faced{face(may, h, WriteRunaiError), Runai}
}

// openRelay serves h as an OpenRelay path: errors are written as
// {"error": {"code", "message"}}.
func openRelay(may gate, h handlerFunc) http.Handler {
	return faced{face(may, h, WriteOpenRelayError), OpenRelay}
}

func face(may gate, h handlerFunc, writeErr func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := auth.Authenticate(r.Context())
		if err == nil {
			err = may(c)
		}
		if err != nil {
			writeErr(w, r, err)
			return
		}
		if err := CheckParams(r); err != nil {
			writeErr(w, r, err)
			return
		}
		if err := h(w, r); err != nil {
			writeErr(w, r, err)
		}
	})
}

// WriteRunaiError answers in Run:ai's shape: {"code": 404, "message": "...", "details": "..."}.
func WriteRunaiError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorOf(r, err)
	setErrorHeaders(w, r, e)
	// Run:ai's Error schema allows properties besides its own.
	body := map[string]any{"code": e.Status, "message": e.Message}
	if e.Details != "" {
		body["details"] = e.Details
	}
	if id := reqid.From(r.Context()); id != "" {
		body["requestId"] = id
	}
	writeJSON(w, e.Status, body)
}

// WriteOpenRelayError answers in OpenRelay's shape: {"error": {"code": "VM_NODE_BUSY", "message": "..."}}.
func WriteOpenRelayError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorOf(r, err)
	setErrorHeaders(w, r, e)
	body := map[string]any{"code": e.Code, "message": e.Message}
	if id := reqid.From(r.Context()); id != "" {
		body["requestId"] = id
	}
	writeJSON(w, e.Status, map[string]any{"error": body})
}
