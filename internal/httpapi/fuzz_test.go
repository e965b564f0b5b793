package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// fuzzServer serves the base fixture on SQLite (servertest's Env reports
// through the *testing.F, which a fuzz target may not call).
type fuzzServer struct {
	url string
	st  *store.Store
}

func fuzzEnv(f *testing.F) *fuzzServer {
	st := storetest.Open(f, store.SQLite)
	if _, err := dataset.LoadFile(context.Background(), st, []byte(servertest.Base)); err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(servertest.Wire(st, servertest.Options{}, httpapi.Config{})))
	f.Cleanup(srv.Close)
	return &fuzzServer{url: srv.URL, st: st}
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

// FuzzCreateBody: any body of POST /v1/vms is created (201, pending or
// deploying, with its Location) or refused with a 4xx (or 503 for "queue":
// false) that carries an error code, never 5xx, and a refusal leaves no
// row behind.
func FuzzCreateBody(f *testing.F) {
	for _, b := range []string{
		`{"name": "a", "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 4, "ramGb": 16, "diskSizeGb": 50}`,
		`{"name": "p", "capabilityTier": "pod", "gpuModelId": "h100-80gb", "gpuCount": 1, "imageUrl": "nvcr.io/x:1", "volumeGb": 20}`,
		`{"name": "t", "instanceType": "gpu_8x_h100_sxm5", "queue": false}`,
		`{"name": "t", "instanceType": "gpu_1x_h100_sxm5", "gpuCount": 2}`,
		`{"name": "q", "instanceType": "gpu_4x_mi300x", "priority": 1001, "clusterId": "nope", "nodePool": ""}`,
		`{"name": "x", "gpuModelId": "h100-80gb", "gpuCount": 65, "cpuCores": -1, "ramGb": 1e9, "diskSizeGb": 0.5}`,
		`{"name": "é\u0000", "gpuModelId": "\ud800", "public": "yes"}`,
		`{"name": "a", "name": "b", "unknown": 1}`,
		`{"name": "a", "capabilityTier": "vm"}`,
		`[]`, `null`, `{`, ``, `{"name": "a"} {}`,
	} {
		f.Add(b)
	}
	env := fuzzEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		before := storetest.Count(t, env.st, "vms", "")
		req, err := http.NewRequest("POST", env.url+"/v1/vms", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer acme-operator")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var answer struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Error  *struct{ Code, Message string }
		}
		if err := json.Unmarshal(b, &answer); err != nil {
			t.Fatalf("%q: %d, not JSON: %s", body, resp.StatusCode, b)
		}
		after := storetest.Count(t, env.st, "vms", "")
		switch s := resp.StatusCode; {
		case s == http.StatusCreated:
			if (answer.Status != "pending" && answer.Status != "deploying") || resp.Header.Get("Location") != "/v1/vms/"+answer.ID {
				t.Fatalf("%q: 201 %s, Location %q", body, b, resp.Header.Get("Location"))
			}
			if after != before+1 {
				t.Fatalf("%q: 201 with %d rows more", body, after-before)
			}
		case s >= 400 && s < 500 || s == http.StatusServiceUnavailable:
			if answer.Error == nil || answer.Error.Code == "" || answer.Error.Message == "" {
				t.Fatalf("%q: %d without an error code and message: %s", body, s, b)
			}
			if after != before {
				t.Fatalf("%q: %d left %d rows behind", body, s, after-before)
			}
		default:
			t.Fatalf("%q: %d %s", body, s, b)
		}
	})
}
