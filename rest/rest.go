// Package rest serves the documented REST paths of the two source APIs
// (OpenRelay's restart, Run:ai's pods) for clients that already speak them.
// Handlers only translate: they parse parameters, call the same service
// packages the GraphQL resolvers call (compute, pods, podmetrics, nodes),
// and write the answer in the seed's shape.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/compute"
	"gpugraph/credentials"
	"gpugraph/edge"
	"gpugraph/podmetrics"
	"gpugraph/reqid"
	"gpugraph/store"
)

// API holds what the handlers delegate to.
type API struct {
	// Store and Compute are what the handlers pass the service packages.
	Store   *store.Store
	Compute *compute.Service
	// Metrics is where pod metrics are read (the store when nil).
	Metrics podmetrics.Source
	// NodeReportKeys is the legacy mode (--node-credentials-required=false):
	// agent reports made with a nodes.report API key are accepted for nodes
	// without a credential. The zero value accepts node credentials only.
	NodeReportKeys bool
	// Credentials administers keys and applications and issues access tokens.
	Credentials *credentials.Service
}

// Mux is where Register mounts the paths (an *http.ServeMux, or one that
// also records its patterns).
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Register mounts every REST path on mux; wrap adds authentication.
func Register(mux Mux, api *API, wrap func(http.Handler) http.Handler) {
	for _, r := range api.routes() {
		mux.Handle(r.pattern, wrap(r.handler))
	}
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

// CheckParams holds every path and query parameter to the edge's bounds
// (valid UTF-8, no NUL, bounded length and count) before a handler reads
// them; the handlers' own parsers check their syntax.
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
	for name, values := range q {
		if err := edge.Text("a parameter name", name, 64); err != nil {
			return err
		}
		if len(values) > edge.MaxParamValues {
			return apierr.BadRequest("%s is repeated %d times, more than %d", name, len(values), edge.MaxParamValues)
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
func TimeoutError() *apierr.Error {
	return apierr.New(http.StatusGatewayTimeout, "TIMEOUT", "the request ran out of time")
}

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

// runai serves h as a Run:ai path: the caller must hold perm, checked
// before any parameter (401/403 come before 400), and errors are written
// as {"code", "message", "details"}.
func runai(perm string, h handlerFunc) http.Handler {
	return face(perm, h, WriteRunaiError)
}

// openRelay serves h as an OpenRelay path: errors are written as
// {"error": {"code", "message"}}.
func openRelay(perm string, h handlerFunc) http.Handler {
	return face(perm, h, WriteOpenRelayError)
}

func face(perm string, h handlerFunc, writeErr func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := auth.Require(r.Context(), perm); err != nil {
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
