package filterby

import (
	"strings"
	"time"
	"unicode/utf8"

	"gpugraph/internal/lib/podfield"
)

// Filter is one parsed "field op value": data, which the store compiles
// to SQL.
type Filter struct {
	Field  string    // canonical field name, e.g. "currentNodepool" for either spelling
	Op     Op        // the operator
	Value  string    // the value as received (ASCII lower case for a UUID field), never empty
	Time   time.Time // for a date field, the value as an instant in UTC
	IsTime bool      // whether Field is a date field and Time is set
	Raw    string    // the filter text as received
}

// String writes f back as filter text with the canonical field name;
// ParseOne(f.String()) gives f again, Raw aside.
func (f Filter) String() string { return f.Field + string(f.Op) + f.Value }

// Parse reads filterBy parameters, each holding one filter or several joined
// by commas, and answers all of them (they combine with AND). It fails on the
// first bad filter with an *Error naming it.
//
// Because a value may itself contain a comma, a parameter is cut at a comma
// only where what follows starts with a known field and an operator:
// "name==a,b" is one filter with value "a,b"; "name==a,nodeName!=b" is two.
// A value that contains a comma followed by such text ("name==x,k8sPhase==y"
// meant literally) cannot be expressed; ParseOne reads a single filter uncut.
//
// An empty parameter is an error (missing field), not "no filter".
func Parse(params []string) ([]Filter, error) {
	var out []Filter
	for _, p := range params {
		for _, s := range split(p) {
			f, err := ParseOne(s)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// split cuts a parameter at every comma that starts another filter.
func split(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == ',' && startsFilter(p[i+1:]) {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// startsFilter reports whether s begins with a known field and an operator.
func startsFilter(s string) bool {
	n := fieldLen(s)
	if _, ok := filterField(s[:n]); !ok || len(s) < n+2 {
		return false
	}
	_, ok := knownOp(s[n : n+2])
	return ok
}

func fieldLen(s string) int {
	n := 0
	for n < len(s) && isFieldByte(s[n]) {
		n++
	}
	return n
}

// ParseOne reads exactly one filter; commas in it belong to the value.
func ParseOne(s string) (Filter, error) {
	n := fieldLen(s)
	fd, ok := filterField(s[:n])
	if !ok {
		// Quote what the client meant as the field: everything up to the
		// operator, so "node-name==x" names "node-name", not "node".
		end := 0
		for end < len(s) && !isOpByte(s[end]) {
			end++
		}
		if end == 0 {
			return Filter{}, filterError(s, reasonMissingField)
		}
		return Filter{}, unknownField(s, s[:end])
	}
	rest := s[n:]
	if rest == "" {
		return Filter{}, filterError(s, reasonMissingOperator)
	}
	if len(rest) < 2 {
		return Filter{}, filterError(s, reasonUnknownOperator)
	}
	op, ok := knownOp(rest[:2])
	if !ok {
		return Filter{}, filterError(s, reasonUnknownOperator)
	}
	value := rest[2:]
	switch {
	case value == "":
		return Filter{}, filterError(s, reasonEmptyValue)
	// PostgreSQL refuses such text outright; refusing it here makes it a 400
	// on both engines instead of a 500 on one.
	case !utf8.ValidString(value):
		return Filter{}, filterError(s, reasonInvalidUTF8)
	case strings.IndexByte(value, 0) >= 0:
		return Filter{}, filterError(s, reasonNUL)
	}
	if fd.UUID {
		// UUIDs compare case-insensitively; they are stored in lower case.
		value = asciiLower(value)
	}
	f := Filter{Field: fd.Name(), Op: op, Value: value, Raw: s}
	if fd.Kind == podfield.Date {
		if !op.ForDates() {
			return Filter{}, dateOpError(s, op)
		}
		t, reason := parseDate(value)
		if reason != "" {
			return Filter{}, filterError(s, reason)
		}
		f.Time, f.IsTime = t, true
	}
	return f, nil
}

// asciiLower lower-cases ASCII letters only, leaving every other byte as it
// is, so a value's other bytes still compare byte for byte.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
