package openapitest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestEverySchemaCompiles(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(document, &doc); err != nil {
		t.Fatal(err)
	}
	for name := range doc.Components.Schemas {
		if _, err := schema(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestMetricsCompositeResponse(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"measurements": []}`, true},
		{`{"measurements": [], "histogram": null}`, true},
		{`{"measurements": [{"type": "GPU_UTILIZATION", "labels": null, "values": null}]}`, true},
		{`{"measurements": [{"type": "GPU_UTILIZATION_PER_GPU", "labels": {"gpu": "0"},
		   "values": [{"value": "85", "timestamp": "2024-12-20T14:30:00Z"}]}], "details": "extra keys are allowed"}`, true},
		{`{"measurements": [], "histogram": [{"type": "NIM_TIME_TO_FIRST_TOKEN_SECONDS",
		   "values": [{"timestamp": "2024-12-20T14:30:00.5Z", "data": {"0.1": "3", "+Inf": "4"}}]}]}`, true},
		{`{}`, false},
		{`{"measurements": [{"type": "X", "values": [{"value": 85, "timestamp": "2024-12-20T14:30:00Z"}]}]}`, false},
		{`{"measurements": [{"type": "X", "values": [{"value": "85", "timestamp": "2024-12-20 14:30:00"}]}]}`, false},
		{`{"measurements": [{"type": "X", "labels": {"gpu": 0}, "values": []}]}`, false},
		{`{"measurements": [], "histogram": [{"type": "X", "values": [{"timestamp": "2024-12-20T14:30:00Z", "data": {"+Inf": 4}}]}]}`, false},
	} {
		err := Check("MetricsCompositeResponse", []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s: valid = %v, want %v (%v)", strings.Join(strings.Fields(tc.body), " "), err == nil, tc.ok, err)
		}
	}
}

// The document's own example of a metrics answer is valid.
func TestMetricsExample(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				MetricsCompositeResponse struct {
					Example json.RawMessage `json:"example"`
				}
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(document, &doc); err != nil {
		t.Fatal(err)
	}
	Validate(t, "MetricsCompositeResponse", doc.Components.Schemas.MetricsCompositeResponse.Example)
}

func TestTranslate(t *testing.T) {
	in := map[string]any{
		"type": "object", "nullable": true,
		"properties": map[string]any{
			"n":       map[string]any{"type": "integer", "minimum": 0.0, "exclusiveMinimum": true},
			"kind":    map[string]any{"type": "string", "enum": []any{"a"}, "nullable": true},
			"example": map[string]any{"$ref": "#/x", "nullable": true},
		},
	}
	want := map[string]any{
		"type": []any{"object", "null"},
		"properties": map[string]any{
			"n":       map[string]any{"type": "integer", "exclusiveMinimum": 0.0},
			"kind":    map[string]any{"type": []any{"string", "null"}, "enum": []any{"a", nil}},
			"example": map[string]any{"anyOf": []any{map[string]any{"$ref": "#/x"}, map[string]any{"type": "null"}}},
		},
	}
	if got := Translate(in); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}
