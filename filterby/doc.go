// Package filterby turns the Run:ai pods list parameters filterBy, sortBy and
// sortOrder into SQL for the pods table, the same on SQLite and PostgreSQL.
//
// A filter is "field op value", e.g. "nodeName!=node-1" or
// "createdAt>=2024-01-01T00:00:00Z". Parse reads the filterBy parameters and
// Where compiles them into one boolean expression with ? placeholders, ready
// for gorm:
//
//	q := r.URL.Query()
//	filters, err := filterby.Parse(q["filterBy"])
//	if err != nil { /* 400 with err.Error() */ }
//	order, err := filterby.ParseSort(q.Get("sortBy"), q.Get("sortOrder"))
//	if err != nil { /* 400 with err.Error() */ }
//	db = db.Table("pods").Scopes(filterby.Scope(filters)).Order(order.OrderBy())
//
// Safety: every value travels as a bound parameter, and every column name in
// the SQL comes from this package's fixed field table, so no byte of the
// input ever reaches the SQL text.
//
// Semantics, shared by both engines:
//   - Fields and operators are case-sensitive.
//   - String operators are case-sensitive; %, _ and \ in a value are literal.
//     <= and >= compare strings in byte order (the columns are COLLATE "C"
//     on PostgreSQL, BINARY on SQLite).
//   - A null field matches != and !@ and nothing else.
//   - Dates take ==, !=, <= and >= only and compare as instants. A date must
//     carry a zone (Z or an offset); one without is rejected rather than
//     guessed. The database keeps microseconds, so a date with finer digits
//     is compared exactly: <= rounds it down, >= rounds it up, and == matches
//     no row.
//   - Filters combine with AND. One parameter may hold several filters
//     joined by commas, see Parse.
//
// OrderBy places nulls explicitly, so it orders alike on both engines;
// PostgresOrderBy is the same order for PostgreSQL alone, which places nulls
// that way by itself, so that plain (…, column, id) indexes serve it.
//
// SQL uses the bare column names of the pods table, so the query it is put
// into must not join another table that shares them unqualified.
package filterby
