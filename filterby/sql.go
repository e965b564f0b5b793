package filterby

import (
	"strings"
	"time"

	"gorm.io/gorm"
)

// likeEscape is the LIKE escape character; both engines read '\' in SQL text
// as one backslash (PostgreSQL with standard_conforming_strings, its default).
const likeEscape = ` ESCAPE '\'`

// never is the expression for a Filter that Parse would not have made.
const never = "1 = 0"

// SQL compiles f into one boolean SQL expression with ? placeholders and the
// values to bind to them, in order. The column is looked up from f.Field in
// the package's fixed field table, never taken from f.Column, so a Filter
// built by hand cannot inject SQL; one naming an unknown field or operator
// matches no row.
//
// Text values bind as strings; dates bind as time.Time in UTC, which is how
// the store keeps instants (SQLite compares them as text, so zones must match).
func (f Filter) SQL() (string, []any) {
	fd, ok := fields[f.Field]
	if !ok {
		return never, nil
	}
	c := fd.column
	if fd.date {
		return timeSQL(c, f.Op, f.Time)
	}
	v := f.Value
	switch f.Op {
	case Eq:
		return c + " = ?", []any{v}
	case Ne:
		return "(" + c + " IS NULL OR " + c + " <> ?)", []any{v}
	case Le:
		return c + " <= ?", []any{v}
	case Ge:
		return c + " >= ?", []any{v}
	case Contains:
		return c + " LIKE ?" + likeEscape, []any{"%" + escapeLike(v) + "%"}
	case NotContains:
		return "(" + c + " IS NULL OR " + c + " NOT LIKE ?" + likeEscape + ")", []any{"%" + escapeLike(v) + "%"}
	case StartsWith:
		return c + " LIKE ?" + likeEscape, []any{escapeLike(v) + "%"}
	case EndsWith:
		return c + " LIKE ?" + likeEscape, []any{"%" + escapeLike(v)}
	}
	return never, nil
}

// timeSQL compares column c with instant t. The database keeps microseconds
// and pgx truncates finer digits while SQLite compares them as text, so a
// finer t is first rounded the way that keeps the comparison exact on both:
// down for <=, up for >=, and == then matches nothing.
func timeSQL(c string, op Op, t time.Time) (string, []any) {
	t = t.UTC()
	lo := t.Truncate(time.Microsecond)
	hi := lo
	if !lo.Equal(t) {
		hi = lo.Add(time.Microsecond)
	}
	exact := lo.Equal(hi)
	switch op {
	case Eq:
		if exact {
			return c + " = ?", []any{lo}
		}
		return "(" + c + " >= ? AND " + c + " <= ?)", []any{hi, lo}
	case Ne:
		if exact {
			return "(" + c + " IS NULL OR " + c + " <> ?)", []any{lo}
		}
		return "(" + c + " IS NULL OR " + c + " < ? OR " + c + " > ?)", []any{hi, lo}
	case Le:
		return c + " <= ?", []any{lo}
	case Ge:
		return c + " >= ?", []any{hi}
	}
	return never, nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// escapeLike makes every byte of v match itself in a LIKE pattern.
func escapeLike(v string) string { return likeEscaper.Replace(v) }

// Where compiles filters into one expression, their AND, with its values;
// "" and nil when there are none. Every OR is parenthesised, so the result
// can be ANDed with other conditions as is:
//
//	if sql, args := filterby.Where(filters); sql != "" {
//		db = db.Where(sql, args...)
//	}
func Where(filters []Filter) (string, []any) {
	if len(filters) == 0 {
		return "", nil
	}
	parts := make([]string, 0, len(filters))
	var args []any
	for _, f := range filters {
		s, a := f.SQL()
		parts = append(parts, s)
		args = append(args, a...)
	}
	return strings.Join(parts, " AND "), args
}

// Scope is Where as a gorm scope: db.Scopes(filterby.Scope(filters)).
func Scope(filters []Filter) func(*gorm.DB) *gorm.DB {
	sql, args := Where(filters)
	return func(db *gorm.DB) *gorm.DB {
		if sql == "" {
			return db
		}
		return db.Where(sql, args...)
	}
}
