package fieldmodel

import (
	"context"

	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/lib/podfield"
	"gpugraph/models"
)

// Declared is gpugraph's field model: every field of the schema's object
// types that gqlgen does not answer off a struct field alone, declared
// once; the narrowed types; the planned roots. From it come the generated
// resolvers of the Plain fields and their `resolver: true` (at make
// generate), the prefetch of every list, the columns the loaders and the
// pod pages read, and the plans. The package doc has the recipe for
// adding a field.
var Declared = NewRegistry(
	Load("VM", "node", loaders.NodeByID, vmNodeID, Plain, Reads("NodeID")),
	Load("VM", "gpus", loaders.GPUsByVM, vmID, Plain, SameKeyAs(loaders.VMByID), Reads("ID")),
	// Derived from the loader's rows by a resolver (resolvers/inventory.go).
	Load("VM", "gpuIds", loaders.GPUsByVM, vmID, SameKeyAs(loaders.VMByID), Reads("ID"), ReadsRows("ID")),
	Load("VM", "gpuModel", loaders.ModelByID, vmModelID, Plain, Reads("GPUModelID")),
	Load("VM", "gpuManufacturer", loaders.ModelByID, vmModelID, Reads("GPUModelID")),
	Load("VM", "gpuModelName", loaders.ModelByID, vmModelID, Reads("GPUModelID")),
	// Paged by its arguments (resolvers/lifecycle.go).
	Load("VM", "events", loaders.EventsByVM, vmID, SameKeyAs(loaders.VMByID), Reads("ID")),
	// Its live volume, read by the VMs' ids beside them where they are
	// read by id (a GPU's holder); the store's read is the organization's.
	Load("VM", "volume", loaders.VolumeByVM, vmID, Plain, SameKeyAs(loaders.VMByID), Reads("ID")),
	// Counted by the compute service for a pending row (resolvers/create.go).
	Derived[models.VM]("VM", "queuePosition", "ID", "Status"),
	// The closed usage's cost, summed by the VMs' ids in one statement a
	// level (loaders.CostByVM), once billing.read is checked
	// (resolvers/billing.go).
	Derived[models.VM]("VM", "costSoFar", "ID"),
	// The console's stored tail, read by the VMs' ids in one statement a
	// level (loaders.ConsoleByVM), once compute.read is checked
	// (resolvers/vmconsole.go); a pod's is null without a read.
	Derived[models.VM]("VM", "console", "ID", "CapabilityTier"),

	// Shared inventory, as VM.node.
	Load("Volume", "node", loaders.NodeByID, volumeNodeID, Plain, Reads("NodeID")),

	Load("Node", "gpus", loaders.GPUsByNode, nodeID, Plain, SameKeyAs(loaders.NodeByID), Reads("ID")),
	Load("Node", "vms", loaders.VMsByNode, nodeID, Plain, SameKeyAs(loaders.NodeByID), Reads("ID")),
	// Counted from the loader's rows by a resolver (resolvers/fields.go):
	// a tenant sees how many GPUs are free, not whose the others are.
	Load("Node", "freeGpuCount", loaders.GPUsByNode, nodeID, SameKeyAs(loaders.NodeByID), Reads("ID"), ReadsRows("Health", "HolderVMID")),

	// gqlgen reads Gpu.model off models.GPU.Model, which every list of
	// GPUs fills from the catalog loader when it is selected: a resolver
	// per GPU would cost a goroutine each on a page of thousands.
	Load("Gpu", "model", loaders.ModelByID, gpuModelID, Plain, Reads("ModelID"), Filled(fillGPUModels)),
	Load("Gpu", "vm", loaders.VMByID, gpuHolderID, Plain, Reads("HolderVMID")),
	// Whichever organization's, for the fleet's operator only: the loader
	// reads nothing for any other caller (loaders.HolderByVM).
	Load("Gpu", "holder", loaders.HolderByVM, gpuHolderID, Plain, Reads("HolderVMID")),
	Load("Gpu", "node", loaders.NodeByID, gpuNodeID, Plain, Reads("NodeID")),
	// A float of the integer column (resolvers/inventory.go).
	Derived[models.GPU]("Gpu", "memoryUsedBytes", "MemoryUsedBytes"),

	Load("Pod", "node", loaders.NodeByName, podNodeKey, Plain, Reads("NodeName", "ClusterID")),
	Load("Pod", "workload", loaders.WorkloadByID, podWorkloadID, Plain, Reads("WorkloadID")),
	// A page that selects both a pod's project and its workload's project
	// reads the projects in one statement.
	Load("Pod", "project", loaders.ProjectByID, podProjectID, NextLevel, Plain, Reads("ProjectID")),

	Load("Workload", "project", loaders.ProjectByID, workloadProjectID, Plain, Reads("ProjectID")),

	// A subscription's event is one object, never a list: nothing to
	// prefetch, but its resolver is generated the same way.
	Load("VmEvent", "vm", loaders.VMByID, eventVMID, Plain, Reads("VMID")),
	Load("NodeEvent", "node", loaders.NodeByID, nodeEventNodeID, Plain, Reads("NodeID")),

	// A query's loaders read nodes, GPUs and VMs narrowed to the columns
	// its fields of them read anywhere (loaders.Narrow), the store naming
	// the column of each Go field; a page of pods reads the columns of its
	// pods' fields (its id always), as the pod-field registry names them.
	Narrowed("Node", loaderColumns[models.Node]()),
	Narrowed("Gpu", loaderColumns[models.GPU]()),
	Narrowed("VM", loaderColumns[models.VM]()),
	OnQuery(func(ctx context.Context, columns func(typ string) []string) {
		if l := loaders.For(ctx); l != nil {
			l.Narrow(loaders.Columns{Nodes: columns("Node"), GPUs: columns("Gpu"), VMs: columns("VM")})
		}
	}),
	Narrowed("Pod", podColumns, "id"),

	// The lists and pages a console reads in bulk.
	Planned("pods", "workloadPods", "revisionPods", "podsConnection",
		"vms", "vmsConnection",
		"nodes", "nodeList", "nodesConnection", "gpus",
		"workloads", "projects", "gpuModels"),
)

