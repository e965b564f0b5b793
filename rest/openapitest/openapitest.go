// Package openapitest checks REST answers against the Run:ai OpenAPI
// document the Pods API is specified by (testdata/runai-pods-openapi.json,
// a verbatim copy of the reference). Tests of any REST path call
// Validate(t, "MetricsCompositeResponse", body), Validate(t, "Pods1", body)…
//
// The document is OpenAPI 3.0, whose schema dialect is not JSON Schema: the
// schemas are translated before they are compiled as JSON Schema 2020-12.
//   - `nullable: true` becomes `type: [T, "null"]` (and, without a type,
//     `anyOf: [schema, {type: null}]`); an enum gains null.
//   - boolean `exclusiveMinimum`/`exclusiveMaximum` (draft 4 style) become
//     the numeric form.
//
// Formats are asserted (date-time must be RFC 3339); formats JSON Schema
// does not define (int32, double) are ignored, as the OpenAPI allows.
package openapitest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/runai-pods-openapi.json
var document []byte

var (
	compileOnce sync.Once
	compiler    *jsonschema.Compiler
	compileErr  error
	mu          sync.Mutex
	compiled    = map[string]*jsonschema.Schema{}
)

// docURL is where the translated document lives in the compiler.
const docURL = "mem://runai-pods-openapi.json"

// Validate fails t unless body is a JSON document valid against
// #/components/schemas/<schemaName> of the OpenAPI document.
func Validate(t testing.TB, schemaName string, body []byte) {
	t.Helper()
	if err := Check(schemaName, body); err != nil {
		t.Errorf("%v\nbody: %s", err, truncate(body, 2000))
	}
}

// Check is Validate's verdict as an error.
func Check(schemaName string, body []byte) error {
	sch, err := schema(schemaName)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("does not validate against %s: %v", schemaName, err)
	}
	return nil
}

func schema(name string) (*jsonschema.Schema, error) {
	compileOnce.Do(func() { compiler, compileErr = newCompiler() })
	if compileErr != nil {
		return nil, compileErr
	}
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[name]; ok {
		return s, nil
	}
	s, err := compiler.Compile(docURL + "#/components/schemas/" + name)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", name, err)
	}
	compiled[name] = s
	return s, nil
}

func newCompiler() (*jsonschema.Compiler, error) {
	var doc map[string]any
	if err := json.Unmarshal(document, &doc); err != nil {
		return nil, fmt.Errorf("OpenAPI document: %w", err)
	}
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	if schemas == nil {
		return nil, fmt.Errorf("OpenAPI document has no components.schemas")
	}
	for name, s := range schemas {
		schemas[name] = Translate(s)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	err := c.AddResource(docURL, map[string]any{
		"$schema":    "https://json-schema.org/draft/2020-12/schema",
		"components": map[string]any{"schemas": schemas},
	})
	return c, err
}

// Translate turns an OpenAPI 3.0 schema object into JSON Schema, in place
// where it can, and answers the result. It follows the keywords that hold
// schemas; examples, enums and defaults are data and are left alone.
func Translate(v any) any {
	x, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, sub := range x {
		switch k {
		case "properties", "patternProperties":
			if m, ok := sub.(map[string]any); ok {
				for name, s := range m {
					m[name] = Translate(s)
				}
			}
		case "items", "additionalProperties", "not":
			x[k] = Translate(sub)
		case "allOf", "anyOf", "oneOf":
			if l, ok := sub.([]any); ok {
				for i, s := range l {
					l[i] = Translate(s)
				}
			}
		}
	}
	for ex, lim := range map[string]string{"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"} {
		if b, ok := x[ex].(bool); ok {
			delete(x, ex)
			if b && x[lim] != nil {
				x[ex] = x[lim]
				delete(x, lim)
			}
		}
	}
	nullable, _ := x["nullable"].(bool)
	delete(x, "nullable")
	if !nullable {
		return x
	}
	if enum, ok := x["enum"].([]any); ok {
		x["enum"] = append(enum, nil)
	}
	if t, ok := x["type"].(string); ok {
		x["type"] = []any{t, "null"}
		return x
	}
	return map[string]any{"anyOf": []any{x, map[string]any{"type": "null"}}}
}

func truncate(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:n:n], "…"...)
}
