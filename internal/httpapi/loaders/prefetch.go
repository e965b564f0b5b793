package loaders

import (
	"context"

	"github.com/graph-gophers/dataloader/v7"

	"gpugraph/internal/store"
	"gpugraph/models"
)

// Prefetching: a resolver that returns a list knows, before any nested
// field runs, every key the next level will ask for. Reading them here in
// one statement and priming the loader makes that level one statement
// whatever the page size, with no batch wait: the nested fields then answer
// from the loader's cache. The loaders' own time-based batching stays for
// whatever is not prefetched, but it depends on the field resolvers of one
// level all starting within the wait, which a busy machine running a page
// of 500 does not promise.
//
// Each loader a prefetch can fill is a Source below, named as its field in
// Loaders. Prime reads its keys (duplicates and empty keys dropped) with the
// loader's own caller-scoped fetch, so tenancy holds exactly as for Load,
// primes every key (one without a row primes as missing, so it is not read
// again), and answers the rows. Package fieldmodel walks a query's
// selection and calls them.

// A Source is one of a request's loaders, seen from outside the request:
// Prime finds the request's loaders in ctx.
type Source[K comparable, V any] struct {
	prime func(*Loaders, context.Context, []K) ([]*V, error)
	key   func(*V) K
	load  func(*Loaders, context.Context, K) (any, error)
}

// Prime reads keys in one statement with the loader's fetch and primes the
// request's loader with the rows; it answers the rows read.
func (s *Source[K, V]) Prime(ctx context.Context, keys []K) ([]*V, error) {
	return s.prime(For(ctx), ctx, keys)
}

// Key is the key a row answers to in this loader (for a loader of lists,
// the key of the list it belongs to).
func (s *Source[K, V]) Key(row *V) K { return s.key(row) }

// Load answers the request loader's value for key, as a resolver loading
// it would: a *V, or a []*V for a loader of lists. After a prime it is the
// loader's cache, read without a statement.
func (s *Source[K, V]) Load(ctx context.Context, key K) (any, error) {
	return s.load(For(ctx), ctx, key)
}

// The prefetchable loaders.
var (
	NodeByID     = &Source[string, models.Node]{(*Loaders).primeNodes, nodeID, load(func(l *Loaders) *dataloader.Loader[string, *models.Node] { return l.NodeByID })}
	NodeByName   = &Source[store.NodeKey, models.Node]{(*Loaders).primeNodesByName, nodeKey, load(func(l *Loaders) *dataloader.Loader[store.NodeKey, *models.Node] { return l.NodeByName })}
	GPUsByNode   = &Source[string, models.GPU]{(*Loaders).primeGPUsByNode, gpuNode, load(func(l *Loaders) *dataloader.Loader[string, []*models.GPU] { return l.GPUsByNode })}
	GPUsByVM     = &Source[string, models.GPU]{(*Loaders).primeGPUsByVM, gpuHolder, load(func(l *Loaders) *dataloader.Loader[string, []*models.GPU] { return l.GPUsByVM })}
	ModelByID    = &Source[string, models.GPUModel]{(*Loaders).primeModels, modelID, load(func(l *Loaders) *dataloader.Loader[string, *models.GPUModel] { return l.ModelByID })}
	VMByID       = &Source[string, models.VM]{(*Loaders).primeVMs, vmID, load(func(l *Loaders) *dataloader.Loader[string, *models.VM] { return l.VMByID })}
	VMsByNode    = &Source[string, models.VM]{(*Loaders).primeVMsByNode, vmNode, load(func(l *Loaders) *dataloader.Loader[string, []*models.VM] { return l.VMsByNode })}
	WorkloadByID = &Source[string, models.Workload]{(*Loaders).primeWorkloads, workloadID, load(func(l *Loaders) *dataloader.Loader[string, *models.Workload] { return l.WorkloadByID })}
	ProjectByID  = &Source[string, models.Project]{(*Loaders).primeProjects, projectID, load(func(l *Loaders) *dataloader.Loader[string, *models.Project] { return l.ProjectByID })}
	EventsByVM   = &Source[string, models.VMEvent]{(*Loaders).primeEvents, eventVM, load(func(l *Loaders) *dataloader.Loader[string, []*models.VMEvent] { return l.EventsByVM })}
	VolumeByVM   = &Source[string, models.Volume]{(*Loaders).primeVolumes, volumeVM, load(func(l *Loaders) *dataloader.Loader[string, *models.Volume] { return l.VolumeByVM })}
	HolderByVM   = &Source[string, models.GPUHolder]{(*Loaders).primeHolders, holderVM, load(func(l *Loaders) *dataloader.Loader[string, *models.GPUHolder] { return l.HolderByVM })}
)

