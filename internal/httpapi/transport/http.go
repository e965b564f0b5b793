package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	gqltransport "github.com/99designs/gqlgen/graphql/handler/transport"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/internal/lib/apierr"
)

// POST is gqlgen's POST transport (its transport.POST) with two changes.
// The body is read strictly (decodeGraphQLBody): gqlgen's decoder takes the
// first JSON value and ignores what follows, lets a repeated key win by
// order, and answered a malformed body by dispatching an error with no
// operation, which panicked the response interceptors and answered
// INTERNAL. And the answer is written without a second parse: gqlgen
// writes it with json.Marshal, which re-parses the data it has just
// written (json.RawMessage is compacted and checked byte by byte); on a
// page of 500 nested pods that is a tenth of the request's CPU.
// writeResponse writes the same bytes, except that a request error has no
// data entry. Content type and statuses are gqlgen's transport.POST's.
type POST struct{ gqltransport.POST }

func (POST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	serveOperation(w, r, exec, readPOST, false)
}

// readPOST reads a POST's body as its parameters.
func readPOST(r *http.Request) (*graphql.RawParams, *apierr.Error) {
	body, e := readRequestBody(r)
	if e != nil {
		return nil, e
	}
	return decodeGraphQLBody(body)
}

// serveOperation runs the operation read reads off r and writes the
// answer; queriesOnly refuses any other operation (a GET: 405, as the
// GraphQL-over-HTTP draft answers).
func serveOperation(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor,
	read func(*http.Request) (*graphql.RawParams, *apierr.Error), queriesOnly bool) {
	contentType := responseContentType(r)
	w.Header().Add("Content-Type", contentType)
	start := graphql.Now()
	params, e := read(r)
	if e != nil {
		WriteError(w, r, e)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx := r.Context()
	params.Headers = r.Header
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		status := http.StatusOK
		if errcode.GetErrorKind(opErr) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
			if contentType == graphqlResponseJSON {
				status = http.StatusBadRequest
			}
		}
		w.WriteHeader(status)
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}
	if queriesOnly && rc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", "POST")
		WriteError(w, r, apierr.New(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			"a GET runs queries only; send a %s as a POST", rc.Operation.Operation))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeResponse(w, responses(ctx))
}

// SSE is gqlgen's SSE transport (a subscription over POST with
// Accept: text/event-stream), its body held to decodeGraphQLBody first.
type SSE struct{ gqltransport.SSE }

func (t SSE) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	body, e := readRequestBody(r)
	if e == nil {
		_, e = decodeGraphQLBody(body)
	}
	if e != nil {
		WriteError(w, r, e)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	t.SSE.Do(w, r, exec)
}

// GET is gqlgen's GET transport with its parameters read as
// strictly as a POST body (each at most once; variables and extensions
// JSON objects), and a mutation refused with a 405 in GraphQL's error
// shape (gqlgen's was a 406 without a code).
type GET struct{ gqltransport.GET }

func (GET) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	serveOperation(w, r, exec, getParams, true)
}

func getParams(r *http.Request) (*graphql.RawParams, *apierr.Error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, apierr.BadRequest("the query string is malformed: %v", err)
	}
	for _, name := range []string{"query", "operationName", "variables", "extensions"} {
		if n := len(q[name]); n > 1 {
			return nil, apierr.BadRequest("%s is given %d times; give it once", name, n)
		}
	}
	params := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
	for _, f := range []struct {
		name string
		into *map[string]any
	}{{"variables", &params.Variables}, {"extensions", &params.Extensions}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		if e := checkJSON(f.name, []byte(v)); e != nil {
			return nil, e
		}
		if k := jsonKind([]byte(v)); k != "an object" {
			return nil, apierr.BadRequest("%s must be a JSON object, got %s", f.name, k)
		}
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(f.into); err != nil {
			return nil, apierr.BadRequest("%s could not be decoded", f.name)
		}
	}
	return params, nil
}

// Unsupported answers, last, what no transport takes, as gqlgen's
// "transport not supported" did with a bare 400: another method 405 (with
// Allow), a POST body of another type 415. A form or text/plain POST, the
// kind a cross-site page can send without asking, is thus refused.
type Unsupported struct{}

