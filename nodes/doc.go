// Package nodes is the service behind the node agent's reports (POST
// /v1/agent/inventory and /v1/agent/heartbeat): it says who reported
// (Service.Identify: a node credential, or in legacy mode an API key),
// checks the report, whose shape is agentapi's, and hands it to the store,
// which registers the node, records its GPUs' state and moves its status.
//
// Every refusal is an *apierr.Error; the agent sends its inventory again on
// a 404 from a heartbeat.
package nodes
