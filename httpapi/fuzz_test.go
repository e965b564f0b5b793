package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"gpugraph/dataset"
	"gpugraph/httpapi"
	"gpugraph/httpapi/servertest"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// fuzzServer serves the base fixture on SQLite (servertest's Env reports
// through the *testing.F, which a fuzz target may not call).
type fuzzServer struct{ url string }

func fuzzEnv(f *testing.F) *fuzzServer {
	st := storetest.Open(f, store.SQLite)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(servertest.Base)); err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st}))
	f.Cleanup(srv.Close)
	return &fuzzServer{url: srv.URL}
}

func (s *fuzzServer) Do(method, path, token string, body []byte, _ http.Header) (int, []byte) {
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error()) // a URL the client cannot send: not the server's
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// FuzzGraphQL: any query text answers within the budget and never 500.
func FuzzGraphQL(f *testing.F) {
	for _, q := range []string{
		`{ vms(limit: 5) { total vms { name node { name gpus { index } } } } }`,
		`{ nodes { gpus { node { gpus { node { id } } } } } }`,
		`query Q { pods(filterBy: ["name==a"], search: "x", limit: 2) { total pods { name } } }`,
		`mutation { restartVm(id: "x") { id } }`,
		`{ a: vms { total } b: vms { total } }`,
		`fragment F on Node { id ...F } { nodes { ...F } }`,
		`{ podsCount(filterBy: ["createdAt>=2025-01-01T00:00:00Z"]) }`,
		"{ vm(id: \"\x00\xff\") { id } }",
	} {
		f.Add(q)
	}
	env := fuzzEnv(f)
	f.Fuzz(func(t *testing.T, q string) {
		body, _ := json.Marshal(map[string]any{"query": q})
		start := time.Now()
		status, resp := env.Do("POST", "/graphql", "acme-operator", body, nil)
		if status >= 500 && status != 503 && status != 504 {
			t.Fatalf("%q: %d %s", q, status, resp)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("%q took %v", q, d)
		}
	})
}

// FuzzRESTParams: every REST parameter parser (filterBy, sortBy, search,
// offset, limit, deleted, completed, verbosity, metric ranges, path ids)
// answers 2xx or 4xx, never 5xx.
func FuzzRESTParams(f *testing.F) {
	for _, s := range [][2]string{
		{"filterBy", "name==a"}, {"filterBy", "createdAt>=2025-01-01T00:00:00Z,name=@x"},
		{"sortBy", "name"}, {"search", "é"}, {"offset", "2147483648"}, {"limit", "0"},
		{"deleted", "maybe"}, {"completed", "all"}, {"verbosity", "full"},
		{"metricType", "CPU_USAGE_CORES"}, {"start", "0000-01-01T00:00:00Z"}, {"numberOfSamples", "-1"},
		{"id", "\x00"}, {"workloadId", "\xff"},
	} {
		f.Add(s[0], s[1])
	}
	env := fuzzEnv(f)
	f.Fuzz(func(t *testing.T, name, value string) {
		q := url.Values{name: {value}}.Encode()
		esc := url.PathEscape(value)
		for _, path := range []string{
			"/api/v1/workloads/pods?" + q,
			"/api/v1/workloads/pods/count?" + q,
			"/api/v1/workloads/" + esc + "/pods?" + q,
			"/api/v1/workloads/inferences/revisions/" + esc + "/pods?" + q,
			"/api/v1/workloads/w/pods/" + esc + "/metrics?metricType=CPU_USAGE_CORES&start=2025-01-01T00:00:00Z&end=2025-01-02T00:00:00Z&" + q,
		} {
			status, resp := env.Do("GET", path, "acme-workloads", nil, nil)
			if status >= 500 && status != 503 && status != 504 {
				t.Fatalf("GET %s: %d %s", path, status, resp)
			}
		}
		status, resp := env.Do("POST", "/v1/vms/"+esc+"/restart?"+q, "acme-operator", nil, nil)
		if status >= 500 && status != 503 {
			t.Fatalf("restart %q: %d %s", value, status, resp)
		}
	})
}
