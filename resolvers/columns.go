package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/loaders"
)

// The columns each field of Node, Gpu and VM is answered from, for the
// loaders' reads (loaders.Narrow); the store adds what a read is keyed and
// grouped by. A field missing here reads every column.
var fieldColumns = map[string]map[string][]string{
	"Node": {
		"id": nil, "name": {"name"}, "clusterId": {"cluster_id"}, "nodePool": {"node_pool"}, "status": {"status"},
		"agentVersion": {"agent_version"}, "fabricId": {"fabric_id"}, "cpuCores": {"cpu_cores"}, "ramGb": {"ram_gb"},
		"diskGb": {"disk_gb"}, "leavingAt": {"leaving_at"}, "lastHeartbeatAt": {"last_heartbeat_at"},
		"gpus": nil, "vms": nil, "__typename": nil,
	},
	"Gpu": {
		"id": {"id"}, "nodeId": {"node_id"}, "index": {"idx"}, "uuid": {"uuid"}, "address": {"address"}, "modelId": nil,
		"health": {"health"}, "failedReason": {"failed_reason"}, "utilization": {"utilization"},
		"memoryUsedBytes": {"memory_used_bytes"}, "model": nil, "vm": {"holder_vm_id"}, "node": {"node_id"}, "__typename": nil,
	},
	"VM": {
		"id": nil, "name": {"name"}, "organizationId": {"organization_id"}, "status": {"status"},
		"statusReason": {"status_reason"}, "capabilityTier": {"capability_tier"}, "computeClass": {"compute_class"},
		"createdAt": {"created_at"}, "diskSizeGb": {"disk_size_gb"}, "endpointUrl": {"endpoint_url"},
		"gpuCount": {"gpu_count"}, "gpuManufacturer": {"gpu_model_id"}, "gpuModelId": {"gpu_model_id"},
		"gpuModelName": {"gpu_model_id"}, "imageUrl": {"image_url"}, "managedBy": {"managed_by"},
		"pricePerHourCents": {"price_per_hour_cents"}, "provisioningStage": {"provisioning_stage"},
		"public": {"public"}, "resourceSize": {"resource_size"}, "serviceType": {"service_type"}, "tier": {"tier"},
		"volumeGb": {"volume_gb"}, "nodeId": {"node_id"}, "gpuIds": nil, "cpuCores": {"cpu_cores"}, "ramGb": {"ram_gb"},
		"tearingDown": {"tearing_down"}, "interruptedAt": {"interrupted_at"}, "node": {"node_id"}, "gpus": nil,
		"gpuModel": {"gpu_model_id"}, "events": nil, "__typename": nil,
	},
}

// otherColumns are what a field needs of the rows of another type it
// loads: VM.gpuIds answers its GPUs' ids.
var otherColumns = map[string]map[string]map[string][]string{
	"VM": {"gpuIds": {"Gpu": {"id"}}},
}

// narrowLoaders is the extension that, before a query runs, narrows its
// loaders' reads of nodes, GPUs and VMs (and its vms page) to the columns
// of the fields it selects of them anywhere (every fragment, whatever @skip
// or @include say: a superset). Mutations and subscriptions read whole rows.
type narrowLoaders struct{}

// NarrowLoaders is the extension narrowing each query's loaders.
func NarrowLoaders() graphql.HandlerExtension { return narrowLoaders{} }

func (narrowLoaders) ExtensionName() string                   { return "NarrowLoaders" }
func (narrowLoaders) Validate(graphql.ExecutableSchema) error { return nil }

func (narrowLoaders) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	op := graphql.GetOperationContext(ctx)
	if l := loaders.For(ctx); l != nil && op.Operation != nil && op.Operation.Operation == ast.Query {
		l.Narrow(selectedColumns(op))
	}
	return next(ctx)
}

// selectedColumns are the node, GPU and VM columns op's selections need;
// nil (every column) for a type one of whose selected fields has no entry.
func selectedColumns(op *graphql.OperationContext) loaders.Columns {
	cols := map[string][]string{}
	for typ := range fieldColumns {
		cols[typ] = []string{}
	}
	need := func(typ string, c []string) {
		if cols[typ] != nil { // nil: every column already
			cols[typ] = append(cols[typ], c...)
		}
	}
	seenFragments := map[string]bool{}
	var walk func(sel ast.SelectionSet)
	walk = func(sel ast.SelectionSet) {
		for _, s := range sel {
			switch s := s.(type) {
			case *ast.Field:
				if s.ObjectDefinition != nil {
					typ := s.ObjectDefinition.Name
					if byField, narrowed := fieldColumns[typ]; narrowed {
						if c, ok := byField[s.Name]; ok {
							need(typ, c)
						} else {
							cols[typ] = nil
						}
					}
					for other, c := range otherColumns[typ][s.Name] {
						need(other, c)
					}
				}
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if !seenFragments[s.Name] {
					seenFragments[s.Name] = true
					if fr := op.Doc.Fragments.ForName(s.Name); fr != nil {
						walk(fr.SelectionSet)
					}
				}
			}
		}
	}
	walk(op.Operation.SelectionSet)
	return loaders.Columns{Nodes: cols["Node"], GPUs: cols["Gpu"], VMs: cols["VM"]}
}
