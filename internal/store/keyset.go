package store

import (
	"strings"

	"gorm.io/gorm"
)

// Keyset pages: a page after a cursor reads the rows that come after the
// cursor's row in the list's order, by a condition on the sort columns and
// the id, instead of skipping an offset. Rows inserted or removed before
// the cursor then shift nothing: a reader never sees a row twice or misses
// one that was there all along. The column names come from the store's own
// code, never from input; values travel as bound parameters.

// After is the row a keyset page starts after: the values of the list's
// sort columns, in order (nil where the row's value is null), and its id.
type After struct {
	Values []any
	ID     string
}

// SortKey is one column of a keyset order.
type SortKey struct {
	Column string
	// Desc orders the column descending.
	Desc bool
	// NullsFirst puts nulls before every value; otherwise they come last.
	NullsFirst bool
}

// keysetSQL is the condition "comes after a" in the order keys then id;
// id runs in the direction of the last key (ascending when there is none).
func keysetSQL(keys []SortKey, a After) (string, []any) {
	idDesc := len(keys) > 0 && keys[len(keys)-1].Desc
	op := ">"
	if idDesc {
		op = "<"
	}
	cond, args := "id "+op+" ?", []any{a.ID}
	// Built from the last key outwards: after on key i is "strictly after
	// on key i, or equal on key i and after on the keys that follow".
	for i := len(keys) - 1; i >= 0; i-- {
		k, v := keys[i], a.Values[i]
		c := k.Column
		op := ">"
		if k.Desc {
			op = "<"
		}
		if v == nil {
			// Among nulls: the rest decides; after the nulls come the
			// values when nulls come first, nothing when they come last.
			s := "(" + c + " IS NULL AND (" + cond + "))"
			if k.NullsFirst {
				s = "(" + s + " OR " + c + " IS NOT NULL)"
			}
			cond = s
			continue
		}
		parts := []string{c + " " + op + " ?", "(" + c + " = ? AND (" + cond + "))"}
		next := append([]any{v, v}, args...)
		if !k.NullsFirst {
			parts = append(parts, c+" IS NULL")
		}
		cond, args = "("+strings.Join(parts, " OR ")+")", next
	}
	return cond, args
}

// keysetOrder is the ORDER BY of keys then id, nulls placed explicitly so
// both engines agree.
func keysetOrder(keys []SortKey) string {
	var parts []string
	idDesc := false
	for _, k := range keys {
		dir := ""
		if k.Desc {
			dir = " DESC"
		}
		if k.NullsFirst {
			parts = append(parts, "("+k.Column+" IS NULL) DESC")
		} else {
			parts = append(parts, "("+k.Column+" IS NULL)")
		}
		parts = append(parts, k.Column+dir)
		idDesc = k.Desc
	}
	if idDesc {
		return strings.Join(append(parts, "id DESC"), ", ")
	}
	return strings.Join(append(parts, "id"), ", ")
}

// keysetPage reads limit rows of db after a in the order keys, one more to
// know whether more follow, and counts db's rows first when count.
func keysetPage[T any](db *gorm.DB, keys []SortKey, a *After, limit int, count bool, out *[]*T) ([]*T, bool, int64, error) {
	var total int64
	if count {
		if err := db.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return nil, false, 0, err
		}
	}
	if a != nil {
		cond, args := keysetSQL(keys, *a)
		db = db.Where(cond, args...)
	}
	if err := db.Order(keysetOrder(keys)).Limit(limit + 1).Find(out).Error; err != nil {
		return nil, false, 0, err
	}
	rows := *out
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	return rows, more, total, nil
}
