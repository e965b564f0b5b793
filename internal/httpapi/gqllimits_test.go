package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/lockedbuf"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Issue 23: GraphQL documents that cost nothing to refuse (findings 3, 4,
// 9, 10 and the request body).

func words(s string, n int) string { return strings.TrimSpace(strings.Repeat(" "+s, n)) }

// TestValidationBombsRefusedBeforeValidation (finding 3): the 9,900
// __typename document and the 9,000-field selection answer 400 naming the
// limit, run no statement, and are refused before validation: the same
// shapes of unknown fields, which validation would name, answer the limit
// too. The two are counted off their tokens before they are parsed; the
// smaller ones are refused by the walk of their syntax tree.
func TestValidationBombsRefusedBeforeValidation(t *testing.T) {
	env := servertest.New(t, storetest.Open(t, store.SQLite), servertest.Base)
	const fields = "the query asks more than 2000 fields (a fragment's fields count at each place it is spread)"
	for _, tc := range []struct{ name, query, want string }{
		{"9,900 __typename", "{ " + words("__typename", 9900) + " }", fields},
		{"9,000 repeated fields in a selection", "{ nodes { " + words("id", 9000) + " } }", fields},
		{"9,000 unknown fields in a selection", "{ nodes { " + words("nope", 9000) + " } }", fields},
		{"18 selections of 500 fields", "{ nodes {" + strings.Repeat(" gpus { "+words("id", 500)+" }", 18) + " } }", fields},
		{"1,900 __typename", "{ " + words("__typename", 1900) + " }",
			"the operation asks 1900 root fields, more than the limit of 20"},
		{"1,900 unknown root fields", "{ " + words("nope", 1900) + " }",
			"the operation asks 1900 root fields, more than the limit of 20"},
		{"1,900 unknown fields in a selection", "{ nodes { " + words("nope", 1900) + " } }",
			"the selection set of nodes asks 1900 fields (its fragments' included), more than the limit of 100"},
		{"a field repeated in fragments", "{ nodes { ...A ...B } } fragment A on Node { " + words("id", 15) + " } fragment B on Node { " + words("id", 15) + " }",
			"the query asks nodes.id 30 times (its fragments' included), more than the limit of 20"},
		{"a fragment cycle", "{ nodes { ...F } } fragment F on Node { id gpus { node { ...F } } }",
			"fragment F spreads itself (F → F)"},
	} {
		var r *servertest.Response
		n := env.Statements(func() { r = env.GraphQL("acme-reader", tc.query, nil) }) - keyLookup(env)
		if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || r.Code() != "BAD_REQUEST" || r.Errors[0].Message != tc.want {
			t.Errorf("%s: %d %+v, want 400 %q", tc.name, r.Status, r.Errors, tc.want)
		}
		if n != 0 {
			t.Errorf("%s: %d statements ran besides the key's lookup", tc.name, n)
		}
	}
}

// TestAliasesInsideLists: an alias inside a list counts once, not once per
// element the list may hold (complexity weighs the list): { nodes { a: id } }
// had counted 200 aliases and was refused.
func TestAliasesInsideLists(t *testing.T) {
	env := servertest.New(t, storetest.Open(t, store.SQLite), servertest.Base)
	if r := env.GraphQL("acme-reader", `{ nodes { a: id b: name gpus { i: index } } }`, nil); r.Status != 200 || len(r.Errors) > 0 ||
		!strings.HasPrefix(string(r.Data), `{"nodes":[{"a":"n1","b":`) {
		t.Errorf("aliases in a list: %d %s %+v", r.Status, r.Data, r.Errors)
	}
	q := "{ nodes { ...A gpus { node { ...A } } } } fragment A on Node { " + func() string {
		var s strings.Builder
		for i := range 51 {
			fmt.Fprintf(&s, " a%d: id", i)
		}
		return s.String()
	}() + " }"
	if r := env.GraphQL("acme-reader", q, nil); r.Status != 400 || len(r.Errors) != 1 || r.Errors[0].Message != "the operation uses 102 aliases, more than the limit of 100" {
		t.Errorf("51 aliases spread twice: %d %+v", r.Status, r.Errors)
	}
}

