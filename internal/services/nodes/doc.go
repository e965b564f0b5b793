// Package nodes is the service behind the node agent's reports (POST
// /v1/agent/inventory and /v1/agent/heartbeat): it says who reported
// (Service.Identify: a node credential, or in legacy mode an API key),
// checks the report, whose shape is agentapi's, and decides what it does:
// which node it registers or updates and in which status, how its GPUs'
// rows match the inventory and which of them fail, which lifecycle
// transition each workload report causes (models.Lifecycle), what
// resumes. The store only locks, reads and writes, inside one transaction
// per report (store.Store.InTx), as package compute restarts a VM; a
// heartbeat that changes nothing is one conditional statement instead
// (quietHeartbeat, store.Store.RecordBeat).
//
// Every refusal is an *apierr.Error; the agent sends its inventory again on
// a 404 from a heartbeat.
package nodes
