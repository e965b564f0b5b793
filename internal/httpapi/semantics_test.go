package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gpugraph/demo"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/reqid"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 14, "HTTP semantics, one rule on every path".

// TestGraphQLRefusalsAnswer400: every refusal of a whole operation before
// it runs answers HTTP 400 (gqlgen answers parse and validation errors 422
// and its operation-context errors 200); a field's error keeps 200.
func TestGraphQLRefusalsAnswer400(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{
			DepthLimit: 4, AliasLimit: 3, RootFieldLimit: 2, TokenLimit: 200, ComplexityLimit: 1000,
		})
		for _, tc := range []struct{ name, query, want string }{
			{"parse", `{ vms { total `, "Expected Name"},
			{"validation", `{ vms { nope } }`, `Cannot query field "nope"`},
			{"depth", `{ nodes { gpus { node { gpus { id } } } } }`, "nested 5 levels deep, more than the limit of 4"},
			{"aliases", `{ vms(limit: 1) { a: total b: total c: total d: total } }`, "4 aliases, more than the limit of 3"},
			{"root fields", `{ a: podsCount b: podsCount c: podsCount }`, "3 root fields, more than the limit of 2"},
			{"complexity", `{ vms(limit: 500) { vms { id name } } }`, "complexity 1501, which exceeds the limit of 1000"},
			{"tokens", `{ vms { ` + strings.Repeat("total ", 250) + `} }`, "token limit"},
		} {
			var r *servertest.Response
			n := env.Statements(func() { r = env.GraphQL("acme-operator", tc.query, nil) }) - keyLookup(env)
			if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || r.Code() != "BAD_REQUEST" ||
				r.Errors[0].Extensions["status"] != float64(400) || !strings.Contains(r.Errors[0].Message, tc.want) {
				t.Errorf("%s: %d %+v, want 400 BAD_REQUEST containing %q", tc.name, r.Status, r.Errors, tc.want)
			}
			if n != 0 {
				t.Errorf("%s: %d statements besides the key's lookup ran for a refused query", tc.name, n)
			}
		}
		// A field's error is not the operation's: 200, as GraphQL servers answer.
		if r := env.GraphQL("acme-metrics", `{ vms { total } }`, nil); r.Status != http.StatusOK || r.Code() != "FORBIDDEN" {
			t.Errorf("forbidden field: %d %+v, want 200 FORBIDDEN", r.Status, r.Errors)
		}
	})
}

// TestGraphQLRequestErrorsHaveNoData: a request error (the document does
// not parse or validate, a variable does not coerce, a limit refuses the
// operation) and a refusal before any operation (no key, a malformed
// body) answer errors alone, with no data entry, as GraphQL's response
// format and the GraphQL-over-HTTP draft answer them, whichever media type
// the client accepts; an operation that ran keeps its data, null
// included. The status is the refusal's under both
// (docs/decisions/0009-http-semantics-one-rule-on-every.md).
func TestGraphQLRequestErrorsHaveNoData(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithConfig(t, st, servertest.Base, httpapi.Config{DepthLimit: 4})
		op := func(query string, vars map[string]any) []byte {
			b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
			return b
		}
		for _, accept := range []string{"application/json", "application/graphql-response+json"} {
			for _, tc := range []struct {
				name, token string
				body        []byte
				status      int
				code        string
				data        string // "" for no data entry
			}{
				{"parse", "acme-operator", op(`{ vms { total `, nil), 400, "BAD_REQUEST", ""},
				{"validation", "acme-operator", op(`{ vms { nope } }`, nil), 400, "BAD_REQUEST", ""},
				{"variable coercion", "acme-operator", op(`query($id: ID!) { vm(id: $id) { id } }`, map[string]any{"id": nil}), 400, "BAD_REQUEST", ""},
				{"depth", "acme-operator", op(`{ nodes { gpus { node { gpus { id } } } } }`, nil), 400, "BAD_REQUEST", ""},
				{"no key", "", op(`{ vms { total } }`, nil), 401, "UNAUTHENTICATED", ""},
				{"malformed body", "acme-operator", []byte(`{"query": "{ vms { total } }"`), 400, "BAD_REQUEST", ""},
				{"field error", "acme-metrics", op(`{ vms { total } }`, nil), 200, "FORBIDDEN", "null"},
			} {
				status, b := env.Do(http.MethodPost, "/graphql", tc.token, tc.body, http.Header{"Accept": {accept}})
				var got map[string]json.RawMessage
				if err := json.Unmarshal(b, &got); err != nil {
					t.Fatalf("%s, %s: %d %s", tc.name, accept, status, b)
				}
				var errs []servertest.Error
				_ = json.Unmarshal(got["errors"], &errs)
				data, hasData := got["data"]
				if status != tc.status || len(errs) != 1 || errs[0].Extensions["code"] != tc.code ||
					hasData != (tc.data != "") || string(data) != tc.data {
					t.Errorf("%s, Accept %s: %d %s, want %d %s with data %q", tc.name, accept, status, b, tc.status, tc.code, tc.data)
				}
			}
		}
	})
}

