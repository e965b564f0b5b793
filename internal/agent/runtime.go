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

// ConsoleReader is implemented by a Runtime that keeps each VM's serial
// console (the QEMU runtime's bounded file per VM; the simulator's boot
// lines). After every accepted heartbeat the reporter reads the tail of
// each VM assigned to the node and, when it changed since it was last
// pushed, PUTs its last agentapi.ConsoleBytes to the server
// (agentapi.ConsolePath), which keeps them for GET /v1/vms/{id}/console.
// A runtime without it pushes nothing.
type ConsoleReader interface {
	// ConsoleTail answers the end of VM id's serial console as the
	// runtime keeps it (the reporter keeps at most the last
	// agentapi.ConsoleBytes of it); nil when it has none (yet): not a VM
	// of this runtime, or nothing written.
	ConsoleTail(id string) ([]byte, error)
}