// BenchmarkRefuseValidationBombs: what a refusal of finding 3's documents
// costs the server, through the whole handler (key lookup included).
func BenchmarkRefuseValidationBombs(b *testing.B) {
	h := benchHandler(b, httpapi.Config{})
	for name, q := range map[string]string{
		"9,900 __typename":        "{ " + words("__typename", 9900) + " }",
		"9,000 fields in one set": "{ nodes { " + words("id", 9000) + " } }",
		"18 sets of 500 fields":   "{ nodes {" + strings.Repeat(" gpus { "+words("id", 500)+" }", 18) + " } }",
		"1,900 fields in one set": "{ nodes { " + words("id", 1900) + " } }",
		"a fragment cycle":        "{ nodes { ...F } } fragment F on Node { id gpus { node { ...F } } }",
		"1,000 aliases": "{ nodes {" + func() string {
			var s strings.Builder
			for i := range 1000 {
				fmt.Fprintf(&s, " a%d: id", i)
			}
			return s.String()
		}() + " } }",
	} {
		body, _ := json.Marshal(map[string]any{"query": q})
		b.Run(name, func(b *testing.B) {
			cpu := httpapi.ProcessCPU()
			for b.Loop() {
				rec := serve(h, http.MethodPost, "/graphql", body, nil)
				if rec.Code != http.StatusBadRequest {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
			httpapi.ReportCPU(b, cpu)
		})
	}
}

// BenchmarkRefuseTypenameFlood: what one refusal of make abuse's attack #4
// costs the server, through the whole handler (the body read ahead, the
// key looked up, the body checked and split, the fields counted, the 400
// written) with none of a client's work: its document is the 109 KB one of
// 9,900 __typename, each request's named apart as the attack's are
// (bench/abuse typenameDocument), the bodies made before the clock runs.
func BenchmarkRefuseTypenameFlood(b *testing.B) {
	h := benchHandler(b, httpapi.Config{})
	bodies := make([][]byte, 256)
	for i := range bodies {
		bodies[i], _ = json.Marshal(map[string]string{"query": fmt.Sprintf("query Q%d {", i) + strings.Repeat(" __typename", 9900) + " }"})
	}
	b.SetBytes(int64(len(bodies[0])))
	cpu := httpapi.ProcessCPU()
	i := 0
	for b.Loop() {
		rec := serve(h, http.MethodPost, "/graphql", bodies[i%len(bodies)], nil)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "more than 2000 fields") {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		i++
	}
	httpapi.ReportCPU(b, cpu)
}

func benchHandler(b *testing.B, cfg httpapi.Config) http.Handler {
	st := storetest.Open(b, store.SQLite)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(servertest.Base)); err != nil {
		b.Fatal(err)
	}
	return httpapi.New(servertest.Wire(st, servertest.Options{}, cfg))
}

// serve sends one request to h in this goroutine (a panic fails the test).
func serve(h http.Handler, method, path string, body []byte, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer acme-reader")
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// cacheGauges reads gpugraph_graphql_cache_{entries,bytes} off /metrics:
// "query entries", "apq bytes", ….
func cacheGauges(t *testing.T, env *servertest.Env) map[string]float64 {
	t.Helper()
	_, page := env.Do(http.MethodGet, "/metrics", "", nil, nil)
	out := map[string]float64{}
	for _, m := range regexp.MustCompile(`(?m)^gpugraph_graphql_cache_(entries|bytes)\{cache="(\w+)"\} (\S+)$`).FindAllStringSubmatch(string(page), -1) {
		v, _ := strconv.ParseFloat(m[3], 64)
		out[m[2]+" "+m[1]] = v
	}
	if len(out) != 6 {
		t.Fatalf("/metrics has %d cache gauges, want 6: %v", len(out), out)
	}
	return out
}

// persisted is a request body sending q with its APQ hash.
func persisted(q string, withQuery bool) []byte {
	sum := sha256.Sum256([]byte(q))
	m := map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}}
	if withQuery {
		m["query"] = q
	}
	b, _ := json.Marshal(m)
	return b
}

