package edge

import (
	stdjson "encoding/json"
	"strings"
	"testing"

	"gpugraph/apierr"
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
		{"{\"nodeName\": \"\xff\"}", 0, "the body is not valid JSON: invalid UTF-8 (at byte 14)"},
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
	for _, s := range []string{`{"nodeName": "a"}`, `{"a": 1, "a": 2}`, `{"gpus": [{"index": 1}]} x`, `{"labels": {"a": "b"}}`, `[]`, `"`} {
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
	})
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
