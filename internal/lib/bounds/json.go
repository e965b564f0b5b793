package bounds

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"gpugraph/internal/lib/apierr"
)

// JSONRules loosen or tighten DecodeJSON beyond its defaults, which are
// encoding/json v2's (the go-json-experiment module is what Go ships as
// encoding/json/v2): unlike encoding/json, a name given twice in one
// object is refused rather than the last one kept, names match exactly
// rather than in any case (so {"nodeName": "a", "NODENAME": "b"} is not two
// spellings of one field), invalid UTF-8 is refused rather than replaced,
// and a member the value has no field for is ignored.
type JSONRules int

const (
	// KnownMembers refuses a member the value has no field for.
	KnownMembers JSONRules = 1 << iota
	// AnyCaseNames matches names in any case, for a body whose clients
	// spell them in several (Run:ai's token request: clientId, clientID,
	// AppId); two names that differ only in case are then one name given
	// twice, and refused.
	AnyCaseNames
)

func (r JSONRules) options() []json.Options {
	var opts []json.Options
	if r&KnownMembers != 0 {
		opts = append(opts, json.RejectUnknownMembers(true))
	}
	if r&AnyCaseNames != 0 {
		opts = append(opts, json.MatchCaseInsensitiveNames(true))
	}
	return opts
}

// DecodeJSON decodes body, which must hold exactly one JSON value, into v,
// under rules: data after the value is refused. what names the body in
// messages ("the request body"). Every refusal is a 400 naming where it
// is wrong: "gpus[0].index: want a whole number, got string". A string
// PostgreSQL's text cannot hold, anywhere in the body (a value or a
// member name, of a field v has or not), is refused as a *BadText: NUL
// (JSON's \u0000) and invalid UTF-8, the same on both engines.
func DecodeJSON(what string, body []byte, v any, rules JSONRules) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.BadRequest("%s is empty; send a JSON object", what)
	}
	// A NUL can only be written \u0000 (a raw control character is no
	// JSON): a body without those six bytes, nearly every one, is not
	// scanned again.
	if bytes.Contains(body, nulEscape) {
		if err := findNUL(what, body); err != nil {
			return err
		}
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(body)) // parsed in place, not copied
	if err := json.UnmarshalDecode(dec, v, rules.options()...); err != nil {
		return JSONError(what, err)
	}
	end := dec.InputOffset()
	if _, err := dec.ReadToken(); err != io.EOF {
		return apierr.BadRequest("%s holds data after its JSON value, which ends at byte %d", what, end)
	}
	return nil
}

// NewJSONDecoder reads a stream as DecodeJSON reads a body (names given
// twice in one object are refused as it reads them): with DecodeValue and
// its ReadToken, a large body is decoded entry by entry, never held whole.
func NewJSONDecoder(r io.Reader) *jsontext.Decoder { return jsontext.NewDecoder(r) }

// DecodeValue decodes the next value of dec into v under rules. A string
// with a NUL, as v's string or a map's key, is a *BadText (as DecodeJSON's;
// invalid UTF-8 the decoder refuses itself, and JSONError names it).
func DecodeValue(dec *jsontext.Decoder, v any, rules JSONRules) error {
	return json.UnmarshalDecode(dec, v, append(rules.options(), textOnly)...)
}

// BadText refuses a string of a JSON body that PostgreSQL's text cannot
// hold (a NUL, invalid UTF-8) with a 400 naming where it stands. It is
// an *apierr.Error (apierr.As finds it) that a caller may answer
// otherwise: a token request answers a client id that is not text as an
// unknown client.
type BadText struct {
	// At is the member the string is the value of ("gpus[0].uuid"), or,
	// for a member name, the object that holds it; "" for the body itself.
	At  string
	err *apierr.Error
}

func (e *BadText) Error() string { return e.err.Message }
func (e *BadText) Unwrap() error { return e.err }

var nulEscape = []byte(`\u0000`)

// findNUL scans body for the first string, value or member name, that
// holds a NUL; nil when none does or when body is not JSON up to it
// (decoding names that).
func findNUL(what string, body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		if tok.Kind() == '"' && strings.IndexByte(tok.String(), 0) >= 0 {
			return nulError(what, dec)
		}
	}
}

