// Package servertest runs the whole HTTP surface over a real database for
// tests: load a fixture, send GraphQL and REST requests with an API key,
// and count the SQL statements a request ran.
//
// It also holds what the suites that pin one service's behaviour through
// the API (beside that service, as external test packages) share with
// httpapi's own contract suite: the compute world (world.go), requests and
// error shapes (calls.go), administrators and applications
// (credentials.go), node enrollment and heartbeats (nodes.go,
// heartbeats.go), VM rows and events (vms.go), the pod metrics' paths and
// pods (metrics.go) and a graphql-transport-ws client (ws.go).
package servertest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/httpapi/rest/openapitest"
	"gpugraph/internal/lib/reqid"
	"gpugraph/internal/services"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/store"
	"gpugraph/internal/store/sqlcount"
	"gpugraph/internal/store/storetest"
)

// Env is a running server over one database.
type Env struct {
	T     testing.TB
	Store *store.Store
	Srv   *httptest.Server
	stmts *sqlcount.Counter
	plans *atomic.Int64
}

// New loads fixture (a JSON document; "" for none) into st and starts a server on it.
func New(t testing.TB, st *store.Store, fixture string) *Env {
	return NewWithConfig(t, st, fixture, httpapi.Config{})
}

// LoaderWait is the dataloader wait tests run with: long enough that a busy
// machine running the race detector still batches one level into one
// statement, so statement counts are exact.
const LoaderWait = 25 * time.Millisecond

// NewWithConfig is New with a server configuration (its services, loaders
// and database are built here, Wire).
func NewWithConfig(t testing.TB, st *store.Store, fixture string, cfg httpapi.Config) *Env {
	t.Helper()
	return newEnv(t, st, fixture, Options{}, cfg, true)
}

// NewWithOptions is NewWithConfig with what the command line chooses of
// the services and the loaders.
func NewWithOptions(t testing.TB, st *store.Store, fixture string, o Options, cfg httpapi.Config) *Env {
	t.Helper()
	return newEnv(t, st, fixture, o, cfg, true)
}

// NewAsDeployed is NewWithConfig without CheckPlans: the server runs its
// plans as it does in production, with only their own self-check.
func NewAsDeployed(t testing.TB, st *store.Store, fixture string, cfg httpapi.Config) *Env {
	t.Helper()
	return newEnv(t, st, fixture, Options{}, cfg, false)
}

// Options are what the command line chooses of the services and the
// loaders, which the command builds and hands the HTTP layer.
type Options struct {
	Services services.Config
	// LoaderWait is how long dataloaders collect keys (loaders.DefaultWait
	// when zero; an Env's default is servertest.LoaderWait).
	LoaderWait time.Duration
}

// Wire is cfg with what the command builds over st and hands the HTTP
// layer, built the way the command builds them: the services
// (services.New, one per server), the loaders factory
// (loaders.NewFactory) and the probes' database.
func Wire(st *store.Store, o Options, cfg httpapi.Config) httpapi.Config {
	cfg.Services = services.New(st, o.Services)
	cfg.Loaders = loaders.NewFactory(st, cfg.Services.Metering, o.LoaderWait)
	cfg.Database = st
	return cfg
}

func newEnv(t testing.TB, st *store.Store, fixture string, o Options, cfg httpapi.Config, checkPlans bool) *Env {
	t.Helper()
	if fixture != "" {
		datasettest.Load(t, st, fixture)
	}
	c := storetest.CountStatements(t, st)
	if o.LoaderWait == 0 {
		o.LoaderWait = LoaderWait
	}
	cfg = Wire(st, o, cfg)
	if cfg.CredentialConcurrency == 0 {
		// Tests race one key's requests against each other (double
		// allocations, idempotency): the server's default share, a fraction
		// of the cores, would queue them one after another instead.
		cfg.CredentialConcurrency = cmp.Or(cfg.PublicConcurrency, 64)
	}
	plans := new(atomic.Int64)
	if cfg.PlanCheck == nil && checkPlans {
		cfg.PlanCheck = CheckPlans(t, plans)
	}
	srv := httptest.NewServer(Checked(t, httpapi.New(cfg)))
	t.Cleanup(srv.Close)
	return &Env{T: t, Store: st, Srv: srv, stmts: c, plans: plans}
}

