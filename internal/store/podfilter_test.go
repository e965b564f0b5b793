package store_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/store"
)

func TestFilterSQL(t *testing.T) {
	at := time.Date(2024, 1, 1, 10, 0, 0, 500_000_000, time.UTC)
	lo := time.Date(2024, 1, 1, 10, 0, 0, 500_000_000, time.UTC)
	hi := lo.Add(time.Microsecond)
	for _, tc := range []struct {
		in   string
		sql  string
		args []any
	}{
		{"nodeName==a", "node_name = ?", []any{"a"}},
		{"nodeName!=a", "(node_name IS NULL OR node_name <> ?)", []any{"a"}},
		{"nodeName<=a", "node_name <= ?", []any{"a"}},
		{"nodeName>=a", "node_name >= ?", []any{"a"}},
		{`nodeName=@5%_\x`, `node_name LIKE ? ESCAPE '\'`, []any{`%5\%\_\\x%`}},
		{`nodeName!@5%`, `(node_name IS NULL OR node_name NOT LIKE ? ESCAPE '\')`, []any{`%5\%%`}},
		{`nodeName=^a_`, `node_name LIKE ? ESCAPE '\'`, []any{`a\_%`}},
		{`nodeName=$%a`, `node_name LIKE ? ESCAPE '\'`, []any{`%\%a`}},
		{"currentNodePool==d", "current_node_pool = ?", []any{"d"}},
		{"createdAt==2024-01-01T12:00:00.5+02:00", "created_at = ?", []any{at}},
		{"createdAt!=2024-01-01T10:00:00.5Z", "(created_at IS NULL OR created_at <> ?)", []any{at}},
		{"createdAt<=2024-01-01T10:00:00.5Z", "created_at <= ?", []any{at}},
		{"createdAt>=2024-01-01T10:00:00.5Z", "created_at >= ?", []any{at}},
		// Finer than the database's microseconds: rounded to stay exact.
		{"deletedAt<=2024-01-01T10:00:00.5000001Z", "deleted_at <= ?", []any{lo}},
		{"deletedAt>=2024-01-01T10:00:00.5000001Z", "deleted_at >= ?", []any{hi}},
		{"deletedAt==2024-01-01T10:00:00.5000001Z", "(deleted_at >= ? AND deleted_at <= ?)", []any{hi, lo}},
		{"deletedAt!=2024-01-01T10:00:00.5000001Z", "(deleted_at IS NULL OR deleted_at < ? OR deleted_at > ?)", []any{hi, lo}},
	} {
		f, err := filterby.ParseOne(tc.in)
		if err != nil {
			t.Fatalf("ParseOne(%q): %v", tc.in, err)
		}
		sql, args := store.FilterSQL(f)
		if sql != tc.sql || !reflect.DeepEqual(args, tc.args) {
			t.Errorf("%q compiles to %q %v, want %q %v", tc.in, sql, args, tc.sql, tc.args)
		}
	}
}

func TestHandMadeFilterCannotInject(t *testing.T) {
	for _, f := range []filterby.Filter{
		{Field: "name); DROP TABLE pods; --", Op: filterby.Eq, Value: "x"},
		{Field: "name", Op: "OR 1=1 --", Value: "x"},
		{Field: "id", Op: filterby.Eq, Value: "x"}, // a pod field filterBy does not take
		{},
	} {
		sql, _ := store.FilterSQL(f)
		if sql != store.NeverSQL {
			t.Errorf("%+v compiles to %q", f, sql)
		}
	}
}