// nulError is the refusal of the string dec has just read.
func nulError(what string, dec *jsontext.Decoder) *BadText {
	p := dec.StackPointer()
	if k, n := dec.StackIndex(dec.StackDepth()); k == '{' && n%2 == 1 { // a member name
		at := Path(p.Parent())
		return &BadText{At: at, err: apierr.BadRequest("%s holds a member name with a NUL character", orWhat(at, what))}
	}
	at := Path(p)
	return &BadText{At: at, err: apierr.BadRequest("%s contains a NUL character", orWhat(at, what))}
}

// textOnly refuses, while a stream is decoded, a string with a NUL where
// one is decoded into a Go string (a field, an element, a map's key).
var textOnly = json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *string) error {
	if dec.PeekKind() != '"' {
		return json.SkipFunc // null, or a wrong kind: as the default says
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	v := tok.String()
	if strings.IndexByte(v, 0) >= 0 {
		return nulError("the value", dec)
	}
	*s = v
	return nil
}))

// JSONError is the 400 of a decoding error of what (DecodeJSON's
// messages); an error that is not the body's own (a read that failed) is
// returned as it is.
func JSONError(what string, err error) error {
	var sem *json.SemanticError
	var syn *jsontext.SyntacticError
	var bad *BadText
	switch {
	case errors.As(err, &bad):
		return bad
	case errors.As(err, &sem):
		at := Path(sem.JSONPointer)
		switch {
		case errors.Is(sem.Err, json.ErrUnknownName):
			return apierr.BadRequest("%s: unknown field %q", orWhat(Path(sem.JSONPointer.Parent()), what), sem.JSONPointer.LastToken())
		case sem.GoType != nil && sem.JSONKind != 0:
			got := kindName(sem.JSONKind)
			if len(sem.JSONValue) > 0 {
				got += " " + string(sem.JSONValue)
			}
			msg := fmt.Sprintf("want %s, got %s", goKindName(sem.GoType), got)
			switch {
			case sem.Err == nil || errors.Is(sem.Err, strconv.ErrSyntax): // the kinds say it
			case sem.JSONKind == '[' || sem.JSONKind == ']':
				msg = fmt.Sprintf("%s: %v", msg, sem.Err) // too many array elements
			default:
				msg = fmt.Sprintf("%s (%v)", msg, sem.Err) // value out of range
			}
			return apierr.BadRequest("%s: %s", orWhat(at, what), msg)
		}
		return apierr.BadRequest("%s: %s", orWhat(at, what), strings.TrimPrefix(err.Error(), "json: "))
	case errors.As(err, &syn):
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			if at := Path(syn.JSONPointer); at != "" {
				return apierr.BadRequest("%s is given twice: a name appears at most once in an object", at)
			}
			return apierr.BadRequest("%s gives a name twice in one object", what)
		}
		if errors.Is(syn.Err, io.ErrUnexpectedEOF) {
			return apierr.BadRequest("%s ends before its JSON value does", what)
		}
		if notUTF8(syn.Err) {
			// A value's pointer is its member's; a member name's, its object's.
			at := Path(syn.JSONPointer)
			return &BadText{At: at, err: apierr.BadRequest("%s holds text that is not valid UTF-8 (at byte %d)", orWhat(at, what), syn.ByteOffset)}
		}
		return apierr.BadRequest("%s is not valid JSON: %v (at byte %d)", what, syn.Err, syn.ByteOffset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apierr.BadRequest("%s ends before its JSON value does", what)
	}
	return err
}

// notUTF8 reports whether a syntactic error is text that is not UTF-8:
// raw bytes that are not, or an escaped lone surrogate (\ud800), which no
// UTF-8 can write. The decoder's errors are not exported values; their
// words are stable.
func notUTF8(err error) bool {
	m := err.Error()
	return m == "invalid UTF-8" || strings.HasPrefix(m, "invalid surrogate pair")
}

func orWhat(at, what string) string {
	if at == "" {
		return what
	}
	return at
}

// Path writes a JSON pointer as a field path: /gpus/0/index is
// gpus[0].index.
func Path(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && tok != "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// kindName names a JSON kind as a message says it.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{', '}':
		return "object"
	case '[', ']':
		return "array"
	}
	return "a value"
}

// goKindName names what a Go type wants, in JSON's words.
func goKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Array:
		return fmt.Sprintf("an array of %d", t.Len())
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a value"
}