func (Unsupported) Supports(*http.Request) bool { return true }

func (Unsupported) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	switch r.Method {
	case http.MethodGet, http.MethodPost:
	default:
		refuseGraphQLMethod(w, r)
		return
	}
	if r.Method == http.MethodPost {
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			ct = "none"
		}
		WriteError(w, r, apierr.New(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
			"/graphql takes a POST body of Content-Type application/json, got %s", ct))
		return
	}
	WriteError(w, r, apierr.BadRequest("/graphql takes GET with a query parameter, POST with a JSON body, or a WebSocket upgrade (graphql-transport-ws)"))
}

// graphQLAllow is what /graphql takes, as its Allow header says.
const graphQLAllow = "GET, POST, OPTIONS"

// Methods answers, before a credential is asked for, what /graphql
// answers whoever asks, as the mux does for the REST paths: OPTIONS (204
// with Allow) and a method it does not take (405 with Allow, in GraphQL's
// error shape), so a PUT without a key learns the method is wrong rather
// than that a key is missing.
func Methods(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodPost:
			next.ServeHTTP(w, r)
		case http.MethodOptions:
			w.Header().Set("Allow", graphQLAllow)
			w.WriteHeader(http.StatusNoContent)
		default:
			refuseGraphQLMethod(w, r)
		}
	})
}

// refuseGraphQLMethod is the 405 of a method /graphql does not take.
func refuseGraphQLMethod(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", graphQLAllow)
	WriteError(w, r, apierr.New(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
		"/graphql does not take %s; it takes GET and POST (OPTIONS lists them)", r.Method))
}

// maxBodyDepth is how deep a GraphQL request body may nest: the deepest
// input of the schema (a PodFilter's StringFilter inside variables) is
// four levels down, a list of them five.
const maxBodyDepth = 32

// wholeBody is a body read ahead, as the gate's middleware reads every
// body before the request takes a slot: its bytes are taken as they are,
// not copied again.
type wholeBody interface{ Whole() ([]byte, error) }

// readRequestBody reads a request body to its end: 413 over the body limit.
func readRequestBody(r *http.Request) ([]byte, *apierr.Error) {
	var body []byte
	var err error
	if rb, ok := r.Body.(wholeBody); ok {
		body, err = rb.Whole()
	} else {
		body, err = io.ReadAll(r.Body)
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierr.New(http.StatusRequestEntityTooLarge, apierr.PayloadTooLarge,
				"the request body is larger than the limit of %d bytes", tooLarge.Limit)
		}
		return nil, apierr.BadRequest("the request body could not be read to its end")
	}
	return body, nil
}

// decodeGraphQLBody reads a GraphQL-over-HTTP request: exactly one JSON
// object, nothing after it, no key twice in any object, valid UTF-8, at
// most maxBodyDepth deep; query and operationName strings (or null),
// variables and extensions objects (or null). Other keys are ignored, as
// the GraphQL-over-HTTP draft lets servers do. A batch (a JSON array of
// operations) is not served. Each refusal names what is wrong.
func decodeGraphQLBody(body []byte) (*graphql.RawParams, *apierr.Error) {
	// splitBody reads what clients send (one object of plain members) in
	// one quick pass; what it does not read through, jsontext reads and
	// names what is wrong with.
	top, ok := splitBody(body)
	if !ok {
		var e *apierr.Error
		if top, e = scanJSON("the request body", body, true); e != nil {
			return nil, e
		}
		switch k := jsonKind(body); k {
		case "an object":
		case "an array":
			return nil, apierr.BadRequest("the request body is a JSON array (a batch of operations): send one operation as a JSON object {\"query\": …}")
		default:
			return nil, apierr.BadRequest("the request body must be a JSON object {\"query\": …}, got %s", k)
		}
	}
	// The body has been read whole (one object, no key twice) and split
	// into its members as it went. A string without an escape is its
	// bytes, taken where they lie (unquote); one with escapes is unquoted
	// in one more pass. (A 109 KB document refused by its field count cost
	// 1.9 ms when it was scanned five times, 30 % of it in decoding.)
	params := &graphql.RawParams{}
	for _, f := range []struct {
		name, kind, want string
		into             any
	}{
		{"query", "a string", "a string", &params.Query},
		{"operationName", "a string", "a string", &params.OperationName},
		{"variables", "an object", "a JSON object", &params.Variables},
		{"extensions", "an object", "a JSON object", &params.Extensions},
	} {
		raw, ok := top[f.name]
		if !ok || jsonKind(raw) == "null" {
			continue
		}
		if k := jsonKind(raw); k != f.kind {
			return nil, apierr.BadRequest("%s must be %s, got %s", f.name, f.want, k)
		}
		if s, ok := f.into.(*string); ok {
			if v, ok := unquote(raw); ok {
				*s = v
				continue
			}
			if err := jsonv2.Unmarshal(raw, s); err != nil {
				return nil, apierr.BadRequest("%s could not be decoded", f.name)
			}
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // as gqlgen decodes: Int arguments keep all 64 bits
		if err := dec.Decode(f.into); err != nil {
			return nil, apierr.BadRequest("%s could not be decoded", f.name)
		}
	}
	return params, nil
}

// unquote is the value of raw, a JSON string checked already (valid
// UTF-8, no control character), when it holds no escape: its bytes
// between the quotes, not copied. A body's bytes are not written again
// once read (the gate's read-ahead and readRequestBody hand over a buffer
// of their own), so the string stays what it was; what keeps the text
// past the request (the query and APQ caches) keeps a copy of its own
// (extension.Documents), so a cached query never holds on to its body.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || bytes.IndexByte(raw, '\\') >= 0 {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(raw[1:]), len(raw)-2), true
}

