// Package openapi is the OpenAPI 3 document of every REST path gpugraph
// serves, as GET /openapi.json answers it.
//
// It is built from two sources kept beside this file: Run:ai's own
// document of the pods endpoints (runai-pods-openapi.json, unchanged, so
// its response schemas are exactly what Run:ai's clients are generated
// from) and gpugraph.json, which holds everything else and overlays the
// Run:ai operations with what gpugraph answers and accepts beyond them.
// The overlay is a JSON merge patch (RFC 7386), gpugraph.json winning: it adds
// statuses (400, 429, 504) and widens parameters (sortBy name, filterBy
// projectId), and never touches a Run:ai schema or response (a test holds
// that). A path item marked x-gpugraph-reserved is defined ahead of its
// handler and left out of the served document until the mark is dropped.
//
// internal/httpapi/rest/openapitest validates every REST answer of the test suite against
// this document, and a test holds it equal to the server's routes.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
)

//go:embed runai-pods-openapi.json
var runaiSource []byte

//go:embed gpugraph.json
var gpugraphSource []byte

// ReservedMark marks a path item of gpugraph.json that is defined ahead of
// its handler.
const ReservedMark = "x-gpugraph-reserved"

var (
	once    sync.Once
	doc     []byte
	reserve []string
)

func build() {
	d, r, err := merge(runaiSource, gpugraphSource)
	if err != nil {
		// Both sources are embedded and the package's tests build them:
		// this is a broken commit, not a runtime condition.
		panic(fmt.Sprintf("openapi: %v", err))
	}
	doc, reserve = d, r
}

// Document is the served document, as JSON.
func Document() []byte {
	once.Do(build)
	return doc
}

// Reserved are the paths gpugraph.json defines ahead of their handlers,
// left out of Document.
func Reserved() []string {
	once.Do(build)
	return reserve
}

// RunaiReference is Run:ai's document of the pods endpoints, as kept.
func RunaiReference() []byte { return runaiSource }

// Handler serves Document.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Document())
	})
}

// merge lays own over runai: paths and components merge by name, object
// by object; everything else at the top is own's.
func merge(runaiJSON, ownJSON []byte) ([]byte, []string, error) {
	var runai, own map[string]any
	if err := json.Unmarshal(runaiJSON, &runai); err != nil {
		return nil, nil, fmt.Errorf("runai-pods-openapi.json: %w", err)
	}
	if err := json.Unmarshal(ownJSON, &own); err != nil {
		return nil, nil, fmt.Errorf("gpugraph.json: %w", err)
	}
	out := map[string]any{}
	for k, v := range own {
		if k != "paths" && k != "components" {
			out[k] = v
		}
	}
	paths := object(runai["paths"])
	var reserved []string
	for p, item := range object(own["paths"]) {
		if _, ok := object(item)[ReservedMark]; ok {
			reserved = append(reserved, p)
			continue
		}
		paths[p] = overlay(paths[p], item)
	}
	slices.Sort(reserved)
	out["paths"] = paths
	components := object(runai["components"])
	for section, named := range object(own["components"]) {
		into := object(components[section])
		for name, v := range object(named) {
			into[name] = overlay(into[name], v)
		}
		components[section] = into
	}
	out["components"] = components

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // descriptions say <API key>; this is not HTML
	if err := enc.Encode(out); err != nil {
		return nil, nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), reserved, nil
}

// overlay lays src over dst as a JSON merge patch (RFC 7386): objects
// merge key by key, null removes a key, anything else is src.
func overlay(dst, src any) any {
	s, ok := src.(map[string]any)
	if !ok {
		return src
	}
	d, ok := dst.(map[string]any)
	if !ok {
		d = map[string]any{}
	}
	for k, v := range s {
		if v == nil {
			delete(d, k)
			continue
		}
		d[k] = overlay(d[k], v)
	}
	return d
}

func object(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}
