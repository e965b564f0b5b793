package filterby

import (
	"reflect"
	"testing"
	"time"
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
		f, err := ParseOne(tc.in)
		if err != nil {
			t.Fatalf("ParseOne(%q): %v", tc.in, err)
		}
		sql, args := f.SQL()
		if sql != tc.sql || !reflect.DeepEqual(args, tc.args) {
			t.Errorf("%q.SQL() = %q %v, want %q %v", tc.in, sql, args, tc.sql, tc.args)
		}
	}
}

func TestHandMadeFilterCannotInject(t *testing.T) {
	for _, f := range []Filter{
		{Field: "name", Column: "1=1; DROP TABLE pods; --", Op: Eq, Value: "x"},
		{Field: "name); DROP TABLE pods; --", Column: "name", Op: Eq, Value: "x"},
		{Field: "name", Op: "OR 1=1 --", Value: "x"},
		{},
	} {
		sql, _ := f.SQL()
		if sql != "name = ?" && sql != never {
			t.Errorf("%+v.SQL() = %q", f, sql)
		}
	}
}

func TestWhere(t *testing.T) {
	if sql, args := Where(nil); sql != "" || args != nil {
		t.Errorf("Where(nil) = %q %v", sql, args)
	}
	fs, err := Parse([]string{"name=@a,nodeName!=b", "createdAt>=2024-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	sql, args := Where(fs)
	want := `name LIKE ? ESCAPE '\' AND (node_name IS NULL OR node_name <> ?) AND created_at >= ?`
	if sql != want {
		t.Errorf("Where = %q, want %q", sql, want)
	}
	wantArgs := []any{"%a%", "b", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	if !reflect.DeepEqual(args, wantArgs) {
		t.Errorf("Where args = %v, want %v", args, wantArgs)
	}
}
