// Package extension holds the gqlgen handler extensions of /graphql, as
// gqlgen's graphql/handler/extension holds APQ, introspection and the
// complexity limit: the front of the pipeline that parses, bounds and
// validates a document before gqlgen's executor sees it (Documents, with
// DocLimits), the operation limits (Limits: depth, cost with list sizes
// and podMetrics' samples, aliases, root fields, list arguments), the
// introspection switch, repeated list values dropped (DistinctLists), the
// answer's size cap and the error presenter (ResponseCap, PresentError,
// Outcome), the budgets charged per operation (StreamBudget,
// RestartBudget, through the server's Gate), a mutation's idempotency key
// (Idempotency and Replay, keeping answers through package idempotency as
// REST does) and the operations' metrics.
//
// They see operations, not HTTP: no extension imports the store, the
// services or the HTTP middleware; what they ask of the gate is the Gate
// interface.
package extension
