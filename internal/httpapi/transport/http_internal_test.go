package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// responseOf is an answer carrying s everywhere a string goes: in data (as
// gqlgen writes a string), an error, a label, a path and extensions.
func responseOf(s string, withErrors bool) *graphql.Response {
	var data bytes.Buffer
	data.WriteString(`{"pods":[{"name":`)
	graphql.MarshalString(s).MarshalGQL(&data)
	data.WriteString(`,"n":1.5e-7}]}`)
	next := true
	r := &graphql.Response{Data: data.Bytes(), Label: s, Path: ast.Path{ast.PathName(s), ast.PathIndex(2)}, HasNext: &next,
		Extensions: map[string]any{"requestId": s}}
	if withErrors {
		r.Errors = gqlerror.List{{Message: s, Path: ast.Path{ast.PathName("pods")}, Extensions: map[string]any{"code": s}}}
	}
	return r
}

// written is graphql.Response as writeResponse writes it: its fields,
// tags and order, but an answer without data (a request error) has no
// data entry instead of "data":null.
type written struct {
	Errors     gqlerror.List   `json:"errors,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	Label      string          `json:"label,omitempty"`
	Path       ast.Path        `json:"path,omitempty"`
	HasNext    *bool           `json:"hasNext,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

func checkWritten(t *testing.T, resp *graphql.Response) {
	t.Helper()
	want, err := json.Marshal(written(*resp))
	if err != nil {
		t.Skip("json.Marshal refuses it too")
	}
	var got bytes.Buffer
	writeResponse(&got, resp)
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("writeResponse wrote\n%s\njson.Marshal writes\n%s", got.Bytes(), want)
	}
}

// The answer is written exactly as gqlgen's json.Marshal writes it, but
// for a request error's data entry.
func TestWriteResponseIsJSONMarshal(t *testing.T) {
	for _, s := range []string{"", "plain", `<script>&"quote"\`, "line\u2028para\u2029", "tab\tnl\n\x00", "é日本", "\xff\xfe broken", strings.Repeat("<>&", 100)} {
		checkWritten(t, responseOf(s, true))
		checkWritten(t, responseOf(s, false))
		r := responseOf(s, true)
		r.Data = nil
		checkWritten(t, r)
	}
	checkWritten(t, &graphql.Response{})
	checkWritten(t, &graphql.Response{Errors: gqlerror.List{{Message: "refused"}}})
	checkWritten(t, &graphql.Response{Data: []byte("null")})
}

// A request error (nothing ran: gqlgen leaves data nil) has no data
// entry; an operation that ran keeps its data, null included.
func TestWriteResponseRequestErrorHasNoData(t *testing.T) {
	refused := gqlerror.List{{Message: "Expected Name, found <EOF>", Extensions: map[string]any{"code": "BAD_REQUEST"}}}
	for _, tc := range []struct {
		resp *graphql.Response
		want string
	}{
		{&graphql.Response{Errors: refused}, `{"errors":[{"message":"Expected Name, found \u003cEOF\u003e","extensions":{"code":"BAD_REQUEST"}}]}`},
		{&graphql.Response{Errors: refused, Extensions: map[string]any{"n": 1}}, `{"errors":[{"message":"Expected Name, found \u003cEOF\u003e","extensions":{"code":"BAD_REQUEST"}}],"extensions":{"n":1}}`},
		{&graphql.Response{Errors: refused, Data: []byte("null")}, `{"errors":[{"message":"Expected Name, found \u003cEOF\u003e","extensions":{"code":"BAD_REQUEST"}}],"data":null}`},
		{&graphql.Response{Data: []byte(`{"a":1}`)}, `{"data":{"a":1}}`},
		{&graphql.Response{Label: "l"}, `{"label":"l"}`},
	} {
		var got bytes.Buffer
		writeResponse(&got, tc.resp)
		if got.String() != tc.want {
			t.Errorf("writeResponse wrote\n%s\nwant\n%s", got.String(), tc.want)
		}
	}
}

func FuzzWriteResponse(f *testing.F) {
	for _, s := range []string{"", "a<b>c&d", "\u2028", "\xe2\x80", "\"\\", "日本"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, withErrors bool) {
		r := responseOf(s, withErrors)
		checkWritten(t, r)
		r.Data = nil // a request error's answer
		checkWritten(t, r)
	})
}

// readAhead is a body read ahead, as the gate's middleware hands it on.
type readAhead struct {
	io.Reader
	b []byte
}

func (r readAhead) Whole() ([]byte, error) { return r.b, nil }
func (readAhead) Close() error             { return nil }

// A body read ahead is taken as it is: the transport decodes the bytes
// the gate read, not a copy of them.
func TestReadRequestBodyTakesABodyReadAhead(t *testing.T) {
	b := []byte(`{"query":"{ __typename }"}`)
	r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	r.Body = readAhead{Reader: bytes.NewReader(b), b: b}
	got, e := readRequestBody(r)
	if e != nil || string(got) != string(b) || &got[0] != &b[0] {
		t.Fatalf("readRequestBody = %q, %v; want the body read ahead, not a copy", got, e)
	}
}
