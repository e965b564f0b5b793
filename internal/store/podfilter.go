package store

import (
	"strings"
	"time"

	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/podfield"
)

// The pods list's filters and orders, compiled from filterby's data. Every
// column name in the SQL comes from the pod-field registry (podfield) and
// every value travels as a bound parameter, so no byte of the input ever
// reaches the SQL text. The SQL uses the bare column names of the pods
// table: the query it goes into must not join a table that shares them.

// likeEscape is the LIKE escape clause; both engines read '\' in SQL text as
// one backslash (PostgreSQL with standard_conforming_strings, its default).
const likeEscape = ` ESCAPE '\'`

// never is the expression for a filter that filterby would not have made.
const never = "1 = 0"

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// escapeLike makes every byte of v match itself in a LIKE pattern with
// likeEscape.
func escapeLike(v string) string { return likeEscaper.Replace(v) }

// filterSQL compiles f into one boolean expression with ? placeholders and
// the values to bind to them, in order. The column is looked up from
// f.Field in the registry, so a filter built by hand cannot inject SQL; one
// naming an unknown field or operator matches no row.
//
// Text values bind as strings; dates bind as time.Time in UTC, which is how
// the store keeps instants (SQLite compares them as text, so zones must match).
func filterSQL(f filterby.Filter) (string, []any) {
	fd, ok := podfield.ByParam(f.Field)
	if !ok || !fd.Filter {
		return never, nil
	}
	c := fd.Column
	if fd.Kind == podfield.Date {
		return timeSQL(c, f.Op, f.Time)
	}
	v := f.Value
	switch f.Op {
	case filterby.Eq:
		return c + " = ?", []any{v}
	case filterby.Ne:
		return "(" + c + " IS NULL OR " + c + " <> ?)", []any{v}
	case filterby.Le:
		return c + " <= ?", []any{v}
	case filterby.Ge:
		return c + " >= ?", []any{v}
	case filterby.Contains:
		return c + " LIKE ?" + likeEscape, []any{"%" + escapeLike(v) + "%"}
	case filterby.NotContains:
		return "(" + c + " IS NULL OR " + c + " NOT LIKE ?" + likeEscape + ")", []any{"%" + escapeLike(v) + "%"}
	case filterby.StartsWith:
		return c + " LIKE ?" + likeEscape, []any{escapeLike(v) + "%"}
	case filterby.EndsWith:
		return c + " LIKE ?" + likeEscape, []any{"%" + escapeLike(v)}
	}
	return never, nil
}

// timeSQL compares column c with instant t. The database keeps microseconds
// and pgx truncates finer digits while SQLite compares them as text, so a
// finer t is first rounded the way that keeps the comparison exact on both:
// down for <=, up for >=, and == then matches nothing.
func timeSQL(c string, op filterby.Op, t time.Time) (string, []any) {
	t = t.UTC()
	lo := t.Truncate(time.Microsecond)
	hi := lo
	if !lo.Equal(t) {
		hi = lo.Add(time.Microsecond)
	}
	exact := lo.Equal(hi)
	switch op {
	case filterby.Eq:
		if exact {
			return c + " = ?", []any{lo}
		}
		return "(" + c + " >= ? AND " + c + " <= ?)", []any{hi, lo}
	case filterby.Ne:
		if exact {
			return "(" + c + " IS NULL OR " + c + " <> ?)", []any{lo}
		}
		return "(" + c + " IS NULL OR " + c + " < ? OR " + c + " > ?)", []any{hi, lo}
	case filterby.Le:
		return c + " <= ?", []any{lo}
	case filterby.Ge:
		return c + " >= ?", []any{hi}
	}
	return never, nil
}

// filtersSQL compiles filters into one expression, their AND, with its
// values; "" and nil when there are none. Every OR is parenthesised, so the
// result can be ANDed with other conditions as is.
func filtersSQL(filters []filterby.Filter) (string, []any) {
	if len(filters) == 0 {
		return "", nil
	}
	parts := make([]string, 0, len(filters))
	var args []any
	for _, f := range filters {
		s, a := filterSQL(f)
		parts = append(parts, s)
		args = append(args, a...)
	}
	return strings.Join(parts, " AND "), args
}

// orderSQL is the ORDER BY list for s, e.g. "(node_name IS NULL), node_name, id".
//
// Nulls come last in asc, and desc reverses every key, so desc is the exact
// reverse of asc. The final id breaks ties, so offset pages never repeat or
// skip a pod. The explicit null key is spelled out because the engines
// disagree on where nulls go by default; a NOT NULL column goes without it
// ("created_at, id"), which orders the same and lets an index on
// (…, created_at, id) serve the order on both engines.
//
// On PostgreSQL (postgres true) the null key is left out for every column:
// PostgreSQL itself puts nulls last in ascending order and first in
// descending order, which is exactly this order, and without the key its
// list indexes (0005_pods_indexes) on (…, node_name, id) serve the order and
// let an equality or prefix filter on the column bound the index range.
func orderSQL(s filterby.Sort, postgres bool) string {
	fd := s.PodField()
	c := fd.Column
	desc := s.Order == filterby.Desc
	switch {
	case (!fd.Nullable || postgres) && desc:
		return c + " DESC, id DESC"
	case !fd.Nullable || postgres:
		return c + ", id"
	case desc:
		return "(" + c + " IS NULL) DESC, " + c + " DESC, id DESC"
	}
	return "(" + c + " IS NULL), " + c + ", id"
}