// keyLookup is how many statements a request runs before its query does
// (the API key's lookup): those of a query refused at parse.
func keyLookup(env *servertest.Env) int64 {
	return env.Statements(func() { env.GraphQL("acme-operator", `{`, nil) })
}

// TestListComplexityRefusedBeforeItRuns: 60 aliases of pods(limit: 500)
// cost 60 × (1 + 500 × 9) = 270,060 > 200,000 (docs/decisions/0011-limits.md): refused
// with no statement run, by the root-field cap under the defaults and by
// the complexity when that cap is raised; 44 of them (198,044) run.
func TestListComplexityRefusedBeforeItRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		servertest.New(t, st, servertest.Base)
		q := func(n int) string {
			var b strings.Builder
			b.WriteString("{")
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, " p%d: pods(limit: 500) { total next pods { id name nodeName k8sPhase createdAt workloadId } }", i)
			}
			return b.String() + " }"
		}
		for _, tc := range []struct {
			name  string
			roots int
			want  string
		}{
			{"defaults", 0, "the operation asks 60 root fields, more than the limit of 20"},
			{"root fields raised", 100, "operation has complexity 270060, which exceeds the limit of 200000"},
		} {
			env := servertest.NewWithConfig(t, st, "", httpapi.Config{RootFieldLimit: tc.roots})
			var r *servertest.Response
			n := env.Statements(func() { r = env.GraphQL("acme-operator", q(60), nil) }) - keyLookup(env)
			if r.Status != http.StatusBadRequest || r.Code() != "BAD_REQUEST" || len(r.Errors) != 1 ||
				r.Errors[0].Message != tc.want || r.Data != nil {
				t.Errorf("%s: %d %s %+v, want 400 %q", tc.name, r.Status, r.Data, r.Errors, tc.want)
			}
			if n != 0 {
				t.Errorf("%s: %d statements ran before the refusal, want none", tc.name, n)
			}
			if tc.roots != 0 {
				if r := env.GraphQL("acme-operator", q(44), nil); r.Status != http.StatusOK || len(r.Errors) != 0 {
					t.Errorf("44 aliases: %d %+v, want them run", r.Status, r.Errors)
				}
			}
		}
	})
}

// TestRetryAfterOnGraphQL: a GraphQL error whose REST twin sends
// Retry-After carries the same seconds in extensions.retryAfter.
func TestRetryAfterOnGraphQL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		fixture, err := demo.JSON(goldenNow)
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.New(t, st, string(fixture))
		for _, id := range []string{"vm-busy-no-free-gpus", "vm-no-ip-capacity"} {
			resp := env.Request(http.MethodPost, "/v1/vms/"+id+"/restart", "acme-operator", nil, nil)
			resp.Body.Close()
			ra := resp.Header.Get("Retry-After")
			r := env.GraphQL("acme-operator", fmt.Sprintf(`mutation { restartVm(id: %q) { id } }`, id), nil)
			if ra == "" || len(r.Errors) != 1 || fmt.Sprint(r.Errors[0].Extensions["retryAfter"]) != ra {
				t.Errorf("%s: REST Retry-After %q, GraphQL %+v", id, ra, r.Errors)
			}
		}
	})
}

