package compute

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// NodeView is placement's view of every node, read at once without locks: a
// create chooses from it, and the scheduler places a pass of pending rows
// from one (PlaceQueued), each choice checked again under its node's lock.
type NodeView struct {
	nodes []*placement.NodeInfo
	byID  map[string]*placement.NodeInfo
	rows  map[string]*models.Node // cluster and node pool, by node id

	// The scheduler's: the catalog and the organizations, read with the
	// nodes, and the shapes that found no room in this view.
	models map[string]*models.GPUModel
	orgs   map[string]*models.Organization
	noFit  map[shape]bool
	stale  bool
}

func newNodeView(snap *store.Snapshot) *NodeView {
	f := &NodeView{nodes: NodeInfos(snap), byID: map[string]*placement.NodeInfo{}, rows: map[string]*models.Node{},
		noFit: map[shape]bool{}}
	for i := range snap.Nodes {
		f.rows[snap.Nodes[i].ID] = &snap.Nodes[i]
	}
	for _, n := range f.nodes {
		f.byID[n.ID] = n
	}
	return f
}

// with is a new view: f's nodes, those of changed read again from snap (a
// node of changed not in snap no longer exists). f is left as it is: its
// readers may still hold it.
func (f *NodeView) with(changed []string, snap *store.Snapshot) *NodeView {
	next := newNodeView(snap)
	gone := make(map[string]bool, len(changed))
	for _, id := range changed {
		gone[id] = true
	}
	for id, n := range f.byID {
		if !gone[id] {
			next.byID[id], next.rows[id] = n, f.rows[id]
		}
	}
	next.nodes = slices.SortedFunc(maps.Values(next.byID), func(a, b *placement.NodeInfo) int {
		return strings.Compare(a.ID, b.ID)
	})
	return next
}

// scoped is the nodes of cluster and node pool (nil: any), and how a
// message names them. A cluster or node pool no node is in is a 404.
func (f *NodeView) scoped(cluster, pool *string) ([]*placement.NodeInfo, string, error) {
	if cluster == nil && pool == nil {
		return f.nodes, "of the fleet", nil
	}
	var out []*placement.NodeInfo
	inCluster := false
	for _, n := range f.nodes {
		row := f.rows[n.ID]
		if cluster != nil && row.ClusterID != *cluster {
			continue
		}
		inCluster = true
		if pool != nil && row.NodePool != *pool {
			continue
		}
		out = append(out, n)
	}
	switch {
	case cluster != nil && !inCluster:
		return nil, "", apierr.NotFound(CodeClusterNotFound, "there is no cluster %q", *cluster)
	case len(out) == 0 && cluster != nil:
		return nil, "", apierr.NotFound(CodeNodePoolNotFound, "cluster %s has no node pool %q", *cluster, *pool)
	case len(out) == 0:
		return nil, "", apierr.NotFound(CodeNodePoolNotFound, "there is no node pool %q", *pool)
	case cluster != nil && pool != nil:
		return out, fmt.Sprintf("of node pool %s of cluster %s", *pool, *cluster), nil
	case cluster != nil:
		return out, "of cluster " + *cluster, nil
	}
	return out, "of node pool " + *pool, nil
}

// ReadNodeView reads the scheduler's view of the fleet: every node with what
// is held there, the GPU catalog and the organizations.
func (s *Service) ReadNodeView(ctx context.Context) (*NodeView, error) {
	var f *NodeView
	err := s.store.InTx(ctx, func(tx *store.Txn) error {
		snap, err := s.store.Snapshot(tx, store.SnapshotScope{AddressHolders: true})
		if err != nil {
			return err
		}
		f = newNodeView(snap)
		return nil
	})
	if err != nil {
		return nil, err
	}
	catalog, err := s.store.GPUModels(ctx)
	if err != nil {
		return nil, err
	}
	f.models = make(map[string]*models.GPUModel, len(catalog))
	for _, m := range catalog {
		f.models[m.ID] = m
	}
	orgs, err := s.store.ListOrganizations(ctx)
	if err != nil {
		return nil, err
	}
	f.orgs = make(map[string]*models.Organization, len(orgs))
	for i := range orgs {
		f.orgs[orgs[i].ID] = &orgs[i]
	}
	return f, nil
}

// Stale reports that a placement found a node changed since the fleet was
// read (another replica or a restart claimed it): the scheduler reads it
// again before placing more.
func (f *NodeView) Stale() bool { return f.stale }

// shape is what placement reads of a pending row: rows of one shape fit
// or not alike, so once one found no room in a pass, the others of its
// shape are not tried again in it (the pass only takes room away).
type shape struct {
	model                string
	pod, infiniband      bool
	gpus, cpu, ram, disk int
	cluster, pool        string
	hasCluster, hasPool  bool
}