// load reads one key from the loader of a request that of picks.
func load[K comparable, T any](of func(*Loaders) *dataloader.Loader[K, T]) func(*Loaders, context.Context, K) (any, error) {
	return func(l *Loaders, ctx context.Context, k K) (any, error) {
		v, err := of(l).Load(ctx, k)()
		return v, err
	}
}

func (l *Loaders) primeNodes(ctx context.Context, ids []string) ([]*models.Node, error) {
	return primeOne(ctx, l.NodeByID, l.fetch.nodesByID, nodeID, ids)
}

func (l *Loaders) primeNodesByName(ctx context.Context, keys []store.NodeKey) ([]*models.Node, error) {
	return primeOne(ctx, l.NodeByName, l.fetch.nodesByName, nodeKey, keys)
}

func (l *Loaders) primeGPUsByNode(ctx context.Context, nodeIDs []string) ([]*models.GPU, error) {
	return primeMany(ctx, l.GPUsByNode, l.fetch.gpusByNode, gpuNode, nodeIDs)
}

func (l *Loaders) primeGPUsByVM(ctx context.Context, vmIDs []string) ([]*models.GPU, error) {
	return primeMany(ctx, l.GPUsByVM, l.fetch.gpusByVM, gpuHolder, vmIDs)
}

func (l *Loaders) primeModels(ctx context.Context, ids []string) ([]*models.GPUModel, error) {
	return primeOne(ctx, l.ModelByID, l.fetch.models, modelID, ids)
}

func (l *Loaders) primeVMs(ctx context.Context, ids []string) ([]*models.VM, error) {
	return primeOne(ctx, l.VMByID, l.fetch.vms, vmID, ids)
}

func (l *Loaders) primeVMsByNode(ctx context.Context, nodeIDs []string) ([]*models.VM, error) {
	return primeMany(ctx, l.VMsByNode, l.fetch.vmsByNode, vmNode, nodeIDs)
}

func (l *Loaders) primeWorkloads(ctx context.Context, ids []string) ([]*models.Workload, error) {
	return primeOne(ctx, l.WorkloadByID, l.fetch.workloads, workloadID, ids)
}

func (l *Loaders) primeProjects(ctx context.Context, ids []string) ([]*models.Project, error) {
	return primeOne(ctx, l.ProjectByID, l.fetch.projects, projectID, ids)
}

func (l *Loaders) primeEvents(ctx context.Context, vmIDs []string) ([]*models.VMEvent, error) {
	return primeMany(ctx, l.EventsByVM, l.fetch.events, eventVM, vmIDs)
}

func (l *Loaders) primeVolumes(ctx context.Context, vmIDs []string) ([]*models.Volume, error) {
	return primeOne(ctx, l.VolumeByVM, l.fetch.volumes, volumeVM, vmIDs)
}

func (l *Loaders) primeHolders(ctx context.Context, vmIDs []string) ([]*models.GPUHolder, error) {
	return primeOne(ctx, l.HolderByVM, l.fetch.holders, holderVM, vmIDs)
}

// unique drops duplicate and zero keys, keeping the first order.
func unique[K comparable](keys []K) []K {
	var zero K
	seen := make(map[K]bool, len(keys))
	out := make([]K, 0, len(keys))
	for _, k := range keys {
		if k != zero && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func primeOne[K comparable, V any](ctx context.Context, l *dataloader.Loader[K, *V], fetch func(context.Context, []K) ([]*V, error), key func(*V) K, keys []K) ([]*V, error) {
	keys = unique(keys)
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := fetch(ctx, keys)
	if err != nil {
		return nil, err
	}
	byKey := indexOne(rows, key)
	out := rows[:0:0]
	for _, k := range keys {
		l.Prime(ctx, k, byKey[k])
		if v := byKey[k]; v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

func primeMany[K comparable, V any](ctx context.Context, l *dataloader.Loader[K, []*V], fetch func(context.Context, []K) ([]*V, error), key func(*V) K, keys []K) ([]*V, error) {
	keys = unique(keys)
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := fetch(ctx, keys)
	if err != nil {
		return nil, err
	}
	byKey := indexMany(rows, key, keys)
	for _, k := range keys {
		l.Prime(ctx, k, byKey[k])
	}
	return rows, nil
}
