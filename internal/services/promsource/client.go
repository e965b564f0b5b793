// Package promsource reads pod metrics from any server with Prometheus's
// HTTP API (/api/v1/query_range, /api/v1/query): Prometheus, Thanos
// Querier, Mimir, VictoriaMetrics. It implements podmetrics.Source: each
// Run:ai metric type is a PromQL template of the Mapping (defaults for
// DCGM exporter, cAdvisor and NVIDIA NIM in defaults.json, overridable
// with a file), evaluated at the same steps as the built-in store's
// sampling, and its answer is shaped exactly as the store's.
//
// The client is net/http and encoding/json: two GET endpoints and one
// JSON envelope need nothing more, and owning the transport keeps the
// error mapping (down, slow, refusing) and the redaction of credentials
// in one place.
package promsource

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"gpugraph/internal/lib/apierr"
)

// Config says how to reach the backend.
type Config struct {
	// BaseURL is the server's root (http://prometheus:9090, or a Thanos
	// Querier, Mimir's /prometheus prefix, VictoriaMetrics' root).
	BaseURL string
	// BearerToken, or BasicUser and BasicPassword, authenticate each
	// request; both empty sends none.
	BearerToken              string
	BasicUser, BasicPassword string
	// CAFile is a PEM bundle trusted for https, on top of the system's.
	CAFile string
	// Timeout bounds each request to the backend (DefaultTimeout when 0).
	Timeout time.Duration
	// Mapping is what each metric type asks (DefaultMapping when nil).
	Mapping *Mapping
}

// DefaultTimeout bounds one backend request when Config leaves it zero.
const DefaultTimeout = 10 * time.Second

// UnavailableCode is the error code of a backend that is down, slow or
// failing (503 with Retry-After on REST, the same code on GraphQL).
const UnavailableCode = "METRICS_BACKEND_UNAVAILABLE"

// RetryAfter is what a 503 of the backend asks a client to wait, in seconds.
const RetryAfter = 10

// Source is a podmetrics.Source over a Prometheus HTTP API.
type Source struct {
	base    *url.URL
	name    string
	cfg     Config
	client  *http.Client
	mapping *Mapping
}

// New checks cfg and builds the source; it does not contact the backend.
func New(cfg Config) (*Source, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("metrics source: %q is not an http(s) base URL", redact(cfg.BaseURL))
	}
	if u.User != nil {
		// Credentials in the URL become basic auth, so they never travel
		// with the URL into an error message or a log.
		if cfg.BasicUser == "" && cfg.BearerToken == "" {
			cfg.BasicUser = u.User.Username()
			cfg.BasicPassword, _ = u.User.Password()
		}
		u.User = nil
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	if cfg.BearerToken != "" && cfg.BasicUser != "" {
		return nil, errors.New("metrics source: give a bearer token or basic auth, not both")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("metrics source: CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("metrics source: CA file %s holds no PEM certificate", cfg.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	m := cfg.Mapping
	if m == nil {
		if m, err = DefaultMapping(); err != nil {
			return nil, err
		}
	}
	return &Source{base: u, name: "Prometheus at " + u.String(), cfg: cfg, client: &http.Client{Transport: tr}, mapping: m}, nil
}

// Name implements podmetrics.Source: the backend's URL without credentials.
func (s *Source) Name() string { return s.name }

// Ingests implements podmetrics.Source: samples pushed to gpugraph are
// not what Prometheus answers.
func (s *Source) Ingests() bool { return false }

// redact drops userinfo from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}

// apiResponse is Prometheus's JSON envelope.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

type queryData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

// series is one element of a matrix or vector result.
type series struct {
	Metric map[string]string    `json:"metric"`
	Values [][2]json.RawMessage `json:"values"` // matrix: [seconds, "value"]
	Value  [2]json.RawMessage   `json:"value"`  // vector
}

// get runs one API call and decodes its data, turning every failure into
// what the caller should see.
func (s *Source) get(ctx context.Context, path string, params url.Values) (queryData, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	u := *s.base
	u.Path += path
	u.RawQuery = params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return queryData{}, err
	}
	switch {
	case s.cfg.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+s.cfg.BearerToken)
	case s.cfg.BasicUser != "":
		req.SetBasicAuth(s.cfg.BasicUser, s.cfg.BasicPassword)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return queryData{}, s.unavailable(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return queryData{}, s.unavailable(ctx, err)
	}
	var env apiResponse
	jsonErr := json.Unmarshal(body, &env)
	if resp.StatusCode/100 == 2 && jsonErr == nil && env.Status == "success" {
		var d queryData
		if err := json.Unmarshal(env.Data, &d); err != nil {
			return queryData{}, s.badAnswer(resp.StatusCode, "data: "+err.Error())
		}
		return d, nil
	}
	if refused(resp.StatusCode, env) {
		return queryData{}, apierr.BadRequest("%s refused the query as too large (%s): narrow start and end, or ask for fewer numberOfSamples",
			s.name, strings.TrimSpace(env.Error))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		slog.Error("metrics backend refused our credentials", "backend", s.name, "status", resp.StatusCode)
		return queryData{}, s.unavailableMsg("it refused gpugraph's credentials (HTTP %d); the operator must fix --metrics-bearer-token or --metrics-basic-auth", resp.StatusCode)
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity:
		// A query of the mapping it cannot parse or run: the operator's
		// mapping, not the caller's request.
		slog.Error("metrics backend refused a mapped query", "backend", s.name, "status", resp.StatusCode, "error", env.Error)
		return queryData{}, fmt.Errorf("%s: %s: %s", s.name, env.ErrorType, env.Error)
	}
	return queryData{}, s.badAnswer(resp.StatusCode, env.Error)
}

// refused reports whether the backend turned the query down for its size:
// Prometheus's "exceeded maximum resolution of 11,000 points per
// timeseries" (400 bad_data) and "query processing would load too many
// samples into memory" (422 execution); Thanos, Mimir and VictoriaMetrics
// word their limits alike.
func refused(status int, env apiResponse) bool {
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
		return false
	}
	msg := strings.ToLower(env.Error)
	for _, s := range []string{"maximum resolution", "too many samples", "too many points", "exceeded the limit", "limit exceeded", "max samples", "too many data points", "cannot select more than"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func (s *Source) unavailable(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return s.unavailableMsg("it did not answer within %s", s.cfg.Timeout)
	case errors.Is(err, context.Canceled):
		return err
	}
	// The transport's error names the URL; only its cause is kept, and
	// the URL carries no credentials (New moved them out).
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return s.unavailableMsg("it could not be reached (%v)", err)
}

func (s *Source) badAnswer(status int, msg string) error {
	slog.Error("metrics backend failed", "backend", s.name, "status", status, "error", msg)
	return s.unavailableMsg("it answered HTTP %d", status)
}

func (s *Source) unavailableMsg(format string, args ...any) error {
	e := apierr.New(http.StatusServiceUnavailable, UnavailableCode, "the metrics backend, %s, is unavailable: %s; try again later",
		s.name, fmt.Sprintf(format, args...))
	e.RetryAfter = RetryAfter
	return e
}
