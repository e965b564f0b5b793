package filterby

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// templates is every SQL text SQL can produce, built from fixed values. A
// fuzzed filter's SQL must be one of them: then it depends only on the
// field and operator, and no byte of the value can be in it.
var templates = func() map[string]bool {
	m := map[string]bool{never: true}
	exact := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, fd := range fields {
		for _, op := range ops {
			f := Filter{Field: name, Op: op, Value: "x", Time: exact}
			s, _ := f.SQL()
			m[s] = true
			if fd.date {
				f.Time = exact.Add(time.Nanosecond)
				s, _ = f.SQL()
				m[s] = true
			}
		}
	}
	return m
}()

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"name==a", "name!=a", "name<=a", "name>=a", "name=@a", "name!@a", "name=^a", "name=$a",
		"nodeName!=some-node-name", "currentNodePool==default", "currentNodepool=^d",
		"k8sPhase==Running", "projectId==1", "priorityClassName=@high",
		"clusterId==c,workloadId==w", "revisionId==r,x", "name==a,b,nodeName==c", "name==a,,b",
		`name=@50%_\`, "name==é", "name==' OR 1=1 --", `name=="; DROP TABLE pods; --`,
		"createdAt>=2024-01-01T00:00:00Z", "completedAt<=2024-01-01T12:00:00.123456789+02:00",
		"deletedAt==2024-01-01t00:00z", "createdAt!=2024-01-01T00:00:00,5-0530",
		"createdAt>=2024-01-01T00:00:00", "createdAt>=2024-01-01", "createdAt>=0001-01-01T00:00:00+01:00",
		"createdAt>=9999-12-31T23:59:59.999999999Z", "createdAt>=2024-01-01T00:00:00 02:00",
		"createdAt=@2024", "", ",", "==", "==x", "size==1", "nodeName~=x", "nodeName", "nodeName=",
		"nodeName==", "name==\xff", "name==a\x00", "name==a,size==1", "name==a,createdAt>=bad",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		one, err := ParseOne(s)
		if err != nil {
			checkError(t, err, s)
		} else {
			checkFilter(t, one, s)
		}

		fs, err := Parse([]string{s})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(s, e.Text) {
				t.Fatalf("Parse(%q) error %v does not name a piece of the parameter", s, err)
			}
			checkError(t, err, e.Text)
			return
		}
		raws := make([]string, len(fs))
		for i, f := range fs {
			checkFilter(t, f, f.Raw)
			raws[i] = f.Raw
		}
		// Cutting at commas loses nothing, and cuts only before a filter.
		if strings.Join(raws, ",") != s {
			t.Fatalf("Parse(%q) pieces %q do not join back", s, raws)
		}
		if len(fs) == 1 && !reflect.DeepEqual(fs[0], one) {
			t.Fatalf("Parse(%q) = %+v, ParseOne = %+v", s, fs[0], one)
		}
		sql, args := Where(fs)
		if strings.Count(sql, "?") != len(args) {
			t.Fatalf("Where(%q) = %q with %d args", s, sql, len(args))
		}
	})
}

func checkError(t *testing.T, err error, text string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Param != "filterBy" || e.Text != text || e.Reason == "" {
		t.Fatalf("error for %q = %#v", text, err)
	}
	if want := fmt.Sprintf("invalid filterBy %q: %s", text, e.Reason); err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func checkFilter(t *testing.T, f Filter, raw string) {
	t.Helper()
	fd, ok := fields[f.Field]
	if !ok || fd.name != f.Field || fd.column != f.Column || f.Raw != raw || f.Value == "" || f.IsTime != fd.date {
		t.Fatalf("ParseOne(%q) = %+v", raw, f)
	}
	sql, args := f.SQL()
	if !templates[sql] {
		t.Fatalf("%q compiles to %q, not a fixed template", raw, sql)
	}
	if !strings.Contains(sql, f.Column) || strings.Count(sql, "?") != len(args) {
		t.Fatalf("%q compiles to %q %v", raw, sql, args)
	}
	if f.IsTime {
		if f.Time.Location() != time.UTC || f.Time.Year() < 1 || f.Time.Year() > 9999 {
			t.Fatalf("%q parses to instant %v", raw, f.Time)
		}
		for _, a := range args {
			if tm, ok := a.(time.Time); !ok || tm.Location() != time.UTC || tm.Sub(f.Time).Abs() >= time.Microsecond ||
				tm.Year() < 1 || tm.Year() > 9999 {
				t.Fatalf("%q binds %#v for %v", raw, a, f.Time)
			}
		}
	} else {
		// The bound pattern or string gives back the value exactly.
		pattern := args[0].(string)
		switch f.Op {
		case Contains, NotContains:
			pattern = strings.TrimSuffix(strings.TrimPrefix(pattern, "%"), "%")
		case StartsWith:
			pattern = strings.TrimSuffix(pattern, "%")
		case EndsWith:
			pattern = strings.TrimPrefix(pattern, "%")
		}
		if f.Op != Eq && f.Op != Ne && f.Op != Le && f.Op != Ge {
			pattern = unescapeLike(t, pattern)
		}
		if pattern != f.Value {
			t.Fatalf("%q binds %q, which reads back as %q", raw, args[0], pattern)
		}
	}
	back, err := ParseOne(f.String())
	if err != nil {
		t.Fatalf("%q: String() %q does not parse: %v", raw, f.String(), err)
	}
	back.Raw = f.Raw
	if !reflect.DeepEqual(back, f) {
		t.Fatalf("%q: String() %q parses to %+v, want %+v", raw, f.String(), back, f)
	}
}

// unescapeLike reads an escaped LIKE pattern back, failing on a wildcard
// that is not escaped: one would match more than the value.
func unescapeLike(t *testing.T, p string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 == len(p) {
				t.Fatalf("pattern %q ends in an escape", p)
			}
			i++
			b.WriteByte(p[i])
		case '%', '_':
			t.Fatalf("pattern %q has a bare wildcard", p)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
