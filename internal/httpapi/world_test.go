package httpapi_test

import (
	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
)

// The suite's names for servertest's world (servertest.World), which the
// restart, operations, strictness and idempotency tests build their cases
// on.

const (
	h100 = servertest.H100
	mi3  = servertest.MI300X
)

var (
	created     = servertest.Created
	newWorld    = servertest.World
	addNode     = servertest.AddNode
	failGPU     = servertest.FailGPU
	resetWorld  = servertest.ResetWorld
	resetOps    = servertest.ResetOps
	fixtureJSON = servertest.FixtureJSON
	holders     = servertest.Holders
	heldBy      = servertest.HeldBy
	vmRow       = servertest.VMRow
	eventsOf    = servertest.EventsOf
	keyActor    = servertest.KeyActor
	sameStrings = servertest.SameStrings
)

// vmSpec is a VM or pod to add to the world, as the suite writes it.
type vmSpec struct {
	id, org, node, status, reason string
	pod                           bool
	model                         string // "" for CPU-only
	gpus                          int
	held                          []string
	cpu, ram, disk                int
	tearingDown                   bool
	managedBy                     string
}

// addVM adds s to f (servertest.AddVM).
func addVM(f *dataset.File, s vmSpec) {
	servertest.AddVM(f, servertest.VMSpec{ID: s.id, Org: s.org, Node: s.node, Status: s.status, Reason: s.reason, Pod: s.pod,
		Model: s.model, GPUs: s.gpus, Held: s.held, CPU: s.cpu, RAM: s.ram, Disk: s.disk, TearingDown: s.tearingDown, ManagedBy: s.managedBy})
}