// TestRefusedDocumentsLeaveNoCache (finding 4): 1,000 distinct documents
// refused by every kind of limit (half of them sent as persisted queries)
// leave the query, APQ and plan caches empty; an accepted one enters.
func TestRefusedDocumentsLeaveNoCache(t *testing.T) {
	env := servertest.New(t, storetest.Open(t, store.SQLite), servertest.Base)
	statuses := words(`RUNNING`, 65)
	for i := range 1000 {
		var q, want string
		switch i % 6 {
		case 0: // valid; complexity 5 × 41,501 (gqlgen cached these before)
			q, want = fmt.Sprintf("{ %s }", strings.Repeat(fmt.Sprintf(" a%d_%%d: vms(limit: 500) { vms { node { gpus { vm { gpus { id } } } } } }", i), 5)), "complexity"
			q = fmt.Sprintf(q, 1, 2, 3, 4, 5)
		case 1: // valid; 16 levels deep
			q, want = fmt.Sprintf("{ d%d: nodes { %sid%s } }", i, strings.Repeat("gpus { node { ", 7), strings.Repeat(" } }", 7)), "nested 16 levels"
		case 2: // valid; 21 root fields
			q, want = "{"+strings.Repeat(fmt.Sprintf(" r%d_%%d: podsCount", i), 21)+" }", "21 root fields"
			q = fmt.Sprintf(q, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
		case 3: // valid; a list over its cap
			q, want = fmt.Sprintf("{ v%d: vms(status: [%s]) { total } }", i, statuses), "65 values"
		case 4: // invalid
			q, want = fmt.Sprintf("{ nodes { nope%d } }", i), "Cannot query field"
		case 5: // a repeated field
			q, want = fmt.Sprintf("{ n%d: nodes { %s } }", i, words("id", 21)), "21 times"
		}
		body, _ := json.Marshal(map[string]any{"query": q})
		if i%2 == 1 {
			body = persisted(q, true)
		}
		status, b := env.Do(http.MethodPost, "/graphql", "acme-reader", body, nil)
		if status != http.StatusBadRequest || !strings.Contains(string(b), want) {
			t.Fatalf("document %d: %d %s, want 400 %q", i, status, b, want)
		}
	}
	for name, v := range cacheGauges(t, env) {
		if v != 0 {
			t.Errorf("after 1,000 refused documents the %s gauge is %v, want 0", name, v)
		}
	}
	q := `{ vms(limit: 1) { total vms { id } } }`
	if status, b := env.Do(http.MethodPost, "/graphql", "acme-reader", persisted(q, true), nil); status != 200 {
		t.Fatalf("accepted: %d %s", status, b)
	}
	g := cacheGauges(t, env)
	if g["query entries"] != 1 || g["apq entries"] != 1 || g["plan entries"] != 1 || g["query bytes"] < float64(len(q)) {
		t.Errorf("after one accepted document: %v, want one entry in each cache", g)
	}
}

// TestCachesBoundedInBytes (finding 4): 60 distinct accepted documents of
// 60 KB (a console's long comment) fill the query, APQ and plan caches;
// each holds no more than its byte bound, and the newest stays.
func TestCachesBoundedInBytes(t *testing.T) {
	const queryBytes, apqBytes, planBytes = 1 << 20, 256 << 10, 256 << 10
	env := servertest.NewWithConfig(t, storetest.Open(t, store.SQLite), servertest.Base, httpapi.Config{
		QueryCacheBytes: queryBytes, APQCacheBytes: apqBytes, PlanCacheBytes: planBytes,
	})
	comment := "\n#" + strings.Repeat("c", 60<<10)
	var q string
	for i := range 60 {
		q = fmt.Sprintf("query Q%d { vms(limit: 1) { total vms { id name } } }%s", i, comment)
		if status, b := env.Do(http.MethodPost, "/graphql", "acme-reader", persisted(q, true), nil); status != 200 || !strings.Contains(string(b), `"total":3`) {
			t.Fatalf("document %d: %d %s", i, status, b)
		}
	}
	g := cacheGauges(t, env)
	for _, c := range []struct {
		cache string
		bound float64
	}{{"query", queryBytes}, {"apq", apqBytes}, {"plan", planBytes}} {
		if b, n := g[c.cache+" bytes"], g[c.cache+" entries"]; b > c.bound || b < float64(len(comment)) || n < 1 || n >= 60 {
			t.Errorf("%s cache: %v entries, %v bytes; want some, within %v bytes", c.cache, n, b, c.bound)
		}
	}
	// The newest is kept: its hash alone answers.
	if status, b := env.Do(http.MethodPost, "/graphql", "acme-reader", persisted(q, false), nil); status != 200 || !strings.Contains(string(b), `"total":3`) {
		t.Errorf("newest by hash: %d %s", status, b)
	}
}

// TestListArgumentsCapped (finding 9): a list argument over its cap is a
// 400 naming the argument and the cap, before any statement runs, on both
// engines (70,000 statuses answered INTERNAL: one SQL parameter each);
// within the cap repeats are dropped and the answer is the same.
func TestListArgumentsCapped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		list := func(v string, n int) []any {
			l := make([]any, n)
			for i := range l {
				l[i] = v
			}
			return l
		}
		for _, tc := range []struct {
			name, token, query string
			vars               map[string]any
			want               string
		}{
			{"70,000 VM statuses", "acme-reader", `query($s: [VmStatus!]) { vms(status: $s) { total } }`, map[string]any{"s": list("RUNNING", 70000)},
				"argument status of vms: 70000 values, more than the limit of 64"},
			{"33,000 node statuses", "acme-reader", `query($s: [NodeStatus!]) { nodes(status: $s) { id } }`, map[string]any{"s": list("ONLINE", 33000)},
				"argument status of nodes: 33000 values, more than the limit of 64"},
			{"65 node statuses of nodeList", "acme-reader", `{ nodeList(status: [` + words("ONLINE", 65) + `]) { total } }`, nil,
				"argument status of nodeList: 65 values, more than the limit of 64"},
			{"65 filterBy", "acme-workloads", `query($f: [String!]) { podsCount(filterBy: $f) }`, map[string]any{"f": list("name==a", 65)},
				"argument filterBy of podsCount: 65 values, more than the limit of 64"},
			{"65 metric types", "acme-workloads", `query($m: [PodMetricType!]!) { podMetrics(workloadId: "` + servertest.TrainWorkload + `", podId: "` + servertest.TrainPod1 + `", metricTypes: $m,
				start: "2025-01-01T00:00:00Z", end: "2025-01-02T00:00:00Z") { omittedTypes } }`, map[string]any{"m": list("CPU_USAGE_CORES", 65)},
				"argument metricTypes of podMetrics: 65 values, more than the limit of 64"},
		} {
			var r *servertest.Response
			n := env.Statements(func() { r = env.GraphQL(tc.token, tc.query, tc.vars) }) - keyLookup(env)
			if r.Status != http.StatusBadRequest || len(r.Errors) != 1 || r.Code() != "BAD_REQUEST" || r.Errors[0].Message != tc.want {
				t.Errorf("%s: %d %+v, want 400 %q", tc.name, r.Status, r.Errors, tc.want)
			}
			if n > 0 {
				t.Errorf("%s: %d statements ran", tc.name, n)
			}
		}
		// Within the caps, repeats ask what one of each asks.
		for _, tc := range []struct {
			token, query, once string
			vars               map[string]any
		}{
			{"acme-reader", `query($s: [VmStatus!]) { vms(status: $s) { total vms { id } } }`, `{ vms(status: [RUNNING, STOPPED]) { total vms { id } } }`,
				map[string]any{"s": append(list("RUNNING", 40), list("STOPPED", 24)...)}},
			{"acme-reader", `{ nodes(status: [` + words("ONLINE", 64) + `]) { id } }`, `{ nodes(status: [ONLINE]) { id } }`, nil},
			{"acme-workloads", `query($m: [PodMetricType!]!) { podMetrics(workloadId: "` + servertest.TrainWorkload + `", podId: "` + servertest.TrainPod1 + `", metricTypes: $m,
				start: "2025-01-01T00:00:00Z", end: "2025-01-02T00:00:00Z", numberOfSamples: 0) { measurements { type values { value } } } }`,
				`{ podMetrics(workloadId: "` + servertest.TrainWorkload + `", podId: "` + servertest.TrainPod1 + `", metricTypes: [CPU_USAGE_CORES],
				start: "2025-01-01T00:00:00Z", end: "2025-01-02T00:00:00Z", numberOfSamples: 0) { measurements { type values { value } } } }`,
				map[string]any{"m": list("CPU_USAGE_CORES", 64)}},
		} {
			got, want := env.GraphQL(tc.token, tc.query, tc.vars), env.GraphQL(tc.token, tc.once, nil)
			if got.Status != 200 || len(got.Errors) > 0 || string(got.Data) != string(want.Data) || len(want.Data) < 20 {
				t.Errorf("%s: %d %s %+v, want %s", tc.query, got.Status, got.Data, got.Errors, want.Data)
			}
		}
	})
}