func vmID(v *models.VM) string                    { return v.ID }
func vmNodeID(v *models.VM) string                { return deref(v.NodeID) }
func vmModelID(v *models.VM) string               { return deref(v.GPUModelID) }
func nodeID(n *models.Node) string                { return n.ID }
func volumeNodeID(v *models.Volume) string        { return v.NodeID }
func gpuModelID(g *models.GPU) string             { return g.ModelID }
func gpuHolderID(g *models.GPU) string            { return deref(g.HolderVMID) }
func gpuNodeID(g *models.GPU) string              { return g.NodeID }
func podWorkloadID(p *models.Pod) string          { return p.WorkloadID }
func podProjectID(p *models.Pod) string           { return deref(p.ProjectID) }
func workloadProjectID(w *models.Workload) string { return w.ProjectID }
func eventVMID(e *models.VMEvent) string          { return e.VMID }
func nodeEventNodeID(e *models.NodeEvent) string  { return e.NodeID }

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

func fillGPUModels(ctx context.Context, gpus []*models.GPU) error {
	if l := loaders.For(ctx); l != nil {
		return l.FillGPUModels(ctx, gpus)
	}
	return nil
}

// loaderColumns are the columns of T's table that Go fields scan into, as
// the store names them (loaders.ColumnOf).
func loaderColumns[T any]() ColumnsOf {
	return func(_ string, goFields []string) ([]string, bool) {
		if goFields == nil {
			return nil, false
		}
		out := make([]string, 0, len(goFields))
		for _, f := range goFields {
			c, ok := loaders.ColumnOf[T](f)
			if !ok {
				return nil, false
			}
			out = append(out, c)
		}
		return out, true
	}
}

// podColumns are the pods columns a GraphQL Pod field reads, as the
// pod-field registry says.
func podColumns(field string, _ []string) ([]string, bool) {
	f, ok := podfield.ByJSON(field)
	if !ok {
		return nil, false
	}
	return f.Columns(), true
}
