package store

import (
	"database/sql/driver"
	"strings"
)

// in is the condition "col is one of keys" with its one argument: on
// PostgreSQL `col = ANY(?)` over one text[] value, so a batch of 400 keys is
// one bound parameter and one statement text whatever the count (an IN
// list is a new statement of its own per length, with a placeholder per
// key); on SQLite, which has no arrays, `col IN ?`. col is always a
// constant of this package, never input.
func (s *Store) in(col string, keys []string) (string, any) {
	if s.Dialect == Postgres {
		return col + " = ANY(?)", textArray(keys)
	}
	return col + " IN ?", keys
}

// textArray is a text[] parameter, sent as PostgreSQL's array literal.
// Being a driver.Valuer, gorm binds it as one value instead of expanding
// the slice into a list.
type textArray []string

var arrayEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func (a textArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(arrayEscaper.Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}
