package httpapi_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"gpugraph/demo"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// TestCompressionNegotiation: JSON and CSV answers of both faces are
// gzipped for a client that accepts gzip (q-values read), identical once
// decompressed, and sent as they are otherwise; every answer says Vary.
func TestCompressionNegotiation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		fixture, err := demo.JSON(goldenNow)
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.New(t, st, string(fixture))
		client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
		const train = "/api/v1/workloads/abac6a90-5b54-5000-9b14-72baefd89601/pods/1fc3994a-2eb2-559c-a87e-c91b75f73ea0/metrics"
		get := func(method, path, body, accept string) (*http.Response, string) {
			req, _ := http.NewRequest(method, env.Srv.URL+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer acme-operator")
			req.Header.Set("X-Request-Id", "compress")
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if accept != "" {
				req.Header.Set("Accept-Encoding", accept)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var r io.Reader = resp.Body
			if resp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				r = zr
			}
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			return resp, string(b)
		}
		for _, tc := range []struct{ name, method, path, body string }{
			{"graphql", "POST", "/graphql", `{"query":"{ pods(limit: 200) { pods { id name nodeName } } }"}`},
			{"runai json", "GET", "/api/v1/workloads/pods?limit=200&verbosity=full", ""},
			{"runai csv", "GET", train + "?metricType=GPU_UTILIZATION_PER_GPU&numberOfSamples=100&start=2025-12-31T00:00:00Z&end=2026-01-01T00:00:00Z&format=csv", ""},
			{"openrelay", "GET", "/v1/vms?limit=100", ""},
		} {
			_, plain := get(tc.method, tc.path, tc.body, "")
			if len(plain) < 1024 {
				t.Fatalf("%s: answer of %d bytes is too small to test compression: %s", tc.name, len(plain), plain)
			}
			for _, accept := range []string{"gzip", "br;q=1, gzip;q=0.5", "*"} {
				resp, body := get(tc.method, tc.path, tc.body, accept)
				if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" || body != plain {
					t.Errorf("%s, Accept-Encoding %q: %d encoding %q Vary %q, same body %v", tc.name, accept, resp.StatusCode,
						resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"), body == plain)
				}
			}
			for _, accept := range []string{"", "identity", "gzip;q=0", "br"} {
				resp, body := get(tc.method, tc.path, tc.body, accept)
				if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Vary") != "Accept-Encoding" || body != plain {
					t.Errorf("%s, Accept-Encoding %q: encoding %q Vary %q", tc.name, accept, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
				}
			}
		}
		// A small answer is not worth it.
		resp, body := get("GET", "/api/v1/workloads/pods/count", "", "gzip")
		if resp.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(body, `{"count":`) {
			t.Errorf("count: encoding %q %s", resp.Header.Get("Content-Encoding"), body)
		}
	})
}
