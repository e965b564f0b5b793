// Package route holds what the HTTP edge knows of a route besides its
// handler, declared where the route is registered: its Policy (body bound,
// rate class, public or infrastructure traffic, and the API it belongs
// to), and the error shapes of the REST APIs that API names (Run:ai's
// {"code", "message", "details"}, OpenRelay's {"error": {"code",
// "message"}}, the 401's challenge). The REST face writes its handlers'
// errors through it, the middleware the gate's refusals and the answers
// to paths no route takes, and the GraphQL route its challenge: it sits
// below all of them and imports none.
package route
