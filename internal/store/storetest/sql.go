package storetest

import (
	"testing"

	"gpugraph/internal/store"
)

// The statements a test outside the store sets its stage with or checks
// the database by (a row aged, a table taken away, rows counted): they run
// here, beside the store, so that no test outside it reaches into
// Store.DB. Each fails the test when its statement fails.

// Exec runs one statement.
func Exec(tb testing.TB, st *store.Store, sql string, args ...any) {
	tb.Helper()
	if err := st.DB.Exec(sql, args...).Error; err != nil {
		tb.Fatalf("storetest: %s: %v", sql, err)
	}
}

// Scan runs one query and scans what it answers into dest (a value for a
// single column of one row, a slice or struct otherwise).
func Scan(tb testing.TB, st *store.Store, dest any, sql string, args ...any) {
	tb.Helper()
	if err := st.DB.Raw(sql, args...).Scan(dest).Error; err != nil {
		tb.Fatalf("storetest: %s: %v", sql, err)
	}
}

// Count counts the rows of table that match where ("" for all of them), a
// condition whose values are args, bound as parameters.
func Count(tb testing.TB, st *store.Store, table, where string, args ...any) int64 {
	tb.Helper()
	q := st.DB.Table(table)
	if where != "" {
		q = q.Where(where, args...)
	}
	var n int64
	if err := q.Count(&n).Error; err != nil {
		tb.Fatalf("storetest: count %s: %v", table, err)
	}
	return n
}
