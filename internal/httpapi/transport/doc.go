// Package transport holds the GraphQL transports of /graphql, as gqlgen's
// graphql/handler/transport holds its own: POST, GET, SSE and Websocket
// are gqlgen's, each with what this server changes (bodies and parameters
// read strictly, one error shape, the answer written without a second
// parse, the WebSocket's init deadline and credential cap), and
// Unsupported answers what none takes. WriteError is the GraphQL shape of
// a refusal before any operation, which the gate and the server use too.
//
// It knows requests and gqlgen's executor, not the store or the services:
// a WebSocket's credential is looked up through the Authenticator it is
// handed, and its caps are the gate's (Conns).
package transport
