package agent

import "gpugraph/internal/agent/agentapi"

// Runtime runs the VMs and pods the server assigns to the node. The
// reporter hands it the server's list after every accepted report and
// sends what it reports in the next heartbeat. A nil Runtime runs nothing
// and reports nothing: the server then leaves the rows as they are, and a
// deploying one fails after the server's --provision-timeout. The
// simulated runtime of --mock is sim.Runtime (package internal/agent/sim).
type Runtime interface {
	// Assign replaces the set of workloads that should run: new ids or
	// generations start, ids no longer listed are dropped.
	Assign(as []agentapi.Assignment)
	// Report is the state of every assigned workload, by id.
	Report() []agentapi.WorkloadReport
}
