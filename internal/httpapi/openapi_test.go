package httpapi_test

import (
	"bytes"
	"mime"
	"net/http"
	"slices"
	"strings"
	"testing"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/rest/openapi"
	"gpugraph/internal/httpapi/rest/openapitest"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// TestOpenAPIServed: GET /openapi.json answers the document as JSON, with
// no key, and kin-openapi's loader finds it valid OpenAPI 3.
func TestOpenAPIServed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		resp := env.Request(http.MethodGet, "/openapi.json", "", nil, nil)
		defer resp.Body.Close()
		var body bytes.Buffer
		if _, err := body.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body.Bytes())
		}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
			t.Errorf("Content-Type %q, want application/json", resp.Header.Get("Content-Type"))
		}
		if !bytes.Equal(body.Bytes(), openapi.Document()) {
			t.Error("the answer is not the document")
		}
		doc, err := openapitest.Load()
		if err != nil {
			t.Fatal(err)
		}
		if doc.Paths.Find("/api/v1/workloads/pods") == nil || doc.Paths.Find("/v1/vms/{id}/restart") == nil {
			t.Error("the document lacks Run:ai's or OpenRelay's paths")
		}
	})
}

// TestOpenAPIRoutes holds the document equal to the server's routes: every
// pattern the mux serves is an operation of the document (or undocumented
// by design: openapitest.UndocumentedPatterns), every operation is served,
// and a path defined ahead of its handler is not served yet.
func TestOpenAPIRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		doc, err := openapitest.Load()
		if err != nil {
			t.Fatal(err)
		}
		documented := map[string]bool{} // "GET /v1/vms"
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				documented[method+" "+path] = true
			}
		}
		served := map[string]bool{}
		for _, pattern := range httpapi.Patterns(servertest.Wire(st, servertest.Options{}, httpapi.Config{})) {
			if slices.Contains(openapitest.UndocumentedPatterns, pattern) {
				continue
			}
			method, path, ok := strings.Cut(pattern, " ")
			if !ok {
				t.Errorf("pattern %q serves every method: give it one, or list it in openapitest.UndocumentedPatterns", pattern)
				continue
			}
			served[pattern] = true
			if !documented[pattern] {
				t.Errorf("%s %s is served but not in the document (internal/httpapi/rest/openapi/gpugraph.json)", method, path)
			}
		}
		for op := range documented {
			if _, path, _ := strings.Cut(op, " "); slices.Contains(openapitest.UndocumentedPatterns, path) {
				continue // /graphql: its transports are documented, its patterns are not per method
			}
			if !served[op] {
				t.Errorf("%s is in the document but not served", op)
			}
		}
		for _, path := range openapi.Reserved() {
			for op := range served {
				if strings.HasSuffix(op, " "+path) {
					t.Errorf("%s is served now: drop its %s mark in internal/httpapi/rest/openapi/gpugraph.json so the document lists it", op, openapi.ReservedMark)
				}
			}
		}
	})
}