// TestRESTListParameters (finding 9, REST): the lists of the REST faces
// that reach SQL (GET /v1/vms status, metricType) are repeated at most 64
// times (8 KiB each), and their comma-joined values are de-duplicated
// before SQL: 1,000 repeats answer what one does.
func TestRESTListParameters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		many := strings.TrimSuffix(strings.Repeat("running,", 1000), ",")
		_, once := env.Do(http.MethodGet, "/v1/vms?status=running", "acme-reader", nil, nil)
		if status, got := env.Do(http.MethodGet, "/v1/vms?status="+many, "acme-reader", nil, nil); status != 200 || string(got) != string(once) {
			t.Errorf("1,000 statuses: %d %s, want %s", status, got, once)
		}
		types := strings.TrimSuffix(strings.Repeat("CPU_USAGE_CORES,", 500), ",")
		one := servertest.GetMetrics(t, env, 200, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", "CPU_USAGE_CORES", "start", "2025-01-01T00:00:00Z", "end", "2025-01-02T00:00:00Z"))
		if got := servertest.GetMetrics(t, env, 200, servertest.MetricsPath(servertest.TrainWorkload, servertest.TrainPod1, "metricType", types, "start", "2025-01-01T00:00:00Z", "end", "2025-01-02T00:00:00Z")); got != one {
			t.Errorf("500 metric types: %s, want %s", got, one)
		}
		q := "/v1/vms?" + strings.Repeat("status=running&", 65)
		if status, body := env.Do(http.MethodGet, q, "acme-reader", nil, nil); status != 400 || !strings.Contains(string(body), "status is repeated 65 times, more than 64") {
			t.Errorf("65 status parameters: %d %s", status, body)
		}
	})
}