// TestUnroutedAnswersJSON: an unknown path or method answers in the shape
// of the API it falls under, never ServeMux's plain text; 405 keeps Allow.
func TestUnroutedAnswersJSON(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		for _, tc := range []struct {
			method, path string
			status       int
			allow, body  string
		}{
			{"GET", "/api/v1/nope", 404, "", `{"code":404,"message":"no such path: GET /api/v1/nope","requestId":"servertest"}`},
			{"DELETE", "/api/v1/workloads/pods", 405, "GET, HEAD",
				`{"code":405,"message":"/api/v1/workloads/pods does not take DELETE; it takes GET, HEAD","requestId":"servertest"}`},
			{"GET", "/v1/nope", 404, "", `{"error":{"code":"NOT_FOUND","message":"no such path: GET /v1/nope","requestId":"servertest"}}`},
			{"GET", "/v1/vms/vm-a/restart", 405, "POST",
				`{"error":{"code":"METHOD_NOT_ALLOWED","message":"/v1/vms/vm-a/restart does not take GET; it takes POST","requestId":"servertest"}}`},
			{"GET", "/nope", 404, "", `{"error":{"code":"NOT_FOUND","message":"no such path: GET /nope","requestId":"servertest"}}`},
			{"POST", "/healthz", 405, "GET, HEAD",
				`{"error":{"code":"METHOD_NOT_ALLOWED","message":"/healthz does not take POST; it takes GET, HEAD","requestId":"servertest"}}`},
		} {
			resp := env.Request(tc.method, tc.path, "acme-operator", nil, nil)
			var b strings.Builder
			b.WriteString(readAll(t, resp))
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" ||
				resp.Header.Get("Allow") != tc.allow || strings.TrimSpace(b.String()) != tc.body {
				t.Errorf("%s %s: %d %q Allow %q %s\nwant %d Allow %q %s", tc.method, tc.path, resp.StatusCode,
					resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), b.String(), tc.status, tc.allow, tc.body)
			}
		}
	})
}

// TestUnauthorizedChallenges: every 401 sends WWW-Authenticate: Bearer,
// with error="invalid_token" when a token was sent (RFC 6750).
func TestUnauthorizedChallenges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		gqlBody := []byte(`{"query":"{ podsCount }"}`)
		for _, tc := range []struct {
			method, path string
			body         []byte
		}{
			{"POST", "/graphql", gqlBody},
			{"GET", "/api/v1/workloads/pods", nil},
			{"POST", "/v1/vms/vm-a/restart", nil},
			{"POST", "/v1/agent/heartbeat", []byte(`{}`)},
		} {
			for token, want := range map[string]string{
				"":     `Bearer realm="gpugraph"`,
				"nope": `Bearer realm="gpugraph", error="invalid_token"`,
			} {
				resp := env.Request(tc.method, tc.path, token, tc.body, nil)
				body := readAll(t, resp)
				if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
					t.Errorf("%s %s token %q: %d WWW-Authenticate %q, want 401 %q: %s", tc.method, tc.path, token,
						resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want, body)
				}
			}
		}
	})
}

