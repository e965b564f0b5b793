package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"gpugraph/resolvers/prefetch"
)

// podFieldColumns maps each field of the GraphQL Pod to the columns its
// value (or its nested lookup) is read from.
var podFieldColumns = map[string][]string{
	"name": {"name"}, "priorityClassName": {"priority_class_name"}, "id": {"id"},
	"workloadId": {"workload_id"}, "revisionId": {"revision_id"}, "clusterId": {"cluster_id"},
	"projectId": {"project_id"}, "nodeName": {"node_name"}, "createdAt": {"created_at"},
	"completedAt": {"completed_at"}, "containers": {"containers"}, "currentNodePool": {"current_node_pool"},
	"requestedNodePools": {"requested_node_pools"}, "requestedResources": {"requested_resources"},
	"allocatedResources": {"allocated_resources"}, "tolerations": {"tolerations"}, "k8sPhase": {"k8s_phase"},
	"ip": {"ip"}, "task": {"task"}, "nodeAffinity": {"node_affinity"}, "tenantId": {"tenant_id"},
	"k8sPhaseUpdatedAt": {"k8s_phase_updated_at"}, "updatedAt": {"updated_at"}, "deletedAt": {"deleted_at"},
	"projectName": {"project_name"}, "workloadName": {"workload_name"},
	"node": {"node_name", "cluster_id"}, "workload": {"workload_id"}, "project": {"project_id"},
}

// podColumns are the columns a page of pods must read for the GraphQL
// selection of its PodList: id always, then what the selected fields need.
// Outside GraphQL (REST writes whole pods) or when a field is unknown it
// answers nil: every column.
func podColumns(ctx context.Context) []string {
	sel, ok := prefetch.Selection(ctx, "Pod")
	if !ok {
		return nil
	}
	if sel == nil {
		return []string{"id"}
	}
	cols := []string{"id"}
	seen := map[string]bool{"id": true}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), sel, []string{"Pod"}) {
		if f.Name == "__typename" {
			continue
		}
		need, ok := podFieldColumns[f.Name]
		if !ok {
			return nil
		}
		for _, c := range need {
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
	}
	return cols
}