// captureLogs sends the default logger's lines to a buffer until the test ends.
func captureLogs(t *testing.T) *lockedbuf.Buffer {
	logs := &lockedbuf.Buffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return logs
}

// TestMalformedGraphQLBodies (finding 10): every malformed /graphql
// request answers 400 (413 over the size limit) in GraphQL's shape with
// extensions.code and a message naming what is wrong; the handler, run in
// the test's goroutine, never panics, and nothing is logged at ERROR.
func TestMalformedGraphQLBodies(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(servertest.Base)); err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(servertest.Wire(st, servertest.Options{}, httpapi.Config{}))
	logs := captureLogs(t)
	deep := `{"query": "{ vms { total } }", "variables": {"a": ` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`
	sse := http.Header{"Accept": {"text/event-stream"}}
	for _, tc := range []struct {
		name, method, path, body string
		header                   http.Header
		status                   int
		code, want               string
	}{
		{"truncated JSON", "POST", "/graphql", `{"query": "{ vms { total } }"`, nil, 400, "BAD_REQUEST",
			"the request body is not valid JSON: it ends before its value does (29 bytes)"},
		{"truncated inside a string", "POST", "/graphql", `{"query": "{ vms { tot`, nil, 400, "BAD_REQUEST",
			"the request body is not valid JSON: it ends before its value does"},
		{"a non-string query", "POST", "/graphql", `{"query": 5}`, nil, 400, "BAD_REQUEST", "query must be a string, got a number"},
		{"a query object", "POST", "/graphql", `{"query": {"q": 1}}`, nil, 400, "BAD_REQUEST", "query must be a string, got an object"},
		{"a non-string operationName", "POST", "/graphql", `{"query": "{ vms { total } }", "operationName": ["A"]}`, nil, 400, "BAD_REQUEST",
			"operationName must be a string, got an array"},
		{"variables as an array", "POST", "/graphql", `{"query": "{ vms { total } }", "variables": []}`, nil, 400, "BAD_REQUEST",
			"variables must be a JSON object, got an array"},
		{"variables as a string", "POST", "/graphql", `{"query": "{ vms { total } }", "variables": "{}"}`, nil, 400, "BAD_REQUEST",
			"variables must be a JSON object, got a string"},
		{"extensions as a number", "POST", "/graphql", `{"query": "{ vms { total } }", "extensions": 1}`, nil, 400, "BAD_REQUEST",
			"extensions must be a JSON object, got a number"},
		{"deep nesting", "POST", "/graphql", deep, nil, 400, "BAD_REQUEST", "the request body nests more than 32 levels deep"},
		{"trailing garbage", "POST", "/graphql", `{"query": "{ vms { total } }"} x`, nil, 400, "BAD_REQUEST",
			"the request body has data after its JSON value, from byte 31"},
		{"a second object", "POST", "/graphql", `{"query": "{ vms { total } }"}{"query": "{ nodes { id } }"}`, nil, 400, "BAD_REQUEST",
			"the request body has data after its JSON value, from byte 30"},
		{"a duplicate key", "POST", "/graphql", `{"query": "{ vms { total } }", "query": "mutation { restartVm(id: \"vm-acme-2\") { id } }"}`, nil, 400, "BAD_REQUEST",
			`the request body names "query" twice in one object (at the top level): name each key once`},
		{"a duplicate variable", "POST", "/graphql", `{"query": "query($l: Int) { vms(limit: $l) { total } }", "variables": {"l": 1, "l": 500}}`, nil, 400, "BAD_REQUEST",
			`the request body names "l" twice in one object (at /variables): name each key once`},
		{"a batch", "POST", "/graphql", `[{"query": "{ vms { total } }"}, {"query": "{ nodes { id } }"}]`, nil, 400, "BAD_REQUEST",
			"the request body is a JSON array (a batch of operations): send one operation as a JSON object"},
		{"a string body", "POST", "/graphql", `"{ vms { total } }"`, nil, 400, "BAD_REQUEST", "the request body must be a JSON object"},
		{"an empty body", "POST", "/graphql", ``, nil, 400, "BAD_REQUEST", "the request body is empty"},
		{"invalid UTF-8", "POST", "/graphql", "{\"query\": \"{ vm(id: \\\"\xff\\\") { id } }\"}", nil, 400, "BAD_REQUEST",
			"the request body is not valid JSON: invalid UTF-8"},
		{"SSE: truncated JSON", "POST", "/graphql", `{"query": "subscription { vmEvents { id } }"`, sse, 400, "BAD_REQUEST",
			"the request body is not valid JSON: it ends before its value does"},
		{"SSE: variables as an array", "POST", "/graphql", `{"query": "subscription { vmEvents { id } }", "variables": [1]}`, sse, 400, "BAD_REQUEST",
			"variables must be a JSON object, got an array"},
		{"GET: variables as an array", "GET", "/graphql?query=%7B+vms+%7B+total+%7D+%7D&variables=%5B%5D", "", nil, 400, "BAD_REQUEST",
			"variables must be a JSON object, got an array"},
		{"GET: truncated variables", "GET", "/graphql?query=%7B+vms+%7B+total+%7D+%7D&variables=%7B", "", nil, 400, "BAD_REQUEST",
			"variables is not valid JSON: it ends before its value does"},
		{"a text/plain POST", "POST", "/graphql", `{"query": "{ vms { total } }"}`, http.Header{"Content-Type": {"text/plain"}}, 415, "UNSUPPORTED_MEDIA_TYPE",
			"/graphql takes a POST body of Content-Type application/json, got text/plain"},
		{"a form POST", "POST", "/graphql", `query=%7B+vms+%7B+total+%7D+%7D`, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, 415, "UNSUPPORTED_MEDIA_TYPE",
			"/graphql takes a POST body of Content-Type application/json, got application/x-www-form-urlencoded"},
		{"PUT", "PUT", "/graphql", `{"query": "{ vms { total } }"}`, nil, 405, "METHOD_NOT_ALLOWED", "/graphql does not take PUT; it takes GET and POST (OPTIONS lists them)"},
		{"GET: a mutation", "GET", "/graphql?query=mutation+%7B+restartVm%28id%3A+%22vm-acme-2%22%29+%7B+id+%7D+%7D", "", nil, 405, "METHOD_NOT_ALLOWED",
			"a GET runs queries only; send a mutation as a POST"},
		{"GET: the query twice", "GET", "/graphql?query=%7B+vms+%7B+total+%7D+%7D&query=%7B+nodes+%7B+id+%7D+%7D", "", nil, 400, "BAD_REQUEST",
			"query is given 2 times; give it once"},
	} {
		var body []byte
		if tc.body != "" {
			body = []byte(tc.body)
		}
		rec := serve(h, tc.method, tc.path, body, tc.header)
		checkGraphQLError(t, tc.name, rec, tc.status, tc.code, tc.want)
		if len(tc.body) > 20 && strings.Contains(rec.Body.String(), tc.body[2:20]) {
			t.Errorf("%s: the answer echoes the request: %.300s", tc.name, rec.Body)
		}
	}

	// A GET query runs.
	if rec := serve(h, http.MethodGet, "/graphql?query=%7B+vms+%7B+total+%7D+%7D&variables=%7B%7D", nil, nil); rec.Code != 200 || rec.Body.String() != `{"data":{"vms":{"total":3}}}` {
		t.Errorf("GET query: %d %s", rec.Code, rec.Body)
	}

	// 10 MB, chunked (no Content-Length) and announced.
	for _, announced := range []bool{false, true} {
		big := `{"query": "{ vms { total } }", "x": "` + strings.Repeat("x", 10<<20) + `"}`
		req := httptest.NewRequest(http.MethodPost, "/graphql", io.MultiReader(strings.NewReader(big)))
		req.ContentLength = -1
		if announced {
			req.ContentLength = int64(len(big))
		}
		req.Header.Set("Authorization", "Bearer acme-reader")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkGraphQLError(t, fmt.Sprintf("10 MB body (announced %v)", announced), rec, 413, "PAYLOAD_TOO_LARGE",
			"the request body is larger than the limit of 1048576 bytes")
	}
	if l := logs.String(); strings.Contains(l, "level=ERROR") || strings.Contains(strings.ToLower(l), "panic") {
		t.Errorf("the log has errors:\n%s", l)
	}
}

