// Package rowfield is the registry of the fields of the compute and
// inventory rows, as podfield is the pod's: for each VM, node and GPU
// field, its column and the Go field of the row a read scans it into; its
// key (the REST object's and the fixture's, and the GraphQL field's) is
// that Go field's json tag. Every reader and writer of those fields reads
// the registry:
//
//   - the store's reads of nodes, GPUs and VMs scan its columns, in its
//     order (internal/store/scan.go), and name the column of each Go field for the
//     GraphQL face's narrowing (store.ColumnOf);
//   - the REST VM object (internal/httpapi/rest/vm.go) writes its keys: the seed's first,
//     in key order, then gpugraph's own in the registry's order;
//   - the fixture reads models' json tags (package dataset), and its
//     writer (internal/dataset/format) is held to the registry's keys and order;
//   - GraphQL binds the schema's fields to the same Go fields, and
//     fieldmodel narrows and plans them through the binding.
//
// It imports nothing but models, so that store, rest, dataset and their
// tests import it without a cycle, SQL or HTTP.
//
// # Adding a VM field
//
//  1. Add the Go field to models.VM, its json tag the field's key, and a
//     migration adding its column (internal/store/migrations, both engines).
//  2. Add one entry to VM below: its column, where a read scans it (Into),
//     Seed when OpenRelay's VM object has the key, OmitNull when the REST
//     object leaves the key out rather than write null.
//  3. Add the field to the VM type of schema.graphqls (the same name) and
//     run make generate; add the key to the VM object of
//     internal/httpapi/rest/openapi/gpugraph.json.
//
// The store reads it, REST writes it, a fixture loads it, GraphQL answers,
// narrows and plans it. TestVMKeys (rest), TestFormatKeys (dataset) and
// TestNarrowedTypesKnowEveryField (fieldmodel) fail until the steps are
// done; TestRecipeAddingAVMField (rest) follows them. A node's or a GPU's
// field is the same, in Node or GPU.
package rowfield

import (
	"fmt"
	"reflect"
	"strings"

	"gpugraph/models"
)

// A Field is one field of a row of T.
type Field[T any] struct {
	// Column is the field's column; "" for a field a face derives from
	// other rows (a VM's gpuIds, from the GPUs it holds).
	Column string
	// Into points at the Go field of a row the column scans into.
	Into func(*T) any
	// Key is a derived field's key (no Column); a column's is its Go
	// field's json tag ("" for a column no face writes: json:"-").
	Key string
	// Seed marks a key of the seed's object (OpenRelay's VM): the REST
	// object writes those first, in key order, then the others in the
	// registry's order.
	Seed bool
	// OmitNull leaves the key out of the REST object when its value is
	// null.
	OmitNull bool
	// GoField is the name of the Go field Into points at (set by New).
	GoField string
}

// A Registry is the fields of T's rows, in the order the store reads them
// and the fixture writes them.
type Registry[T any] struct {
	fields []Field[T]
}

// New makes the registry of fields, reading each column's key and Go field
// off T. It panics on an Into that points at no field of T and on a key
// listed twice: mistakes in the table, found by the first test that loads
// the package.
func New[T any](fields ...Field[T]) *Registry[T] {
	row := new(T)
	v := reflect.ValueOf(row).Elem()
	seen := map[string]bool{}
	for i := range fields {
		f := &fields[i]
		if f.Into != nil {
			p := reflect.ValueOf(f.Into(row))
			for j := range v.NumField() {
				if v.Field(j).Addr().Pointer() == p.Pointer() && v.Field(j).Type() == p.Type().Elem() {
					sf := v.Type().Field(j)
					f.GoField = sf.Name
					if key, _, _ := strings.Cut(sf.Tag.Get("json"), ","); key != "-" {
						f.Key = key
					}
				}
			}
			if f.GoField == "" {
				panic(fmt.Sprintf("rowfield: column %s of %s scans into no field of it", f.Column, v.Type()))
			}
		}
		if f.Key != "" {
			if seen[f.Key] {
				panic(fmt.Sprintf("rowfield: %s.%s is listed twice", v.Type(), f.Key))
			}
			seen[f.Key] = true
		}
	}
	return &Registry[T]{fields: fields}
}

// All answers every field, in the registry's order.
func (r *Registry[T]) All() []Field[T] { return r.fields }

// Keys are the fields' keys, in the registry's order (a column no face
// writes left out).
func (r *Registry[T]) Keys() []string {
	var out []string
	for _, f := range r.fields {
		if f.Key != "" {
			out = append(out, f.Key)
		}
	}
	return out
}

