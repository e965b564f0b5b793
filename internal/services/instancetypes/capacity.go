package instancetypes

import (
	"cmp"
	"context"
	"slices"

	"gpugraph/internal/auth"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/models"
	"gpugraph/placement"
)

// Offer is an instance type as a user chooses from it: the type, its GPU
// model (nil for a CPU-only type) and how many VMs of it could be placed
// now in each cluster's node pool.
type Offer struct {
	models.InstanceType
	Model    *models.GPUModel
	Capacity []PoolCapacity
}

// PoolCapacity is how many VMs of a type the online nodes of one node pool
// of one cluster could take now, one after another. It is a count only:
// what holds the rest of the pool, and whose it is, is not part of it.
type PoolCapacity struct {
	ClusterID string
	NodePool  string
	Available int
}

// Offers answers the catalog by name with each type's capacity, all from
// one snapshot of the fleet.
func (s *Service) Offers(ctx context.Context, caller *auth.Caller) ([]Offer, error) {
	types, err := s.List(ctx, caller)
	if err != nil {
		return nil, err
	}
	return s.offers(ctx, types)
}

// Offer answers the type name with its capacity.
func (s *Service) Offer(ctx context.Context, caller *auth.Caller, name string) (Offer, error) {
	t, err := s.Get(ctx, caller, name)
	if err != nil {
		return Offer{}, err
	}
	out, err := s.offers(ctx, []models.InstanceType{t})
	if err != nil {
		return Offer{}, err
	}
	return out[0], nil
}

func (s *Service) offers(ctx context.Context, types []models.InstanceType) ([]Offer, error) {
	out := make([]Offer, len(types))
	if len(types) == 0 {
		return out, nil
	}
	cat, err := s.store.GPUModels(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*models.GPUModel, len(cat))
	for _, m := range cat {
		byID[m.ID] = m
	}
	snap, err := s.store.ReadSnapshot(ctx, store.SnapshotScope{})
	if err != nil {
		return nil, err
	}
	fleet := poolsOf(snap)
	fw := placement.Default()
	for i, t := range types {
		out[i] = Offer{InstanceType: t}
		if t.GPUModelID != nil {
			out[i].Model = byID[*t.GPUModelID]
		}
		out[i].Capacity = capacity(fw, request(t, out[i].Model), fleet)
	}
	return out, nil
}

// pool is the nodes of one node pool of one cluster, as placement sees
// them, with the GPU models they have.
type pool struct {
	cluster, name string
	nodes         []*placement.NodeInfo
	models        map[string]bool
}

// poolsOf groups the snapshot's nodes that are not removed by cluster and
// node pool, in that order.
func poolsOf(snap *store.Snapshot) []*pool {
	infos := compute.NodeInfos(snap) // in snap.Nodes' order
	by := map[[2]string]*pool{}
	var out []*pool
	for i, n := range snap.Nodes {
		if n.Status == models.NodeRemoved {
			continue
		}
		key := [2]string{n.ClusterID, n.NodePool}
		p := by[key]
		if p == nil {
			p = &pool{cluster: n.ClusterID, name: n.NodePool, models: map[string]bool{}}
			by[key] = p
			out = append(out, p)
		}
		p.nodes = append(p.nodes, infos[i])
		for _, g := range infos[i].GPUs {
			p.models[g.ModelID] = true
		}
	}
	slices.SortFunc(out, func(a, b *pool) int { return cmp.Or(cmp.Compare(a.cluster, b.cluster), cmp.Compare(a.name, b.name)) })
	return out
}

// request is what placing a plain VM of type t asks of a node.
func request(t models.InstanceType, m *models.GPUModel) *placement.Request {
	req := &placement.Request{GPUCount: t.GPUCount, CPUCores: t.CPUCores, RAMGb: t.RAMGb, DiskGb: t.DiskSizeGb}
	if m != nil {
		req.GPUModel = placement.Model{ID: m.ID, Name: m.Name, Manufacturer: string(m.Manufacturer)}
	}
	return req
}

// capacity counts, per pool that has the type's GPU model (every pool for
// a CPU-only type), the VMs of the type its nodes could take now: the sum
// of placement's Fits over them, so the count is what the filters would
// let a create place, one after another.
func capacity(fw *placement.Framework, req *placement.Request, pools []*pool) []PoolCapacity {
	out := []PoolCapacity{}
	for _, p := range pools {
		if req.GPUCount > 0 && !p.models[req.GPUModel.ID] {
			continue
		}
		c := PoolCapacity{ClusterID: p.cluster, NodePool: p.name}
		for _, n := range p.nodes {
			c.Available += fw.Fits(req, n)
		}
		out = append(out, c)
	}
	return out
}
