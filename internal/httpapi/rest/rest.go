// Package rest serves the documented REST paths of the two source APIs
// (OpenRelay's restart, Run:ai's pods) for clients that already speak them.
// Handlers only translate: they parse parameters, call the same services
// the GraphQL resolvers call (one services.Services, handed to both faces),
// and write the answer in the seed's shape. A route names the gate of the
// service its handler calls (pods.Service.MayRead, …), asked before any
// parameter is read; it names no permission of its own.
package rest

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
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
// route's policy (route.Policy) says.
func Register(mux Mux, api *API, wrap func(route.Policy, http.Handler) http.Handler) {
	for _, r := range api.routes() {
		mux.Handle(r.pattern, wrap(PolicyOf(r.handler), r.handler))
	}
}

// Costs declares h's policy (body bound, rate class, public or
// infrastructure traffic, face) where its route is listed; the gate reads
// it (route.Policy).
func Costs(p route.Policy, h http.Handler) http.Handler { return costed{Handler: h, policy: p} }

// PolicyOf answers the policy h was declared with (the zero one if none),
// its API the one runai or openRelay gave h when Costs named none.
func PolicyOf(h http.Handler) route.Policy {
	var p route.Policy
	if c, ok := h.(costed); ok {
		p, h = c.policy, c.Handler
	}
	if f, ok := h.(ofAPI); ok && p.API == "" {
		p.API = f.api
	}
	return p
}

// ofAPI is a handler that answers its errors in its API's shape.
type ofAPI struct {
	http.Handler
	api route.API
}

type costed struct {
	http.Handler
	policy route.Policy
}

// endpoint is one REST path: its ServeMux pattern and its handler, whose
// policy Costs declared.
type endpoint struct {
	pattern string
	handler http.Handler
}

func (api *API) routes() []endpoint {
	var rs []endpoint
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
	rs = append(rs, api.billingRoutes()...)
	return rs
}

// writeJSON writes v with status (errors are written by package route,
// in their API's shape).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // messages may say <API key>; this is not HTML
	if err := enc.Encode(v); err != nil {
		slog.Error("write response", "err", err)
	}
}

// pathParams are the wildcards of every REST pattern.
var pathParams = []string{"id", "workloadId", "podId", "revisionId"}

// listParams are the query parameters that take several values, repeated
// (filterBy=a&filterBy=b) as the Run:ai and OpenRelay documents define
// them; every other one takes one.
var listParams = map[string]bool{"filterBy": true, "metricType": true, "status": true}

// CheckParams holds every path and query parameter to the input bounds (package bounds)
// (valid UTF-8, no NUL, bounded length and count) before a handler reads
// them; the handlers' own parsers check their syntax. A parameter that
// takes one value given twice (limit=5&limit=500) is refused rather than
// read as its first, naming it: a proxy or a cache may read the other.
func CheckParams(r *http.Request) error {
	for _, name := range pathParams {
		if err := bounds.Text(name, r.PathValue(name), bounds.MaxID); err != nil {
			return err
		}
	}
	q := r.URL.Query()
	if len(q) > bounds.MaxParamValues {
		return apierr.BadRequest("the query string has %d parameters, more than %d", len(q), bounds.MaxParamValues)
	}
	for _, name := range slices.Sorted(maps.Keys(q)) { // the first bad one, the same at every run
		values := q[name]
		if err := bounds.Text("a parameter name", name, 64); err != nil {
			return err
		}
		if len(values) > bounds.MaxParamValues {
			return apierr.BadRequest("%s is repeated %d times, more than %d", name, len(values), bounds.MaxParamValues)
		}
		if len(values) > 1 && !listParams[name] {
			return apierr.BadRequest("%s is given %d times; it takes one value", name, len(values))
		}
		max := bounds.MaxParam
		if name == "search" {
			max = bounds.MaxSearch
		}
		for _, v := range values {
			if err := bounds.Text(name, v, max); err != nil {
				return err
			}
		}
	}
	return nil
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
	return ofAPI{face(may, h, route.WriteRunaiError), route.Runai}
}

// openRelay serves h as an OpenRelay path: errors are written as
// {"error": {"code", "message"}}.
func openRelay(may gate, h handlerFunc) http.Handler {
	return ofAPI{face(may, h, route.WriteOpenRelayError), route.OpenRelay}
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