// checkJSON holds b (what names it) to one JSON value as RFC 8259 reads
// it and I-JSON (RFC 7493) restricts it: no object key twice, valid
// UTF-8; at most maxBodyDepth deep; nothing but white space after it.
func checkJSON(what string, b []byte) *apierr.Error {
	_, e := scanJSON(what, b, false)
	return e
}

// scanJSON is checkJSON, and with split, when b holds an object, its
// members' raw values, in the same pass: each a slice of b (no copy: the
// value starts after the member's name, its colon and white space, and
// ends where the decoder stopped).
func scanJSON(what string, b []byte, split bool) (map[string]jsontext.Value, *apierr.Error) {
	// From a bytes.Buffer the decoder parses in place, without a copy of
	// its own (a 109 KB body cost half a megabyte of copies a request).
	dec := jsontext.NewDecoder(bytes.NewBuffer(b))
	started, end := false, -1 // end: where the first value ends, once it has
	var top map[string]jsontext.Value
	var name string // of the member being read
	var from int64  // where its value starts
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			if !started {
				return nil, apierr.BadRequest("%s is empty: send a JSON object {\"query\": …}", what)
			}
			return top, nil
		}
		if end >= 0 {
			// A second value, or anything else, after the first.
			for end < len(b) && strings.IndexByte(" \t\r\n", b[end]) >= 0 {
				end++
			}
			return nil, apierr.BadRequest("%s has data after its JSON value, from byte %d", what, end)
		}
		if err != nil {
			return nil, jsonError(what, b, err)
		}
		started = true
		depth := dec.StackDepth()
		if depth > maxBodyDepth {
			return nil, apierr.BadRequest("%s nests more than %d levels deep", what, maxBodyDepth)
		}
		if depth == 0 {
			end = int(dec.InputOffset())
		}
		if split && depth == 1 {
			// Inside the top level: an odd length has just read a
			// member's name, an even one (past the opening brace) the
			// end of its value, nested or not.
			kind, n := dec.StackIndex(1)
			switch {
			case kind != '{':
				split = false
			case n%2 == 1:
				name, from = tok.String(), dec.InputOffset()
			case n > 0:
				if top == nil {
					top = map[string]jsontext.Value{}
				}
				top[name] = bytes.TrimLeft(b[from:dec.InputOffset()], " \t\r\n:")
			}
		}
	}
}

