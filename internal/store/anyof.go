package store

import "github.com/jackc/pgx/v5/pgtype"

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

// textArray is a text[] parameter, bound as an array value: pgx encodes it
// directly (an array literal would be written here and parsed back by the
// driver). Not being a slice, gorm binds it as one value instead of
// expanding it into a list.
func textArray(keys []string) pgtype.Array[string] {
	return pgtype.Array[string]{Elements: keys, Dims: []pgtype.ArrayDimension{{Length: int32(len(keys)), LowerBound: 1}}, Valid: true}
}
