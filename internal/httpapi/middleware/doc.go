// Package middleware holds the HTTP middleware every route passes
// through: the gate (Gate.Route: the request timeout, the body read whole
// under its own deadline and memory budget, the public budget with each
// credential's share, authentication, the per-credential rate limits;
// WebSocket connection caps), response compression, the request metrics,
// and the JSON answers to what the mux does not route.
//
// A route's policy is declared where it is registered (Route, with its
// route.Policy): its body bound, rate class, whether it is public
// traffic, and the API whose error shape its refusals take; no middleware
// reads the request's path to decide it. The REST APIs' error shapes are
// package route's, below both faces: the middleware knows neither face,
// nor GraphQL's executor, transports or dataloaders. The server hands the
// gate the test of a stream's request (transport.IsStream) and each
// GraphQL route its error writer, and builds /graphql's dataloaders on
// that route alone.
package middleware
