package resolvers

import (
	"context"

	"gpugraph/loaders"
	"gpugraph/models"
	"gpugraph/resolvers/prefetch"
)

// A list resolver prefetches, level by level, what its query selects below
// the list: one statement per nested level and loader, read before the
// nested fields run and primed into the request's loaders, so the field
// resolvers below answer from the loaders' cache. Each nested field that
// loads is declared here once, beside its resolver in fields.go: the
// loader it loads from and the key it loads by, the same as the resolver's
// Load call. The walk is package prefetch; adding a field is its package
// doc's recipe. A field keyed by its parent's own id (SameKeyAs the loader
// that reads parents by id) is read beside its parents, not after them.
var prefetchFields = []prefetch.Field{
	prefetch.Load("VM", "node", loaders.NodeByID, vmNodeID, prefetch.Plain),
	prefetch.Load("VM", "gpus", loaders.GPUsByVM, vmID, prefetch.Plain, prefetch.SameKeyAs(loaders.VMByID)),
	prefetch.Load("VM", "gpuIds", loaders.GPUsByVM, vmID, prefetch.SameKeyAs(loaders.VMByID)),
	prefetch.Load("VM", "gpuModel", loaders.ModelByID, vmModelID, prefetch.Plain),
	prefetch.Load("VM", "gpuManufacturer", loaders.ModelByID, vmModelID),
	prefetch.Load("VM", "gpuModelName", loaders.ModelByID, vmModelID),
	prefetch.Load("VM", "events", loaders.EventsByVM, vmID, prefetch.SameKeyAs(loaders.VMByID)),

	prefetch.Load("Node", "gpus", loaders.GPUsByNode, nodeID, prefetch.Plain, prefetch.SameKeyAs(loaders.NodeByID)),
	prefetch.Load("Node", "vms", loaders.VMsByNode, nodeID, prefetch.Plain, prefetch.SameKeyAs(loaders.NodeByID)),

	prefetch.Load("Gpu", "model", loaders.ModelByID, func(g *models.GPU) string { return g.ModelID }, prefetch.Plain),
	prefetch.Load("Gpu", "vm", loaders.VMByID, func(g *models.GPU) string { return deref(g.HolderVMID) }, prefetch.Plain),
	prefetch.Load("Gpu", "node", loaders.NodeByID, func(g *models.GPU) string { return g.NodeID }, prefetch.Plain),

	prefetch.Load("Pod", "node", loaders.NodeByName, podNodeKey, prefetch.Plain),
	prefetch.Load("Pod", "workload", loaders.WorkloadByID, func(p *models.Pod) string { return p.WorkloadID }, prefetch.Plain),
	// A page that selects both a pod's project and its workload's project
	// reads the projects in one statement.
	prefetch.Load("Pod", "project", loaders.ProjectByID, func(p *models.Pod) string { return deref(p.ProjectID) }, prefetch.NextLevel, prefetch.Plain),

	prefetch.Load("Workload", "project", loaders.ProjectByID, func(w *models.Workload) string { return w.ProjectID }, prefetch.Plain),

	// A subscription's event is one object, never a list; declared for the
	// registry's completeness (live.go).
	prefetch.Load("VmEvent", "vm", loaders.VMByID, func(e *models.VMEvent) string { return e.VMID }),
	prefetch.Load("NodeEvent", "node", loaders.NodeByID, func(e *models.NodeEvent) string { return e.NodeID }),
}

var prefetchRegistry = prefetch.New(prefetchFields...)

// prefetchBelow prefetches what the list field being resolved selects below
// objects, the rows it answers; an error fails the list as a failed load
// would fail its field.
func prefetchBelow[T any](ctx context.Context, objects []*T) error {
	if loaders.For(ctx) == nil {
		return nil
	}
	return prefetch.Below(ctx, prefetchRegistry, objects)
}

func vmID(v *models.VM) string      { return v.ID }
func vmNodeID(v *models.VM) string  { return deref(v.NodeID) }
func vmModelID(v *models.VM) string { return deref(v.GPUModelID) }
func nodeID(n *models.Node) string  { return n.ID }
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// podNodeKey is the key of the node a pod names (zero when it names none).
func podNodeKey(p *models.Pod) loaders.NodeKey {
	if p.NodeName == nil {
		return loaders.NodeKey{}
	}
	return loaders.NodeKey{ClusterID: p.ClusterID, Name: *p.NodeName}
}
