package transport

import (
	"bytes"
	"fmt"
	"maps"
	"strings"
	"testing"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
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

// bodySeeds are bodies splitBody must read as scanJSON does, or leave to it.
var bodySeeds = append([]string{
	`{"query": "{ vms { total } }", "variables": {"a": [1, -0.5e-3, true, false, null, "x\n\u00e9\/"], "b": {"c": {}}}, "operationName": null}`,
	`{"query": "\u00e9 \ud83d\ude00 \ud83d é ` + "\xed\xa0\x80" + `"}`, `{"a": "\u0000\t"}`, "{\"a\": \"\t\"}", "{\"a\": \"\x01\"}",
	`{"a": "\x"}`, `{"a": "\u12"}`, `{"a": "\`, `{"a": "x`, `{"a": 01}`, `{"a": 1.}`, `{"a": 1e}`, `{"a": -}`, `{"a": .5}`,
	`{"a": tru}`, `{"a": nulll}`, `{"a": [1 2]}`, `{"a": [1,]}`, `{"a": {"b": 1,}}`, `{"a" 1}`, `{"a": 1,}`, `{,}`,
	`{"a": {"b": 1, "b": 2}}`, `{"a": {"\u0062": 1, "b": 2}}`, "\ufeff{}", "{\"a\": \"\xff\"}", "{\"\xff\": 1}", `{"a": "` + "\xef\xbf\xbd" + `"}`,
	`{"a": {"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":18}}`,
	strings.Repeat(`{"a":`, 32) + "1" + strings.Repeat("}", 32), strings.Repeat(`{"a":`, 33) + "1" + strings.Repeat("}", 33),
	`{"a": ` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`, `{"a": ` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`,
	"{\"query\": \"" + strings.Repeat("__typename ", 100) + "\"}  \r\n\t",
}, splitSeeds...)

// checkSplitBody: a body splitBody reads through is one scanJSON accepts
// as an object, split into the same members, its strings' values those
// jsonv2 unquotes.
func checkSplitBody(t *testing.T, body []byte) {
	t.Helper()
	got, ok := splitBody(body)
	if !ok {
		return
	}
	want, e := scanJSON("the body", body, true)
	if e != nil || jsonKind(body) != "an object" {
		t.Fatalf("%q: splitBody read it, scanJSON: %v (%s)", body, e, jsonKind(body))
	}
	if !maps.EqualFunc(got, want, func(a, b jsontext.Value) bool { return bytes.Equal(a, b) }) {
		t.Fatalf("%q: split into %q, scanJSON into %q", body, got, want)
	}
	for name, raw := range got {
		var s string
		if jsonKind(raw) != "a string" || jsonv2.Unmarshal(raw, &s) != nil {
			continue
		}
		if v, ok := unquote(raw); ok && v != s {
			t.Fatalf("%q: member %s unquoted to %q, want %q", body, name, v, s)
		}
	}
}

// TestSplitBody: splitBody reads what scanJSON reads, and reads the bodies
// clients send (plain members, strings with escapes, nested variables)
// through rather than leave them to scanJSON.
func TestSplitBody(t *testing.T) {
	for _, s := range bodySeeds {
		checkSplitBody(t, []byte(s))
	}
	for _, s := range []string{bodySeeds[0], bodySeeds[len(bodySeeds)-len(splitSeeds)-1], strings.Repeat(`{"a":`, 32) + "1" + strings.Repeat("}", 32), `{"a": "` + "\xef\xbf\xbd" + `"}`} {
		if _, ok := splitBody([]byte(s)); !ok {
			t.Errorf("%.80q is left to scanJSON", s)
		}
	}
	for _, s := range []string{`{"a": {"b": 1, "b": 2}}`, strings.Repeat(`{"a":`, 33) + "1" + strings.Repeat("}", 33), `{"a": 1} x`, `{"a": "` + "\xed\xa0\x80" + `"}`} {
		if _, ok := splitBody([]byte(s)); ok {
			t.Errorf("%.80q read through, want it left to scanJSON (which refuses it)", s)
		}
	}
}

func FuzzSplitBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkSplitBody)
}

// TestDecodeTakesQueryInPlace: an unescaped query is the body's bytes (no
// copy); one with escapes is unquoted.
func TestDecodeTakesQueryInPlace(t *testing.T) {
	body := []byte(`{"query": "{ vms { total } }", "operationName": "Q\n"}`)
	p, e := decodeGraphQLBody(body)
	if e != nil || p.Query != "{ vms { total } }" || p.OperationName != "Q\n" {
		t.Fatalf("%+v %v", p, e)
	}
	if unsafe.StringData(p.Query) != &body[11] {
		t.Errorf("the query was copied out of the body")
	}
}