func shapeOf(vm *models.VM, ib bool) shape {
	sh := shape{pod: vm.IsPod(), infiniband: ib && vm.IsPod(), gpus: vm.GPUCount}
	if !sh.pod {
		sh.cpu, sh.ram, sh.disk = vm.CPUCores, vm.RAMGb, vm.DiskSizeGb
	}
	if vm.GPUModelID != nil {
		sh.model = *vm.GPUModelID
	}
	if vm.WantClusterID != nil {
		sh.cluster, sh.hasCluster = *vm.WantClusterID, true
	}
	if vm.WantNodePool != nil {
		sh.pool, sh.hasPool = *vm.WantNodePool, true
	}
	return sh
}

// schedulerActor is who the scheduler's transitions name.
var schedulerActor = models.Actor{Kind: models.ActorScheduler}

// PlaceQueued places the pending row vm (as the scheduler read it) if it
// fits in f now: placement chooses its node from f, then one transaction
// locks the row (skipping it when another replica holds it), checks it is
// still pending, locks the node and checks it again, claims, applies
// queue-placed and records that the organization was served (its turn
// passes to the others). It answers false, with no error, when the row
// does not fit, is no longer pending, is locked elsewhere, or its
// organization may not start workloads; f is updated with what the
// placement took.
func (s *Service) PlaceQueued(ctx context.Context, f *NodeView, vm *models.VM) (bool, error) {
	org := f.orgs[vm.OrganizationID]
	if org == nil || auth.OrganizationCannotStart(org.ID, org.State) != nil {
		return false, nil
	}
	sh := shapeOf(vm, org.InfinibandEnabled)
	if f.noFit[sh] {
		return false, nil
	}
	var m *models.GPUModel
	if vm.GPUModelID != nil {
		if m = f.models[*vm.GPUModelID]; m == nil {
			return false, nil
		}
	}
	req := requestOf(vm, m, org.InfinibandEnabled)
	nodes, _, err := f.scoped(vm.WantClusterID, vm.WantNodePool)
	if err != nil {
		f.noFit[sh] = true
		return false, nil
	}
	fw := placement.Default()
	p, st := fw.Place(req, nodes)
	if st != nil {
		f.noFit[sh] = true
		return false, nil
	}
	placed := false
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		placed = false
		row, err := s.store.LockPendingVM(tx, vm.ID)
		if err != nil || row == nil {
			return err
		}
		// Read after the row's lock, as a restart does: an operator's state
		// change locks the organization's rows first.
		o, err := s.store.Organization(tx, row.OrganizationID)
		if err != nil {
			return err
		}
		if auth.OrganizationCannotStart(o.ID, o.State) != nil {
			return nil
		}
		if _, err := claimOn(s.store, tx, row, m, req, fw, p.Node.ID,
			store.Change{Transition: models.QueuePlaced, Actor: schedulerActor, Stage: stageScheduled}, store.Now()); err != nil {
			return err
		}
		// The organization's turn passes with the placement: the next
		// passes, on any replica, serve the others first.
		if err := s.store.ServedFromQueue(tx, row.OrganizationID); err != nil {
			return err
		}
		placed = true
		return nil
	})
	switch {
	case errors.Is(err, errMoved):
		f.stale = true
		return false, nil
	case err != nil:
		return false, err
	}
	if placed {
		f.took(req, p)
	}
	return placed, nil
}

// took records in f what a placement claimed, so the rest of the pass
// sees it held.
func (f *NodeView) took(req *placement.Request, p placement.Placement) {
	n := f.byID[p.Node.ID]
	for _, id := range p.GPUIDs {
		for i := range n.GPUs {
			if n.GPUs[i].ID == id {
				n.GPUs[i].HolderID = req.VMID
			}
		}
	}
	if !req.Pod {
		n.Holdings = append(n.Holdings, placement.Holding{VMID: req.VMID, CPUCores: req.CPUCores, RAMGb: req.RAMGb, DiskGb: req.DiskGb})
	}
	if p.InfiniBand && n.Fabric != nil {
		n.Fabric.Holders = append(n.Fabric.Holders, req.VMID)
	}
}

// QueuePosition is where the caller's VM vm stands in its organization's
// queue (1: the next of it to be placed); nil when it is not pending. The
// caller must hold compute.read.
func (s *Service) QueuePosition(ctx context.Context, caller *auth.Caller, vm *models.VM) (*int, error) {
	if err := s.MayRead(caller); err != nil {
		return nil, err
	}
	if vm.Status != "" && vm.Status != models.VMPending {
		return nil, nil // a page that read the status answers without a statement
	}
	n, err := s.store.QueuePosition(ctx, caller.OrganizationID, vm.ID)
	if err != nil || n == 0 {
		return nil, err
	}
	return &n, nil
}
