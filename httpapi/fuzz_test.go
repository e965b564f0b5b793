package httpapi_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"gpugraph/httpapi/servertest"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

func fuzzEnv(f *testing.F) *servertest.Env {
	st := storetest.Open(f, store.SQLite)
	return servertest.New(f, st, servertest.Base)
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
