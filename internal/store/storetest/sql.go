package storetest

import (
	"sync"
	"testing"

	"gpugraph/internal/store"
	"gpugraph/internal/store/sqlcount"
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

// Insert writes rows (a model, or a slice of them) as they are, as the
// store's own writes would not: a stage no API builds (rows with chosen
// ids, timestamps or orders).
func Insert(tb testing.TB, st *store.Store, rows any) {
	tb.Helper()
	if err := st.DB.Create(rows).Error; err != nil {
		tb.Fatalf("storetest: insert %T: %v", rows, err)
	}
}

// CountStatements counts every SQL statement run on st from now on
// (sqlcount.Register on its database): what a request, a job or a read
// costs.
func CountStatements(tb testing.TB, st *store.Store) *sqlcount.Counter {
	tb.Helper()
	c, err := sqlcount.Register(st.DB)
	if err != nil {
		tb.Fatalf("storetest: count statements: %v", err)
	}
	return c
}

// Lock begins a transaction, runs stmts in it (a LOCK TABLE on
// PostgreSQL; on SQLite a write, which takes its one write lock), and
// holds what they took until release rolls it back, or the test ends:
// to keep the server's statements waiting as long as a test wants.
func Lock(tb testing.TB, st *store.Store, stmts ...string) (release func()) {
	tb.Helper()
	tx := st.DB.Begin()
	if tx.Error != nil {
		tb.Fatalf("storetest: begin: %v", tx.Error)
	}
	var once sync.Once
	release = func() { once.Do(func() { tx.Rollback() }) }
	tb.Cleanup(release)
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			release()
			tb.Fatalf("storetest: %s: %v", s, err)
		}
	}
	return release
}

// HasColumn reports whether table has column (a column a migration adds
// on one engine only).
func HasColumn(st *store.Store, table, column string) bool {
	return st.DB.Migrator().HasColumn(table, column)
}

// Take reads the one row of table that matches where ("" for any, a
// condition whose values are args, bound as parameters) into dest, a
// model's struct, and fails the test when there is none. Only where
// selects the row: what dest holds already (its primary key) does not.
func Take(tb testing.TB, st *store.Store, dest any, table, where string, args ...any) {
	tb.Helper()
	q := "SELECT * FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	res := st.DB.Raw(q+" LIMIT 1", args...).Scan(dest)
	if res.Error != nil {
		tb.Fatalf("storetest: %s: %v", q, res.Error)
	}
	if res.RowsAffected == 0 {
		tb.Fatalf("storetest: %s %v: no row", q, args)
	}
}
