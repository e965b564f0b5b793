// Package filterby reads the Run:ai pods list parameters filterBy, sortBy and
// sortOrder into data: a []Filter and a Sort, which the store compiles to
// SQL. The fields it knows are those of the pod-field registry (podfield)
// that filterBy or sortBy take.
//
// A filter is "field op value", e.g. "nodeName!=node-1" or
// "createdAt>=2024-01-01T00:00:00Z":
//
//	q := r.URL.Query()
//	filters, err := filterby.Parse(q["filterBy"])
//	if err != nil { /* 400 with err.Error() */ }
//	order, err := filterby.ParseSort(q.Get("sortBy"), q.Get("sortOrder"))
//	if err != nil { /* 400 with err.Error() */ }
//	pods, more, err := st.PodPage(ctx, store.PodQuery{Filters: filters, Sort: order, …}, offset, limit)
//
// The GraphQL enums PodSortField and SortOrder bind to SortField and Order,
// so both faces hand the store the same Sort.
//
// Semantics, which the store implements alike on both engines:
//   - Fields and operators are case-sensitive.
//   - String operators are case-sensitive; %, _ and \ in a value are literal.
//     <= and >= compare strings in byte order.
//   - A null field matches != and !@ and nothing else.
//   - Dates take ==, !=, <= and >= only and compare as instants. A date must
//     carry a zone (Z or an offset); one without is rejected rather than
//     guessed. The database keeps microseconds, so a date with finer digits
//     is compared exactly: <= rounds it down, >= rounds it up, and == matches
//     no row.
//   - Filters combine with AND. One parameter may hold several filters
//     joined by commas, see Parse.
//   - An order puts nulls last in asc, and desc is its exact reverse; ties
//     are broken by id, so offset pages never repeat or skip a pod.
//
// The package is pure: it writes no SQL and imports neither a database nor
// HTTP package.
package filterby
