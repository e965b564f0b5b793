package transport

import (
	"bytes"
	"fmt"
	"maps"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// membersApart splits a JSON object into its members' raw values in a
// pass of its own: how the body was split before scanJSON split it while
// checking it, the reference the split is held to.
func membersApart(body []byte) (map[string]jsontext.Value, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("not an object")
	}
	out := map[string]jsontext.Value{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		from := dec.InputOffset()
		if _, err := dec.ReadValue(); err != nil {
			return nil, err
		}
		out[name] = bytes.TrimLeft(body[from:dec.InputOffset()], " \t\r\n:")
	}
	return out, nil
}

func checkSplit(t *testing.T, body []byte) {
	t.Helper()
	got, e := scanJSON("the body", body, true)
	if e != nil || jsonKind(body) != "an object" {
		if e == nil && len(got) > 0 {
			t.Fatalf("%q is %s, split into %v", body, jsonKind(body), got)
		}
		return
	}
	want, err := membersApart(body)
	if err != nil {
		t.Fatalf("%q passed the check, but splitting it apart failed: %v", body, err)
	}
	if !maps.EqualFunc(got, want, func(a, b jsontext.Value) bool { return bytes.Equal(a, b) }) {
		t.Fatalf("%q: split into %q, want %q", body, got, want)
	}
}

var splitSeeds = []string{
	`{}`, ` { } `, `{"query": "{ vms { total } }"}`,
	`{"query":"q","operationName":null,"variables":{"a":[1,{"b":"}"}],"c":{}},"extensions":{"persistedQuery":{"version":1}}}`,
	"{\n\t\"query\" :\r\n \"x\" , \"n\": -1.5e3, \"t\": true, \"f\": false, \"z\": null, \"e\": [] }",
	`{"a": [[[]]], "b": {"c": {"d": {}}}}`, `{"\u0071uery": "escaped name"}`,
	`[{"query": "x"}]`, `"x"`, `{"a": 1, "a": 2}`, `{"a": 1} {}`, `{"a":`,
}

// The members scanJSON splits off while it checks the body are those a
// pass of their own finds.
func TestScanSplitsMembers(t *testing.T) {
	for _, s := range splitSeeds {
		checkSplit(t, []byte(s))
	}
	top, e := scanJSON("the body", []byte(`{"query": "x", "variables": {"v": [1, 2]}}`), true)
	if e != nil || string(top["query"]) != `"x"` || string(top["variables"]) != `{"v": [1, 2]}` || len(top) != 2 {
		t.Fatalf("split %q, %v", top, e)
	}
}

func FuzzScanJSON(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkSplit(t, body) })
}
