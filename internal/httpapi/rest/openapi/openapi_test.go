package openapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"gpugraph/models"
)

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// validate loads b with kin-openapi and validates it as OpenAPI 3. Run:ai's
// own examples break their schemas ("0B" against the quantity pattern), so
// examples are not validated; the schemas are what answers are held to.
func validate(t *testing.T, b []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(b)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(loader.Context, openapi3.DisableExamplesValidation()); err != nil {
		t.Fatalf("not valid OpenAPI 3: %v", err)
	}
	return doc
}

func TestDocumentIsValidOpenAPI3(t *testing.T) {
	doc := validate(t, Document())
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q, want 3.0.3 (Run:ai's document is 3.0.3; nullable means what it says there)", doc.OpenAPI)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			}
		}
	}
}

// keeps reports whether got holds all of want: objects may gain keys (a
// 207 that also answers CSV), nothing else may change.
func keeps(got, want any) bool {
	w, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(got, want)
	}
	g, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range w {
		if !keeps(g[k], v) {
			return false
		}
	}
	return true
}

// TestRunaiKeptAsRunaiHasIt holds the overlay to adding: every response
// Run:ai's document lists for its operations (a media type may be added),
// and every schema and response
// component it has, is in the served document unchanged; parameters are
// kept (they may gain allowEmptyValue), and sortBy and filterBy, whose
// schemas gpugraph widens, keep every value Run:ai's allow; verbosity,
// start and end are widened to what runapy sends (below).
func TestRunaiKeptAsRunaiHasIt(t *testing.T) {
	runai, served := decode(t, RunaiReference()), decode(t, Document())
	for path, item := range object(runai["paths"]) {
		for method, op := range object(item) {
			got := object(object(object(served["paths"])[path])[method])
			if len(got) == 0 {
				t.Errorf("%s %s: missing", method, path)
				continue
			}
			for status, resp := range object(object(op)["responses"]) {
				if g := object(got["responses"])[status]; !keeps(g, resp) {
					t.Errorf("%s %s %s: the response changed:\n got %v\nwant %v", method, path, status, g, resp)
				}
			}
			for _, p := range object(op)["parameters"].([]any) {
				if !slices.ContainsFunc(got["parameters"].([]any), func(g any) bool { return reflect.DeepEqual(g, p) }) {
					t.Errorf("%s %s: parameter %v is gone", method, path, p)
				}
			}
		}
	}
	for _, section := range []string{"schemas", "responses", "securitySchemes"} {
		for name, v := range object(object(runai["components"])[section]) {
			if g := object(object(served["components"])[section])[name]; !reflect.DeepEqual(g, v) {
				t.Errorf("components.%s.%s changed", section, name)
			}
		}
	}
	sortBy := func(doc map[string]any) []any {
		return object(object(object(object(doc["components"])["parameters"])["PodsSort"])["schema"])["enum"].([]any)
	}
	for _, v := range sortBy(runai) {
		if !slices.Contains(sortBy(served), v) {
			t.Errorf("sortBy no longer takes %v", v)
		}
	}
	// verbosity takes Run:ai's PodVerbosity and its qualified names
	// (PodVerbosity.FULL); start and end take a date-time without a zone,
	// so their pattern, which says so, stands for format date-time.
	params := object(object(served["components"])["parameters"])
	verbosity := object(params["PodsQueryVerbosity"])["schema"]
	if want := map[string]any{"default": "brief", "anyOf": []any{
		map[string]any{"$ref": "#/components/schemas/PodVerbosity"},
		map[string]any{"type": "string", "enum": []any{"PodVerbosity.BRIEF", "PodVerbosity.FULL"},
			"description": "PodVerbosity's members by their qualified names, as Python's str() writes them: read as brief and full."},
	}}; !reflect.DeepEqual(verbosity, want) {
		t.Errorf("verbosity's schema %v, want %v", verbosity, want)
	}
	for _, name := range []string{"StartRequired", "EndRequired"} {
		want := map[string]any{"type": "string", "pattern": models.DateTimePattern, "example": object(object(object(runai["components"])["parameters"])[name])["schema"].(map[string]any)["example"]}
		if got := object(params[name])["schema"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s's schema %v, want %v", name, got, want)
		}
	}
	widened := map[string]bool{"PodsSort": true, "PodsFilter": true, "PodsQueryVerbosity": true, "StartRequired": true, "EndRequired": true}
	for name, v := range object(object(runai["components"])["parameters"]) {
		g := object(object(object(served["components"])["parameters"])[name])
		if widened[name] {
			delete(object(v), "schema")
			delete(object(v), "description")
		}
		if !keeps(g, v) {
			t.Errorf("components.parameters.%s changed", name)
		}
	}
}

// TestTokenPath: nothing is reserved any more (the mark stays for paths
// defined ahead of their handlers), and the token path is served open to
// callers without a key, taking both of Run:ai's spellings. A request
// missing a field is the server's 400, naming it, so the schema does not
// require one pair or the other (field names match case-insensitively).
func TestTokenPath(t *testing.T) {
	if got := Reserved(); len(got) != 0 {
		t.Errorf("reserved %v, want none", got)
	}
	doc := validate(t, Document())
	op := doc.Paths.Find("/api/v1/token").Post
	if op == nil || op.Security == nil || len(*op.Security) != 0 {
		t.Fatalf("POST /api/v1/token: want an operation open to callers without a key, got %+v", op)
	}
	body := op.RequestBody.Value.Content.Get("application/json").Schema.Value
	for _, valid := range []string{
		`{"grantType": "client_credentials", "clientId": "app", "clientSecret": "s"}`,
		`{"grantType": "app_token", "AppId": "app", "AppSecret": "s"}`,
	} {
		if err := body.VisitJSON(decodeAny(t, valid)); err != nil {
			t.Errorf("%s refused: %v", valid, err)
		}
	}
	answer := op.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	if err := answer.VisitJSON(decodeAny(t, `{"accessToken": "eyJ…", "expiresIn": 3600}`)); err != nil {
		t.Errorf("the token answer is refused: %v", err)
	}
}

func decodeAny(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOverlay(t *testing.T) {
	dst := decodeAny(t, `{"a": {"b": 1, "c": [1, 2]}, "d": "x"}`)
	src := decodeAny(t, `{"a": {"b": null, "c": [3], "e": true}, "d": {"f": 1}, "g": {"h": null}}`)
	want := decodeAny(t, `{"a": {"c": [3], "e": true}, "d": {"f": 1}, "g": {}}`)
	if got := overlay(dst, src); !reflect.DeepEqual(got, want) {
		t.Errorf("overlay = %v, want %v", got, want)
	}
}