// CheckPlans is the check every Env's server runs: each planned answer
// (fieldmodel.Planner) is compared byte for byte with what gqlgen marshals
// from the same rows, so every GraphQL query of every test runs both ways.
// n counts the answers compared.
func CheckPlans(t testing.TB, n *atomic.Int64) func(ctx context.Context, root string, planned, gqlgen []byte) {
	return func(_ context.Context, root string, planned, gqlgen []byte) {
		n.Add(1)
		if !bytes.Equal(planned, gqlgen) {
			t.Errorf("servertest: the plan of %s answered\n%s\nwhere gqlgen answers\n%s", root, clip(planned), clip(gqlgen))
		}
	}
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// PlansChecked is how many planned answers the server compared with
// gqlgen's (CheckPlans).
func (e *Env) PlansChecked() int64 { return e.plans.Load() }

// Checked serves h and checks every exchange before the client sees
// the answer (so a failure lands while the test waits) against the
// document GET /openapi.json serves (openapitest.CheckExchange): the
// request against its operation, the answer's status, content type,
// headers and body. Every REST answer any test produces through an Env (or
// a server of its own wrapped in Checked) is thus checked. Streams (SSE,
// WebSocket) pass through unrecorded.
func Checked(t testing.TB, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStream(r) {
			h.ServeHTTP(w, r)
			return
		}
		// The request body is kept as the handler reads it, not read ahead:
		// tests trickle bodies to hold a request open.
		reqBody := &teeBody{ReadCloser: r.Body}
		r.Body = reqBody
		rec := httptest.NewRecorder()
		h.ServeHTTP(recorder{ResponseRecorder: rec, conn: w}, r)
		body := rec.Body.Bytes()
		if err := openapitest.CheckExchange(openapitest.Exchange{Request: r, RequestBody: reqBody.read.Bytes(),
			Status: rec.Code, Header: rec.Header(), Body: body}); err != nil {
			t.Errorf("servertest: %v", err)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// recorder records the answer and lets the handler reach the
// connection's own controls (http.ResponseController's read and write
// deadlines), as it would without the recorder.
type recorder struct {
	*httptest.ResponseRecorder
	conn http.ResponseWriter
}

func (r recorder) Unwrap() http.ResponseWriter { return r.conn }

// teeBody keeps what was read of a request body.
type teeBody struct {
	io.ReadCloser
	read bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Write(p[:n])
	return n, err
}

func isStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream") || strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// Statements counts SQL statements run while fn runs.
func (e *Env) Statements(fn func()) int64 { return e.stmts.During(fn) }

// Response is a GraphQL answer.
type Response struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
}

// Error is one GraphQL error.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is extensions.code of the first error, "" when there is none.
func (r *Response) Code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	s, _ := r.Errors[0].Extensions["code"].(string)
	return s
}

// GraphQL posts query with variables as token's caller.
func (e *Env) GraphQL(token, query string, vars map[string]any) *Response {
	e.T.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	status, b := e.Do(http.MethodPost, "/graphql", token, body, nil)
	r := &Response{Status: status}
	if err := json.Unmarshal(b, r); err != nil {
		e.T.Fatalf("graphql answer is not JSON (%d): %s", status, b)
	}
	return r
}

// Decode unmarshals the data of a response that must have no errors.
func (e *Env) Decode(r *Response, into any) {
	e.T.Helper()
	if len(r.Errors) > 0 {
		e.T.Fatalf("unexpected errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, into); err != nil {
		e.T.Fatalf("decode data: %v: %s", err, r.Data)
	}
}

// Do sends one request and answers the status and body.
func (e *Env) Do(method, path, token string, body []byte, header http.Header) (int, []byte) {
	e.T.Helper()
	resp := e.Request(method, path, token, body, header)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	return resp.StatusCode, b
}

// RequestID is the X-Request-Id every request of Request carries unless
// its header says otherwise, so answers that carry it (error bodies) are
// the same at every run.
const RequestID = "servertest"

// Request sends one request and answers the response (the caller closes its body).
func (e *Env) Request(method, path, token string, body []byte, header http.Header) *http.Response {
	e.T.Helper()
	req, err := http.NewRequest(method, e.Srv.URL+path, bytes.NewReader(body))
	if err != nil {
		e.T.Fatal(err)
	}
	req.Header.Set(reqid.Header, RequestID)
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	return resp
}

// Enroll enrolls the node named node in cluster as the platform operator
// does (gpugraph nodes enroll) and answers its one-time bootstrap token,
// for an agent's --bootstrap-token.
func Enroll(t testing.TB, st *store.Store, node, cluster string) string {
	t.Helper()
	e, err := nodeid.New(st).Enroll(context.Background(), auth.SystemCaller(), node, cluster)
	if err != nil {
		t.Fatalf("enroll %s in %s: %v", node, cluster, err)
	}
	return e.BootstrapToken
}

// NodeCredential enrolls node in cluster and exchanges the bootstrap token
// as its agent would: the credential its reports carry (with a sequence
// that grows, see Sequence).
func NodeCredential(t testing.TB, st *store.Store, node, cluster string) string {
	t.Helper()
	r, err := nodeid.New(st).Register(context.Background(), Enroll(t, st, node, cluster))
	if err != nil {
		t.Fatalf("register %s: %v", node, err)
	}
	return r.Credential
}

// sequence is what Sequence hands out, shared by every node of every test:
// it only grows, so each node's reports carry growing sequences.
var sequence atomic.Int64

// Sequence is the next report sequence, for a report made with a node
// credential.
func Sequence() int64 { return sequence.Add(1) }

// Base is the fixture every package's tests share (datasettest.Base): the
// faces' tests name it here beside the server they run it on.
var Base = datasettest.Base

// Config is the server's configuration (httpapi.Config), for the suites
// beside the services that build a server of their own (Handler).
type Config = httpapi.Config

// Handler is the server the command serves over st, built by Wire,
// without Env's checks of every answer (a server that must upgrade a
// WebSocket, or that a test wraps itself).
func Handler(st *store.Store, o Options, cfg Config) http.Handler {
	return httpapi.New(Wire(st, o, cfg))
}