func TestFiltersSQL(t *testing.T) {
	if sql, args := store.FiltersSQL(nil); sql != "" || args != nil {
		t.Errorf("FiltersSQL(nil) = %q %v", sql, args)
	}
	fs, err := filterby.Parse([]string{"name=@a,nodeName!=b", "createdAt>=2024-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	sql, args := store.FiltersSQL(fs)
	want := `name LIKE ? ESCAPE '\' AND (node_name IS NULL OR node_name <> ?) AND created_at >= ?`
	if sql != want {
		t.Errorf("FiltersSQL = %q, want %q", sql, want)
	}
	wantArgs := []any{"%a%", "b", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	if !reflect.DeepEqual(args, wantArgs) {
		t.Errorf("FiltersSQL args = %v, want %v", args, wantArgs)
	}
}

func TestOrderSQL(t *testing.T) {
	for _, tc := range []struct {
		by, order string
		orderBy   string
	}{
		{"", "", "created_at, id"},
		{"", "desc", "created_at DESC, id DESC"},
		{"name", "asc", "name, id"},
		{"clusterId", "", "cluster_id, id"},
		{"workloadId", "desc", "workload_id DESC, id DESC"},
		{"revisionId", "", "(revision_id IS NULL), revision_id, id"},
		{"nodeName", "desc", "(node_name IS NULL) DESC, node_name DESC, id DESC"},
		{"currentNodepool", "", "(current_node_pool IS NULL), current_node_pool, id"},
		{"currentNodePool", "", "(current_node_pool IS NULL), current_node_pool, id"},
		{"createdAt", "", "created_at, id"},
		{"completedAt", "", "(completed_at IS NULL), completed_at, id"},
		{"deletedAt", "desc", "(deleted_at IS NULL) DESC, deleted_at DESC, id DESC"},
		{"k8sPhase", "", "k8s_phase, id"},
	} {
		s, err := filterby.ParseSort(tc.by, tc.order)
		if err != nil {
			t.Errorf("ParseSort(%q, %q): %v", tc.by, tc.order, err)
			continue
		}
		if got := store.OrderSQL(s, false); got != tc.orderBy {
			t.Errorf("ParseSort(%q, %q) orders by %q, want %q", tc.by, tc.order, got, tc.orderBy)
		}
		// PostgreSQL's own null placement is the portable order's: the
		// null key goes.
		pg := tc.orderBy
		if i := strings.Index(pg, " IS NULL)"); i >= 0 {
			pg = pg[strings.Index(pg, ", ")+2:]
		}
		if got := store.OrderSQL(s, true); got != pg {
			t.Errorf("ParseSort(%q, %q) orders PostgreSQL by %q, want %q", tc.by, tc.order, got, pg)
		}
	}
	if got, want := store.OrderSQL(filterby.Sort{}, false), "created_at, id"; got != want {
		t.Errorf("zero Sort orders by %q, want %q", got, want)
	}
	if got, want := store.OrderSQL(filterby.Sort{Field: "id; DROP TABLE pods"}, false), "created_at, id"; got != want {
		t.Errorf("hand-made Sort orders by %q, want %q", got, want)
	}
	if got, want := store.OrderSQL(filterby.Sort{Field: "id; DROP TABLE pods", Order: filterby.Desc}, true), "created_at DESC, id DESC"; got != want {
		t.Errorf("hand-made Sort orders PostgreSQL by %q, want %q", got, want)
	}
}

// filterTemplates is every SQL text a filter can compile to, built from
// fixed values. A fuzzed filter's SQL must be one of them: then it depends
// only on the field and operator, and no byte of the value can be in it.
var filterTemplates = func() map[string]bool {
	m := map[string]bool{store.NeverSQL: true}
	exact := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, fd := range podfield.All() {
		for _, op := range filterby.Ops {
			f := filterby.Filter{Field: fd.Name(), Op: op, Value: "x", Time: exact}
			s, _ := store.FilterSQL(f)
			m[s] = true
			if fd.Kind == podfield.Date {
				f.Time = exact.Add(time.Nanosecond)
				s, _ = store.FilterSQL(f)
				m[s] = true
			}
		}
	}
	return m
}()

// FuzzFilterSQL checks that whatever filterby accepts compiles to a fixed
// template whose bound values give the filter's value back exactly.
func FuzzFilterSQL(f *testing.F) {
	for _, s := range []string{
		"name==a", "name!=a", "name<=a", "name>=a", "name=@a", "name!@a", "name=^a", "name=$a",
		"nodeName!=some-node-name", "currentNodePool==default", "currentNodepool=^d",
		"k8sPhase==Running", "projectId==1", "priorityClassName=@high",
		"clusterId==c,workloadId==w", "revisionId==r,x", "name==a,b,nodeName==c",
		`name=@50%_\`, "name==é", "name==' OR 1=1 --", `name=="; DROP TABLE pods; --`,
		"createdAt>=2024-01-01T00:00:00Z", "completedAt<=2024-01-01T12:00:00.123456789+02:00",
		"deletedAt==2024-01-01t00:00z", "createdAt!=2024-01-01T00:00:00,5-0530",
		"createdAt>=0001-01-01T00:00:00+01:00", "createdAt>=9999-12-31T23:59:59.999999999Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := filterby.Parse([]string{s})
		if err != nil {
			return // filterby's own fuzz test checks its errors
		}
		for _, f := range fs {
			checkFilterSQL(t, f)
		}
		sql, args := store.FiltersSQL(fs)
		if strings.Count(sql, "?") != len(args) {
			t.Fatalf("FiltersSQL(%q) = %q with %d args", s, sql, len(args))
		}
	})
}

func checkFilterSQL(t *testing.T, f filterby.Filter) {
	t.Helper()
	fd, ok := podfield.ByParam(f.Field)
	if !ok {
		t.Fatalf("%q parses to unknown field %q", f.Raw, f.Field)
	}
	sql, args := store.FilterSQL(f)
	if !filterTemplates[sql] {
		t.Fatalf("%q compiles to %q, not a fixed template", f.Raw, sql)
	}
	if !strings.Contains(sql, fd.Column) || strings.Count(sql, "?") != len(args) {
		t.Fatalf("%q compiles to %q %v", f.Raw, sql, args)
	}
	if f.IsTime {
		for _, a := range args {
			if tm, ok := a.(time.Time); !ok || tm.Location() != time.UTC || tm.Sub(f.Time).Abs() >= time.Microsecond ||
				tm.Year() < 1 || tm.Year() > 9999 {
				t.Fatalf("%q binds %#v for %v", f.Raw, a, f.Time)
			}
		}
		return
	}
	// The bound pattern or string gives back the value exactly.
	pattern := args[0].(string)
	switch f.Op {
	case filterby.Contains, filterby.NotContains:
		pattern = strings.TrimSuffix(strings.TrimPrefix(pattern, "%"), "%")
	case filterby.StartsWith:
		pattern = strings.TrimSuffix(pattern, "%")
	case filterby.EndsWith:
		pattern = strings.TrimPrefix(pattern, "%")
	}
	if !f.Op.ForDates() {
		var err error
		if pattern, err = unescapeLike(pattern); err != nil {
			t.Fatalf("%q: %v", f.Raw, err)
		}
	}
	if pattern != f.Value {
		t.Fatalf("%q binds %q, which reads back as %q", f.Raw, args[0], pattern)
	}
}

// unescapeLike reads an escaped LIKE pattern back, failing on a wildcard
// that is not escaped: one would match more than the value.
func unescapeLike(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 == len(p) {
				return "", fmt.Errorf("pattern %q ends in an escape", p)
			}
			i++
			b.WriteByte(p[i])
		case '%', '_':
			return "", fmt.Errorf("pattern %q has a bare wildcard", p)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
