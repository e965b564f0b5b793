package middleware

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/ratelimit"
)

// rateLimitedCode is the code of a 429 in every API's shape.
const rateLimitedCode = "RATE_LIMITED"

// RateLimits holds each credential to its per-class budgets
// (docs/decisions/0011-limits.md), this process's share of them when several
// replicas serve,
// and counts the refusals.
type RateLimits struct {
	lim      *ratelimit.Limiter
	refused  *prometheus.CounterVec
	replicas prometheus.Gauge
}

// NewRateLimits holds credentials to limits (a class left out, or with a
// zero Rate, is not limited), counting the refusals on reg.
func NewRateLimits(reg prometheus.Registerer, limits map[ratelimit.Class]ratelimit.Limit) *RateLimits {
	r := &RateLimits{
		lim: ratelimit.New(limits, nil),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpugraph_rate_limited_total",
			Help: "Requests refused 429 for their credential's rate limit, by class (api, restart, ingest) and face (graphql, runai, openrelay).",
		}, []string{"class", "face"}),
		replicas: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpugraph_replicas",
			Help: "Server processes live in the deployment at this one's last heartbeat (server_replicas); each holds 1/N of every rate limit.",
		}),
	}
	r.replicas.Set(1)
	reg.MustRegister(r.refused, r.replicas)
	for _, c := range ratelimit.Classes {
		for _, f := range []string{"graphql", "runai", "openrelay"} {
			r.refused.WithLabelValues(string(c), f) // every series from the start
		}
	}
	return r
}

// SetReplicas takes this process's share of the limits with n replicas
// live, this one the rank-th (replicas.Heartbeat.Watch).
func (rl *RateLimits) SetReplicas(n, rank int) {
	rl.lim.SetReplicas(n, rank)
	rl.replicas.Set(float64(n))
}

// limitKey names the caller's bucket: its credential, else (a caller
// made without one) its organization.
func limitKey(c *auth.Caller) string {
	if c.KeyID != "" {
		return "key:" + c.KeyID
	}
	return "org:" + c.OrganizationID
}

func rateLimitedError(class ratelimit.Class, retryAfter int) *apierr.Error {
	what := "requests"
	switch class {
	case ratelimit.Restart:
		what = "restarts"
	case ratelimit.Ingest:
		what = "metric ingestions"
	}
	e := apierr.New(http.StatusTooManyRequests, rateLimitedCode, "this credential sent more %s than its rate limit allows; retry in %d s", what, retryAfter)
	e.RetryAfter = retryAfter
	return e
}

// limit refuses a request whose credential is over its budget (the api
// class, and the class p names besides), after the key is known (an
// unknown key answers 401, not 429) and before any work. The agents'
// reports are infrastructure with their own budget, not a tenant's
// traffic: they are not limited here. A stream's operations are charged
// one by one (extension.StreamBudget), not its upgrade.
func (rl *RateLimits) limit(p Route, next http.Handler) http.Handler {
	if p.Infrastructure {
		return next
	}
	classes := []ratelimit.Class{ratelimit.API}
	if p.Rate != "" {
		classes = []ratelimit.Class{p.Rate, ratelimit.API}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := auth.FromContext(r.Context())
		if c == nil || onStream(r.Context()) {
			next.ServeHTTP(w, r)
			return
		}
		for _, class := range classes {
			if ok, after := rl.lim.Allow(limitKey(c), class, 1); !ok {
				rl.refused.WithLabelValues(string(class), p.API).Inc()
				p.WriteError(w, r, rateLimitedError(class, after))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
