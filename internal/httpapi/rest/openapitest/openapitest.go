// Package openapitest checks REST exchanges against the document
// GET /openapi.json serves (package internal/httpapi/rest/openapi), so the document cannot
// drift from the server: CheckExchange validates a request and its answer
// with kin-openapi's openapi3filter (route, method, parameters, body,
// status listed for the operation, content type, headers, body schema),
// then the body again with the strict reading below.
//
// The document is OpenAPI 3.0, whose schemas are JSON Schema with a twist:
// "nullable: true" allows null. kin-openapi accepts null for any nullable
// schema, a nullable enum included. The strict layer here compiles the
// document to JSON Schema 2020-12 instead: every nullable schema's type T
// becomes [T, "null"], and an enum is left as it is: OpenAPI 3.0.3 says
// nullable does not widen an enum, so a nullable enum takes null only
// when it lists null. That is the strictest reading clients use
// (openapi-schema-validator's OAS30Validator and the code generators that
// follow it), so an answer valid here is valid for all of them. Formats
// (uuid, date-time) are asserted, not just annotated; kin-openapi checks
// date-time but not uuid.
package openapitest

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"gpugraph/internal/httpapi/rest/openapi"
)

// docURL is the document's name in the compiler; refs inside it resolve against it.
const docURL = "openapi.json"

// Validate fails t unless body is JSON that validates against schemaRef in
// the document. schemaRef is a component schema's name ("Pods1"), a JSON
// pointer into the document, "#/components/schemas/Pods1", or an operation's response as
// "METHOD PATH STATUS" with the path as the document spells it,
// "GET /api/v1/workloads/{workloadId}/pods 200", meaning that response's
// application/json schema ("default" when the status is not listed).
func Validate(t testing.TB, schemaRef string, body []byte) {
	t.Helper()
	sch, err := schema(schemaRef)
	if err != nil {
		t.Fatalf("openapitest: %s: %v", schemaRef, err)
		return
	}
	if err := validate(sch, schemaRef, body); err != nil {
		t.Errorf("%v", err)
	}
}

// Check is Validate answering an error instead of failing a test.
func Check(schemaRef string, body []byte) error {
	sch, err := schema(schemaRef)
	if err != nil {
		return fmt.Errorf("openapitest: %s: %w", schemaRef, err)
	}
	return validate(sch, schemaRef, body)
}

func validate(sch *jsonschema.Schema, schemaRef string, body []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openapitest: %s: body is not JSON: %v\n%s", schemaRef, err, clip(body))
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("openapitest: body does not validate against %s:\n%v\nbody: %s", schemaRef, err, clip(body))
	}
	return nil
}

var (
	loadOnce sync.Once
	raw      map[string]any // the document as written, to resolve operations
	compiler *jsonschema.Compiler
	loadErr  error

	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

func load() {
	document := openapi.Document()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(document))
	if err != nil {
		loadErr = fmt.Errorf("read the OpenAPI document: %w", err)
		return
	}
	raw = doc.(map[string]any)
	translated, err := jsonschema.UnmarshalJSON(bytes.NewReader(document))
	if err != nil {
		loadErr = err
		return
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, fromOpenAPI(translated)); err != nil {
		loadErr = err
		return
	}
	compiler = c
}

// schema compiles (once) the schema schemaRef names.
func schema(schemaRef string) (*jsonschema.Schema, error) {
	loadOnce.Do(load)
	if loadErr != nil {
		return nil, loadErr
	}
	ptr := schemaRef
	if !strings.ContainsAny(schemaRef, "# ") {
		// A bare name is a component schema: "MetricsCompositeResponse".
		ptr = "#/components/schemas/" + schemaRef
	} else if !strings.HasPrefix(schemaRef, "#") {
		var err error
		if ptr, err = responsePointer(schemaRef); err != nil {
			return nil, err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[ptr]; ok {
		return s, nil
	}
	s, err := compiler.Compile(docURL + ptr)
	if err != nil {
		return nil, err
	}
	compiled[ptr] = s
	return s, nil
}

// responsePointer finds the JSON pointer of the application/json schema of
// "METHOD PATH STATUS", following a response's $ref.
func responsePointer(ref string) (string, error) {
	f := strings.Fields(ref)
	if len(f) != 3 {
		return "", fmt.Errorf(`want "#/json/pointer" or "METHOD PATH STATUS"`)
	}
	method, path, status := strings.ToLower(f[0]), f[1], f[2]
	if _, err := strconv.Atoi(status); err != nil || http.StatusText(atoi(status)) == "" {
		return "", fmt.Errorf("status %q is not an HTTP status", status)
	}
	op, ok := get(raw, "paths", path, method).(map[string]any)
	if !ok {
		return "", fmt.Errorf("the document has no %s %s", f[0], path)
	}
	responses, _ := op["responses"].(map[string]any)
	ptr := "#/paths/" + escape(path) + "/" + method + "/responses/" + status
	resp, ok := responses[status].(map[string]any)
	if !ok {
		if resp, ok = responses["default"].(map[string]any); !ok {
			return "", fmt.Errorf("%s %s lists no %s response and no default", f[0], path, status)
		}
		ptr = "#/paths/" + escape(path) + "/" + method + "/responses/default"
	}
	if r, ok := resp["$ref"].(string); ok {
		name, found := strings.CutPrefix(r, "#/components/responses/")
		if !found {
			return "", fmt.Errorf("response $ref %q is not under #/components/responses", r)
		}
		resp, _ = get(raw, "components", "responses", name).(map[string]any)
		ptr = r
	}
	if get(resp, "content", "application/json", "schema") == nil {
		return "", fmt.Errorf("the %s response of %s %s has no application/json schema", status, f[0], path)
	}
	return ptr + "/content/application~1json/schema", nil
}

// fromOpenAPI rewrites OpenAPI 3.0 nullable schemas to JSON Schema, in place.
func fromOpenAPI(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			x[k] = fromOpenAPI(sub)
		}
		nullable, isBool := x["nullable"].(bool)
		if !isBool {
			return x
		}
		delete(x, "nullable")
		if !nullable {
			return x
		}
		// An enum is not widened: null passes only when the enum lists it.
		switch t := x["type"].(type) {
		case string:
			x["type"] = []any{t, "null"}
			return x
		case []any:
			x["type"] = append(t, "null")
			return x
		}
		// No type to widen (a $ref or an allOf): null or the schema.
		return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, x}}
	case []any:
		for i, sub := range x {
			x[i] = fromOpenAPI(sub)
		}
	}
	return v
}

func get(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// escape writes s as one JSON pointer token.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func clip(b []byte) string {
	if len(b) > 4000 {
		return string(b[:4000]) + "…"
	}
	return string(b)
}
