package bounds

import (
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"gpugraph/internal/lib/apierr"
)

type report struct {
	NodeName string `json:"nodeName"`
	GPUs     []struct {
		Index int    `json:"index"`
		UUID  string `json:"uuid"`
	} `json:"gpus"`
	Labels map[string]string `json:"labels"`
}

func TestDecodeJSON(t *testing.T) {
	for _, tc := range []struct {
		body  string
		rules JSONRules
		want  string // "" accepts
	}{
		{`{"nodeName": "a", "gpus": [{"index": 0, "uuid": "u"}]}`, 0, ""},
		{`{"nodeName": "a", "extra": 1}`, 0, ""},
		{`{"nodeName": "a", "extra": 1}`, KnownMembers, `the body: unknown field "extra"`},
		{`{"gpus": [{"index": 0, "uuid": "u", "more": 1}]}`, KnownMembers, `gpus[0]: unknown field "more"`},
		{`  `, 0, "the body is empty; send a JSON object"},
		{`{"nodeName": "a", "nodeName": "b"}`, 0, "nodeName is given twice: a name appears at most once in an object"},
		{`{"labels": {"gpu": "0", "gpu": "1"}}`, 0, "labels.gpu is given twice: a name appears at most once in an object"},
		{`{"nodeName": "a", "NodeName": "b"}`, AnyCaseNames, "NodeName is given twice: a name appears at most once in an object"},
		{`{"NODENAME": "a"}`, AnyCaseNames, ""},
		{`{"NODENAME": "a"}`, KnownMembers, `the body: unknown field "NODENAME"`},
		{`{"nodeName": "a"} {"nodeName": "b"}`, 0, "the body holds data after its JSON value, which ends at byte 17"},
		{`{"nodeName": "a"}]`, 0, "the body holds data after its JSON value, which ends at byte 17"},
		{`{"nodeName": "a"`, 0, "the body ends before its JSON value does"},
		{`{"nodeName": 7}`, 0, "nodeName: want a string, got number"},
		{`{"gpus": [{"index": "0"}]}`, 0, "gpus[0].index: want a whole number, got string"},
		{`{"gpus": [{"index": 99999999999999999999}]}`, 0, "gpus[0].index: want a whole number, got number 99999999999999999999 (value out of range)"},
		{"{\"nodeName\": \"\xff\"}", 0, "nodeName holds text that is not valid UTF-8 (at byte 14)"},
		{`{"nodeName": "\ud800"}`, 0, "nodeName holds text that is not valid UTF-8 (at byte 14)"},
		{"{\"labels\": {\"a\xff\": \"b\"}}", 0, "labels holds text that is not valid UTF-8 (at byte 14)"},
		{`{"nodeName": "a\u0000b"}`, 0, "nodeName contains a NUL character"},
		{`{"gpus": [{"index": 0}, {"uuid": "\u0000"}]}`, 0, "gpus[1].uuid contains a NUL character"},
		{`{"labels": {"a\u0000": "b"}}`, 0, "labels holds a member name with a NUL character"},
		{`{"labels": {"a": "b\u0000"}}`, 0, "labels.a contains a NUL character"},
		{`{"nodeName\u0000": "a"}`, 0, "the body holds a member name with a NUL character"},
		{`{"extra": [1, {"x": "\u0000"}]}`, 0, "extra[1].x contains a NUL character"}, // a member no field reads
		{`"\u0000"`, 0, "the body contains a NUL character"},
		{`{"nodeName": "a\\u0000"}`, 0, ""}, // a backslash, then u0000: text
		{`{"nodeName": 7, "x": "\u0000"}`, 0, "x contains a NUL character"},
		{`{"nodeName": "\u0000", "nodeName": "b"}`, 0, "nodeName contains a NUL character"},
		{`nope`, 0, "the body is not valid JSON: invalid character 'o' in literal null (expecting 'u') (at byte 1)"},
	} {
		var r report
		err := DecodeJSON("the body", []byte(tc.body), &r, tc.rules)
		got := ""
		if err != nil {
			e, ok := apierr.As(err)
			if !ok || e.Status != 400 {
				t.Errorf("%s: %v is not a 400", tc.body, err)
				continue
			}
			got = e.Message
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.body, got, tc.want)
		}
	}
}