func checkGraphQLError(t *testing.T, name string, rec *httptest.ResponseRecorder, status int, code, want string) {
	t.Helper()
	var r servertest.Response
	err := json.Unmarshal(rec.Body.Bytes(), &r)
	switch {
	case err != nil:
		t.Errorf("%s: %d, not JSON: %.300s", name, rec.Code, rec.Body)
	case rec.Code != status || len(r.Errors) != 1 || r.Code() != code ||
		r.Errors[0].Extensions["status"] != float64(status) || !strings.HasPrefix(r.Errors[0].Message, want):
		t.Errorf("%s: %d %.300s, want %d %s %q", name, rec.Code, rec.Body, status, code, want)
	case !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"):
		t.Errorf("%s: Content-Type %q", name, rec.Header().Get("Content-Type"))
	}
}

// FuzzGraphQLBody: any request body answers a GraphQL-shaped 2xx or 4xx
// (503 and 504 aside), never 5xx, and never panics (the handler runs in
// the fuzzer's goroutine).
func FuzzGraphQLBody(f *testing.F) {
	for _, b := range []string{
		`{"query": "{ vms { total } }"}`,
		`{"query": "query($s: [VmStatus!]) { vms(status: $s) { total } }", "variables": {"s": ["RUNNING", "RUNNING"]}}`,
		`{"query": "query Q { nodes { id } }", "operationName": "Q", "extensions": {}}`,
		`{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "00"}}}`,
		`{"query": "{ vms { total } }"`, `{"query": 5}`, `{"variables": []}`, `[{}]`, `{"a": 1, "a": 2}`, `{} {}`,
		`{"query": "{ nodes { ...F } } fragment F on Node { id ...F }"}`, "{\"query\": \"\xff\"}", `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	} {
		f.Add([]byte(b))
	}
	st := storetest.Open(f, store.SQLite)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(servertest.Base)); err != nil {
		f.Fatal(err)
	}
	h := httpapi.New(servertest.Wire(st, servertest.Options{}, httpapi.Config{}))
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := serve(h, http.MethodPost, "/graphql", body, nil)
		if rec.Code >= 500 && rec.Code != 503 && rec.Code != 504 {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body)
		}
		var r servertest.Response
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatalf("%q: %d, not JSON: %s", body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && r.Code() == "" {
			t.Fatalf("%q: %d without extensions.code: %s", body, rec.Code, rec.Body)
		}
	})
}

// TestValidationErrorsBounded: the OWASP cheat sheet's error verbosity.
// An answer lists at most 100 validation errors (a document of 120
// unknown fields within the limits), and with introspection off they
// carry no "Did you mean" suggestion, which would spell out the schema.
func TestValidationErrorsBounded(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	on := servertest.New(t, st, servertest.Base)
	q := "{ a: nodes { " + words("nope", 1) + " } b: nodes { x } }"
	var many strings.Builder
	many.WriteString("{")
	for _, root := range []string{"a", "b"} {
		fmt.Fprintf(&many, " %s: nodes {", root)
		for i := range 60 {
			fmt.Fprintf(&many, " %s%d", root, i)
		}
		many.WriteString(" }")
	}
	many.WriteString(" }")
	r := on.GraphQL("acme-reader", many.String(), nil)
	if r.Status != 400 || len(r.Errors) != 101 || r.Errors[100].Message != "too many validation errors: the first 100 are listed" || r.Code() != "BAD_REQUEST" {
		t.Errorf("120 unknown fields: %d, %d errors, last %+v", r.Status, len(r.Errors), r.Errors[len(r.Errors)-1])
	}
	if r := on.GraphQL("acme-reader", `{ nodes { nam } }`, nil); len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, `Did you mean "name"?`) {
		t.Errorf("introspection on: %+v, want a suggestion", r.Errors)
	}
	off := servertest.NewWithConfig(t, st, "", httpapi.Config{DisableIntrospection: true})
	for _, q := range []string{`{ nodes { nam } }`, `{ nodes { gpus } }`, q} {
		r := off.GraphQL("acme-reader", q, nil)
		for _, e := range r.Errors {
			if strings.Contains(e.Message, "Did you mean") || strings.Contains(e.Message, "name") && !strings.Contains(q, "name") {
				t.Errorf("introspection off, %s: %q names the schema", q, e.Message)
			}
		}
		if r.Status != 400 || len(r.Errors) == 0 {
			t.Errorf("introspection off, %s: %d %+v", q, r.Status, r.Errors)
		}
	}
}
