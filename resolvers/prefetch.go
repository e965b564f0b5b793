package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"gpugraph/loaders"
	"gpugraph/models"
	"gpugraph/store"
)

// A list resolver prefetches, level by level, what its query selects below
// the list: one statement per nested level, read before the nested fields
// run and primed into the request's loaders (see loaders/prefetch.go). The
// walk follows the query's selection sets, so it reads only the levels the
// query asks for. A prefetch that fails is dropped: the nested fields then
// load (and report errors) through the loaders as they would without it.

// prefetcher walks one query's selections.
type prefetcher struct {
	ctx context.Context
	op  *graphql.OperationContext
	l   *loaders.Loaders
}

// newPrefetcher answers nil outside a GraphQL request (the REST face
// encodes no nested objects) or without loaders.
func newPrefetcher(ctx context.Context) *prefetcher {
	l := loaders.For(ctx)
	if l == nil || !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return nil
	}
	return &prefetcher{ctx: ctx, op: graphql.GetOperationContext(ctx), l: l}
}

// selection is the field's own selection set (the list or object it answers).
func (p *prefetcher) selection() ast.SelectionSet {
	return graphql.GetFieldContext(p.ctx).Field.Selections
}

// child answers the selections under field name of an object of type typ
// selected by sel (fragments and aliases merged); nil when not selected.
func (p *prefetcher) child(sel ast.SelectionSet, typ, name string) ast.SelectionSet {
	var out ast.SelectionSet
	found := false
	for _, f := range graphql.CollectFields(p.op, sel, []string{typ}) {
		if f.Name == name {
			found = true
			out = append(out, f.Selections...)
		}
	}
	if !found {
		return nil
	}
	if out == nil {
		out = ast.SelectionSet{} // a scalar field: selected, with nothing below
	}
	return out
}

func (p *prefetcher) selects(sel ast.SelectionSet, typ string, names ...string) bool {
	for _, n := range names {
		if p.child(sel, typ, n) != nil {
			return true
		}
	}
	return false
}

// pods prefetches below a list of pods selected by sel.
func (p *prefetcher) pods(pods []*models.Pod, sel ast.SelectionSet) {
	if len(pods) == 0 || sel == nil {
		return
	}
	if nodeSel := p.child(sel, "Pod", "node"); nodeSel != nil {
		keys := make([]store.NodeKey, 0, len(pods))
		for _, pod := range pods {
			if pod.NodeName != nil {
				keys = append(keys, storeNodeKey(pod))
			}
		}
		if nodes, err := p.l.PrefetchNodesByName(p.ctx, keys); err == nil {
			p.nodes(nodes, nodeSel)
		}
	}
	var projectIDs []string
	if wSel := p.child(sel, "Pod", "workload"); wSel != nil {
		ids := make([]string, len(pods))
		for i, pod := range pods {
			ids[i] = pod.WorkloadID
		}
		workloads, err := p.l.PrefetchWorkloads(p.ctx, ids)
		if err == nil && p.selects(wSel, "Workload", "project") {
			for _, w := range workloads {
				projectIDs = append(projectIDs, w.ProjectID)
			}
		}
	}
	if p.selects(sel, "Pod", "project") {
		for _, pod := range pods {
			if pod.ProjectID != nil {
				projectIDs = append(projectIDs, *pod.ProjectID)
			}
		}
	}
	// A pod's project and its workload's project are one statement.
	_, _ = p.l.PrefetchProjects(p.ctx, projectIDs)
}

// nodes prefetches below a list of nodes selected by sel.
func (p *prefetcher) nodes(nodes []*models.Node, sel ast.SelectionSet) {
	if len(nodes) == 0 || sel == nil {
		return
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	if gSel := p.child(sel, "Node", "gpus"); gSel != nil {
		if gpus, err := p.l.PrefetchGPUsByNode(p.ctx, ids); err == nil {
			p.gpus(gpus, gSel)
		}
	}
	if vSel := p.child(sel, "Node", "vms"); vSel != nil {
		if vms, err := p.l.PrefetchVMsByNode(p.ctx, ids); err == nil {
			p.vms(vms, vSel)
		}
	}
}

// gpus prefetches below a list of GPUs selected by sel.
func (p *prefetcher) gpus(gpus []*models.Gpu, sel ast.SelectionSet) {
	if len(gpus) == 0 || sel == nil {
		return
	}
	if p.selects(sel, "Gpu", "model") {
		ids := make([]string, len(gpus))
		for i, g := range gpus {
			ids[i] = g.ModelID
		}
		_, _ = p.l.PrefetchModels(p.ctx, ids)
	}
	if vSel := p.child(sel, "Gpu", "vm"); vSel != nil {
		var ids []string
		for _, g := range gpus {
			if g.HolderVMID != nil {
				ids = append(ids, *g.HolderVMID)
			}
		}
		if vms, err := p.l.PrefetchVMs(p.ctx, ids); err == nil {
			p.vms(vms, vSel)
		}
	}
	if nSel := p.child(sel, "Gpu", "node"); nSel != nil {
		ids := make([]string, len(gpus))
		for i, g := range gpus {
			ids[i] = g.NodeID
		}
		if nodes, err := p.l.PrefetchNodes(p.ctx, ids); err == nil {
			p.nodes(nodes, nSel)
		}
	}
}

// vms prefetches below a list of VMs selected by sel.
func (p *prefetcher) vms(vms []*models.VM, sel ast.SelectionSet) {
	if len(vms) == 0 || sel == nil {
		return
	}
	if p.selects(sel, "VM", "gpuModel", "gpuManufacturer", "gpuModelName") {
		var ids []string
		for _, v := range vms {
			if v.GpuModelID != nil {
				ids = append(ids, *v.GpuModelID)
			}
		}
		_, _ = p.l.PrefetchModels(p.ctx, ids)
	}
	gSel := p.child(sel, "VM", "gpus")
	if gSel != nil || p.selects(sel, "VM", "gpuIds") {
		ids := make([]string, len(vms))
		for i, v := range vms {
			ids[i] = v.ID
		}
		if gpus, err := p.l.PrefetchGPUsByVM(p.ctx, ids); err == nil {
			p.gpus(gpus, gSel)
		}
	}
	if nSel := p.child(sel, "VM", "node"); nSel != nil {
		var ids []string
		for _, v := range vms {
			if v.NodeID != nil {
				ids = append(ids, *v.NodeID)
			}
		}
		if nodes, err := p.l.PrefetchNodes(p.ctx, ids); err == nil {
			p.nodes(nodes, nSel)
		}
	}
}

// prefetchPods prefetches below the pods of a root field that answers
// them: a PodList (pods, workloadPods) or a list of pods (revisionPods).
func prefetchPods(ctx context.Context, pods []*models.Pod, inList bool) {
	p := newPrefetcher(ctx)
	if p == nil {
		return
	}
	sel := p.selection()
	if inList {
		sel = p.child(sel, "PodList", "pods")
	}
	p.pods(pods, sel)
}

// prefetchVMs prefetches below the VMs of a VmList.
func prefetchVMs(ctx context.Context, vms []*models.VM) {
	if p := newPrefetcher(ctx); p != nil {
		p.vms(vms, p.child(p.selection(), "VmList", "vms"))
	}
}

// prefetchNodes prefetches below a root list of nodes.
func prefetchNodes(ctx context.Context, nodes []*models.Node) {
	if p := newPrefetcher(ctx); p != nil {
		p.nodes(nodes, p.selection())
	}
}