// jsonError names what is wrong with JSON text b.
func jsonError(what string, b []byte, err error) *apierr.Error {
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return apierr.BadRequest("%s names %q twice in one object (at %s): name each key once",
			what, syn.JSONPointer.LastToken(), pointerOrTop(syn.JSONPointer.Parent()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apierr.BadRequest("%s is not valid JSON: it ends before its value does (%d bytes)", what, len(b))
	case errors.As(err, &syn):
		return apierr.BadRequest("%s is not valid JSON: %s, at byte %d", what, strings.TrimPrefix(syn.Err.Error(), "jsontext: "), syn.ByteOffset)
	}
	return apierr.BadRequest("%s is not valid JSON", what)
}

// pointerOrTop names the object a JSON pointer points to.
func pointerOrTop(p jsontext.Pointer) string {
	if p == "" {
		return "the top level"
	}
	return string(p)
}

// jsonKind names the kind of the JSON value b holds: an object, an
// array, a string, a number, a boolean or null.
func jsonKind(b []byte) string {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return "an object"
		case '[':
			return "an array"
		case '"':
			return "a string"
		case 't', 'f':
			return "a boolean"
		case 'n':
			return "null"
		}
		return "a number"
	}
	return "nothing"
}

const graphqlResponseJSON = "application/graphql-response+json"

// responseContentType is gqlgen's transport.POST's choice of answer type, by Accept.
func responseContentType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return "application/json"
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", "application/json":
			return "application/json"
		case graphqlResponseJSON:
			return graphqlResponseJSON
		}
	}
	return graphqlResponseJSON
}

// writeResponse writes resp as json.Marshal would, byte for byte: the
// fields in graphql.Response's order, empty ones left out as its tags say,
// each through encoding/json except data, which is JSON already and gets
// only what json.Marshal would change in it, the HTML-safe escapes. One
// difference: an answer without data (nil, where json.Marshal writes
// "data":null) has no data entry. gqlgen leaves data nil only where
// nothing ran: a request error (the document does not parse or validate,
// a variable does not coerce, a limit refuses the operation before it
// runs), which the GraphQL spec's response format and the GraphQL-over-HTTP
// draft answer with errors alone. An operation that ran keeps its data, null
// included (a field's error that reached the root, a timeout).
func writeResponse(w io.Writer, resp *graphql.Response) {
	var b bytes.Buffer
	b.Grow(len(resp.Data) + 256)
	b.WriteByte('{')
	if len(resp.Errors) > 0 {
		b.WriteString(`"errors":`)
		writeJSON(&b, resp.Errors)
	}
	if len(resp.Data) > 0 {
		member(&b, "data")
		appendHTMLSafe(&b, resp.Data)
	}
	if resp.Label != "" {
		member(&b, "label")
		writeJSON(&b, resp.Label)
	}
	if len(resp.Path) > 0 {
		member(&b, "path")
		writeJSON(&b, resp.Path)
	}
	if resp.HasNext != nil {
		member(&b, "hasNext")
		writeJSON(&b, resp.HasNext)
	}
	if len(resp.Extensions) > 0 {
		member(&b, "extensions")
		writeJSON(&b, resp.Extensions)
	}
	b.WriteByte('}')
	_, _ = w.Write(b.Bytes())
}

// member starts the member name of the object b is writing, after a comma
// unless it is the first.
func member(b *bytes.Buffer, name string) {
	if b.Bytes()[b.Len()-1] != '{' {
		b.WriteByte(',')
	}
	b.WriteByte('"')
	b.WriteString(name)
	b.WriteString(`":`)
}

func writeJSON(b *bytes.Buffer, v any) {
	j, err := json.Marshal(v)
	if err != nil {
		j = []byte("null")
	}
	b.Write(j)
}

// appendHTMLSafe appends JSON text src with <, >, & and the line and
// paragraph separators escaped, as json.Marshal escapes a RawMessage.
func appendHTMLSafe(b *bytes.Buffer, src []byte) {
	// Most answers hold none of them: four vectorised scans say so.
	if bytes.IndexByte(src, '<') < 0 && bytes.IndexByte(src, '>') < 0 && bytes.IndexByte(src, '&') < 0 && bytes.IndexByte(src, 0xE2) < 0 {
		b.Write(src)
		return
	}
	start := 0
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if c == '<' || c == '>' || c == '&' {
				b.Write(src[start:i])
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == '\u2028' || r == '\u2029' {
			b.Write(src[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&0xF])
			start = i + size
		}
		i += size
	}
	b.Write(src[start:])
}

const hex = "0123456789abcdef"