// A stream's values (DecodeValue) refuse a NUL as DecodeJSON does, in a
// field, an element or a map's key, named by its place in the stream; a
// caller tells the refusal by its type.
func TestDecodeValueRefusesNUL(t *testing.T) {
	for _, tc := range []struct{ body, want, at string }{
		{`[{"nodeName": "a\u0000"}]`, "[0].nodeName contains a NUL character", "[0].nodeName"},
		{`[{"nodeName": "a"}, {"gpus": [{"uuid": "u\u0000"}]}]`, "[1].gpus[0].uuid contains a NUL character", "[1].gpus[0].uuid"},
		{`[{"labels": {"k\u0000": "v"}}]`, "[0].labels holds a member name with a NUL character", "[0].labels"},
		{"[{\"nodeName\": \"\xff\"}]", "[0].nodeName holds text that is not valid UTF-8 (at byte 15)", "[0].nodeName"},
		{`[{"nodeName": "a\\u0000"}]`, "", ""},
	} {
		dec := NewJSONDecoder(strings.NewReader(tc.body))
		if _, err := dec.ReadToken(); err != nil {
			t.Fatal(err)
		}
		var err error
		for dec.PeekKind() == '{' && err == nil {
			var r report
			err = DecodeValue(dec, &r, 0)
		}
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		err = JSONError("the body", err)
		var bad *BadText
		if !errors.As(err, &bad) || bad.At != tc.at {
			t.Errorf("%s: %v (%T) is not a BadText at %s", tc.body, err, err, tc.at)
			continue
		}
		if e, ok := apierr.As(err); !ok || e.Status != 400 || e.Message != tc.want {
			t.Errorf("%s: got %v, want a 400 %q", tc.body, err, tc.want)
		}
	}
}

func TestParseInt(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "5": true, "-5": true, "2147483648": true, "+5": false, "05": false, "-0": true,
		" 5": false, "5 ": false, "5.0": false, "1_000": false, "": false, "0x10": false, "99999999999999999999": false} {
		if _, ok := ParseInt(s); ok != want {
			t.Errorf("ParseInt(%q) ok = %v, want %v", s, ok, want)
		}
	}
}

// FuzzDecodeJSON: whatever the body, DecodeJSON answers nil or a 400 and
// never panics; what it accepts encoding/json reads too, as one value
// with no name given twice.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"nodeName": "a"}`, `{"a": 1, "a": 2}`, `{"gpus": [{"index": 1}]} x`, `{"labels": {"a": "b"}}`, `[]`, `"`,
		`{"nodeName": "a\u0000b"}`, `{"labels": {"\u0000": "b"}}`, `{"x\u0000": 1}`, `{"nodeName": "a\\u0000"}`, `{"nodeName": "\ud800\udc00"}`,
		"{\"nodeName\": \"\xc3\"}", `{"gpus": [{"uuid": "\udfff"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r report
		err := DecodeJSON("the body", body, &r, 0)
		if err != nil {
			if e, ok := apierr.As(err); !ok || e.Status != 400 {
				t.Fatalf("%q: %v is not a 400", body, err)
			}
			return
		}
		dec := stdjson.NewDecoder(strings.NewReader(string(body)))
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			t.Fatalf("%q accepted, but encoding/json reads %v", body, err)
		}
		if hasDuplicate(body) {
			t.Fatalf("%q accepted with a name given twice", body)
		}
		// Nothing accepted holds text PostgreSQL refuses, in a field or in
		// any value or name of the body.
		if s, ok := notText(r.NodeName, r.Labels, r.GPUs); ok {
			t.Fatalf("%q accepted with %q", body, s)
		}
		var all any // a number too large for any is refused there
		if err := DecodeJSON("the body", body, &all, 0); err != nil {
			return
		}
		if s, ok := notText(all); ok {
			t.Fatalf("%q accepted with %q", body, s)
		}
	})
}

// notText finds a string in vs (a name or a value, at any depth) that
// holds a NUL or is not valid UTF-8.
func notText(vs ...any) (string, bool) {
	bad := func(s string) bool { return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) }
	for _, v := range vs {
		switch x := v.(type) {
		case string:
			if bad(x) {
				return x, true
			}
		case []any:
			if s, ok := notText(x...); ok {
				return s, true
			}
		case map[string]any:
			for k, e := range x {
				if s, ok := notText(k, e); ok {
					return s, true
				}
			}
		case map[string]string:
			for k, e := range x {
				if s, ok := notText(k, e); ok {
					return s, true
				}
			}
		case []struct {
			Index int    `json:"index"`
			UUID  string `json:"uuid"`
		}:
			for _, g := range x {
				if s, ok := notText(g.UUID); ok {
					return s, true
				}
			}
		}
	}
	return "", false
}

// hasDuplicate reports whether body names a member twice in one object.
func hasDuplicate(body []byte) bool {
	dec := stdjson.NewDecoder(strings.NewReader(string(body)))
	type level struct {
		object bool
		names  map[string]bool
		key    bool // the next string is a name
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case stdjson.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &level{object: v == '{', names: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.key {
				if top.names[v] {
					return true
				}
				top.names[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}