// VM is the registry of the VM's fields.
var VM = New(
	Field[models.VM]{Column: "id", Into: func(v *models.VM) any { return &v.ID }, Seed: true},
	Field[models.VM]{Column: "name", Into: func(v *models.VM) any { return &v.Name }, Seed: true},
	Field[models.VM]{Column: "organization_id", Into: func(v *models.VM) any { return &v.OrganizationID }, Seed: true},
	Field[models.VM]{Column: "status", Into: func(v *models.VM) any { return &v.Status }, Seed: true},
	Field[models.VM]{Column: "status_reason", Into: func(v *models.VM) any { return &v.StatusReason }, Seed: true},
	Field[models.VM]{Column: "capability_tier", Into: func(v *models.VM) any { return &v.CapabilityTier }, Seed: true},
	Field[models.VM]{Column: "compute_class", Into: func(v *models.VM) any { return &v.ComputeClass }, Seed: true},
	Field[models.VM]{Column: "created_at", Into: func(v *models.VM) any { return &v.CreatedAt }, Seed: true},
	Field[models.VM]{Column: "disk_size_gb", Into: func(v *models.VM) any { return &v.DiskSizeGb }, Seed: true},
	Field[models.VM]{Column: "endpoint_url", Into: func(v *models.VM) any { return &v.EndpointURL }, Seed: true},
	Field[models.VM]{Column: "gpu_count", Into: func(v *models.VM) any { return &v.GPUCount }, Seed: true},
	// The seed types the three gpu fields as strings: on a CPU-only row
	// the REST object leaves them out (docs/decisions/0016-cpu-only-vms.md).
	Field[models.VM]{Key: "gpuManufacturer", Seed: true, OmitNull: true},
	Field[models.VM]{Column: "gpu_model_id", Into: func(v *models.VM) any { return &v.GPUModelID }, Seed: true, OmitNull: true},
	Field[models.VM]{Key: "gpuModelName", Seed: true, OmitNull: true},
	Field[models.VM]{Column: "image_url", Into: func(v *models.VM) any { return &v.ImageURL }, Seed: true},
	Field[models.VM]{Column: "managed_by", Into: func(v *models.VM) any { return &v.ManagedBy }, Seed: true},
	Field[models.VM]{Column: "price_per_hour_cents", Into: func(v *models.VM) any { return &v.PricePerHourCents }, Seed: true},
	Field[models.VM]{Column: "provisioning_stage", Into: func(v *models.VM) any { return &v.ProvisioningStage }, Seed: true},
	Field[models.VM]{Column: "public", Into: func(v *models.VM) any { return &v.Public }, Seed: true},
	Field[models.VM]{Column: "resource_size", Into: func(v *models.VM) any { return &v.ResourceSize }, Seed: true},
	Field[models.VM]{Column: "service_type", Into: func(v *models.VM) any { return &v.ServiceType }, Seed: true},
	Field[models.VM]{Column: "tier", Into: func(v *models.VM) any { return &v.Tier }, Seed: true},
	Field[models.VM]{Column: "volume_gb", Into: func(v *models.VM) any { return &v.VolumeGb }, Seed: true},
	// gpugraph's own: where it is placed and what it holds.
	Field[models.VM]{Column: "node_id", Into: func(v *models.VM) any { return &v.NodeID }},
	Field[models.VM]{Key: "gpuIds"},
	Field[models.VM]{Column: "cpu_cores", Into: func(v *models.VM) any { return &v.CPUCores }},
	Field[models.VM]{Column: "ram_gb", Into: func(v *models.VM) any { return &v.RAMGb }},
	Field[models.VM]{Column: "tearing_down", Into: func(v *models.VM) any { return &v.TearingDown }},
	Field[models.VM]{Column: "interrupted_at", Into: func(v *models.VM) any { return &v.InterruptedAt }},
)

// Node is the registry of the node's fields; a node's GPUs are the GPU
// rows of it.
var Node = New(
	Field[models.Node]{Column: "id", Into: func(n *models.Node) any { return &n.ID }},
	Field[models.Node]{Column: "name", Into: func(n *models.Node) any { return &n.Name }},
	Field[models.Node]{Column: "cluster_id", Into: func(n *models.Node) any { return &n.ClusterID }},
	Field[models.Node]{Column: "node_pool", Into: func(n *models.Node) any { return &n.NodePool }},
	Field[models.Node]{Column: "status", Into: func(n *models.Node) any { return &n.Status }},
	Field[models.Node]{Column: "agent_version", Into: func(n *models.Node) any { return &n.AgentVersion }},
	Field[models.Node]{Column: "fabric_id", Into: func(n *models.Node) any { return &n.FabricID }},
	Field[models.Node]{Column: "cpu_cores", Into: func(n *models.Node) any { return &n.CPUCores }},
	Field[models.Node]{Column: "ram_gb", Into: func(n *models.Node) any { return &n.RAMGb }},
	Field[models.Node]{Column: "disk_gb", Into: func(n *models.Node) any { return &n.DiskGb }},
	Field[models.Node]{Column: "leaving_at", Into: func(n *models.Node) any { return &n.LeavingAt }},
	Field[models.Node]{Column: "last_heartbeat_at", Into: func(n *models.Node) any { return &n.LastHeartbeatAt }},
)

// GPU is the registry of the GPU's fields. Its holder, utilization and
// memory are the agent's and the placement's, not the fixture's (json:"-"):
// GraphQL answers them through its binding (vm, utilization,
// memoryUsedBytes).
var GPU = New(
	Field[models.GPU]{Column: "id", Into: func(g *models.GPU) any { return &g.ID }},
	Field[models.GPU]{Column: "node_id", Into: func(g *models.GPU) any { return &g.NodeID }},
	Field[models.GPU]{Column: "idx", Into: func(g *models.GPU) any { return &g.Index }},
	Field[models.GPU]{Column: "uuid", Into: func(g *models.GPU) any { return &g.UUID }},
	Field[models.GPU]{Column: "address", Into: func(g *models.GPU) any { return &g.Address }},
	Field[models.GPU]{Column: "model_id", Into: func(g *models.GPU) any { return &g.ModelID }},
	Field[models.GPU]{Column: "health", Into: func(g *models.GPU) any { return &g.Health }},
	Field[models.GPU]{Column: "failed_reason", Into: func(g *models.GPU) any { return &g.FailedReason }},
	Field[models.GPU]{Column: "holder_vm_id", Into: func(g *models.GPU) any { return &g.HolderVMID }},
	Field[models.GPU]{Column: "utilization", Into: func(g *models.GPU) any { return &g.Utilization }},
	Field[models.GPU]{Column: "memory_used_bytes", Into: func(g *models.GPU) any { return &g.MemoryUsedBytes }},
	Field[models.GPU]{Column: "sampled_at", Into: func(g *models.GPU) any { return &g.SampledAt }},
)