// TestRequestIDs: a sane incoming X-Request-Id is echoed on every answer
// and written into error bodies; an insane or missing one is replaced by a
// fresh id.
func TestRequestIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		id := func(h string) http.Header { return http.Header{"X-Request-Id": {h}} }
		for _, path := range []string{"/healthz", "/readyz", "/metrics", "/api/v1/workloads/pods/count"} {
			resp := env.Request("GET", path, "acme-operator", nil, id("probe-1"))
			readAll(t, resp)
			if got := resp.Header.Get(reqid.Header); got != "probe-1" {
				t.Errorf("GET %s: X-Request-Id %q, want it echoed", path, got)
			}
		}
		for _, bad := range []string{"", "has space", strings.Repeat("x", reqid.MaxLen+1), "zoë"} {
			resp := env.Request("GET", "/api/v1/workloads/pods?limit=0", "acme-operator", nil, id(bad))
			var body map[string]any
			_ = json.Unmarshal([]byte(readAll(t, resp)), &body)
			got := resp.Header.Get(reqid.Header)
			if got == bad || len(got) != 32 || body["requestId"] != got {
				t.Errorf("sent %q: X-Request-Id %q, body requestId %v", bad, got, body["requestId"])
			}
		}
		// GraphQL: extensions.requestId on errors of every kind.
		for _, q := range []string{`{ vms { nope } }`, `{ pods(limit: 0) { total } }`} {
			b, _ := json.Marshal(map[string]any{"query": q})
			_, body := env.Do("POST", "/graphql", "acme-operator", b, id("gql-7"))
			var r servertest.Response
			_ = json.Unmarshal(body, &r)
			if len(r.Errors) == 0 || r.Errors[0].Extensions["requestId"] != "gql-7" {
				t.Errorf("%s: %s, want extensions.requestId gql-7", q, body)
			}
		}
		_, body := env.Do("POST", "/graphql", "", []byte(`{"query":"{ podsCount }"}`), id("gql-8"))
		if !strings.Contains(string(body), `"requestId":"gql-8"`) {
			t.Errorf("GraphQL 401: %s, want extensions.requestId", body)
		}
	})
}

// TestReadyz: /readyz is 200 on a migrated database and 503 naming each
// migration that is not applied; /healthz (the process and its database
// up) stays 200 meanwhile.
func TestReadyz(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		status, body := env.Do("GET", "/readyz", "", nil, nil)
		if want := `{"checks":{"database":"ok","migrations":"ok"},"status":"ready"}`; status != 200 || strings.TrimSpace(string(body)) != want {
			t.Errorf("/readyz: %d %s, want 200 %s", status, body, want)
		}
		var first string
		storetest.Scan(t, st, &first, "SELECT MIN(version) FROM schema_migrations")
		storetest.Exec(t, st, "DELETE FROM schema_migrations WHERE version = ?", first)
		resp := env.Request("GET", "/readyz", "", nil, nil)
		body2 := strings.TrimSpace(readAll(t, resp))
		want := `{"checks":{"database":"ok","migrations":"pending: ` + first + `"},"status":"not ready"}`
		if resp.StatusCode != 503 || body2 != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("/readyz with %s unapplied: %d %s, want 503 %s", first, resp.StatusCode, body2, want)
		}
		if status, body := env.Do("GET", "/healthz", "", nil, nil); status != 200 || string(body) != "ok\n" {
			t.Errorf("/healthz: %d %s", status, body)
		}
		storetest.Exec(t, st, "DROP TABLE schema_migrations")
		status, body = env.Do("GET", "/readyz", "", nil, nil)
		if want := `{"checks":{"database":"ok","migrations":"unreadable: schema_migrations could not be read"},"status":"not ready"}`; status != 503 || strings.TrimSpace(string(body)) != want {
			t.Errorf("/readyz without schema_migrations: %d %s", status, body)
		}
		_ = st.Close()
		status, body = env.Do("GET", "/readyz", "", nil, nil)
		if want := `{"checks":{"database":"unreachable","migrations":"unknown: the database is unreachable"},"status":"not ready"}`; status != 503 || strings.TrimSpace(string(body)) != want {
			t.Errorf("/readyz with the database closed: %d %s", status, body)
		}
	})
}
