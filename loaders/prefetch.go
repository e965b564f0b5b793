package loaders

import (
	"context"

	"github.com/graph-gophers/dataloader/v7"

	"gpugraph/models"
	"gpugraph/store"
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
// Each method reads its keys (duplicates and empty keys dropped) with the
// loader's own caller-scoped fetch, primes every key (one without a row
// primes as missing, so it is not read again), and answers the rows.

// PrefetchNodes primes NodeByID.
func (l *Loaders) PrefetchNodes(ctx context.Context, ids []string) ([]*models.Node, error) {
	return primeOne(ctx, l.NodeByID, l.fetch.nodesByID, nodeID, ids)
}

// PrefetchNodesByName primes NodeByName.
func (l *Loaders) PrefetchNodesByName(ctx context.Context, keys []store.NodeKey) ([]*models.Node, error) {
	return primeOne(ctx, l.NodeByName, l.fetch.nodesByName, nodeKey, keys)
}

// PrefetchGPUsByNode primes GPUsByNode.
func (l *Loaders) PrefetchGPUsByNode(ctx context.Context, nodeIDs []string) ([]*models.Gpu, error) {
	return primeMany(ctx, l.GPUsByNode, l.fetch.gpusByNode, gpuNode, nodeIDs)
}

// PrefetchGPUsByVM primes GPUsByVM.
func (l *Loaders) PrefetchGPUsByVM(ctx context.Context, vmIDs []string) ([]*models.Gpu, error) {
	return primeMany(ctx, l.GPUsByVM, l.fetch.gpusByVM, gpuHolder, vmIDs)
}

// PrefetchModels primes ModelByID.
func (l *Loaders) PrefetchModels(ctx context.Context, ids []string) ([]*models.GpuModel, error) {
	return primeOne(ctx, l.ModelByID, l.fetch.models, modelID, ids)
}

// PrefetchVMs primes VMByID.
func (l *Loaders) PrefetchVMs(ctx context.Context, ids []string) ([]*models.VM, error) {
	return primeOne(ctx, l.VMByID, l.fetch.vms, vmID, ids)
}

// PrefetchVMsByNode primes VMsByNode.
func (l *Loaders) PrefetchVMsByNode(ctx context.Context, nodeIDs []string) ([]*models.VM, error) {
	return primeMany(ctx, l.VMsByNode, l.fetch.vmsByNode, vmNode, nodeIDs)
}

// PrefetchWorkloads primes WorkloadByID.
func (l *Loaders) PrefetchWorkloads(ctx context.Context, ids []string) ([]*models.Workload, error) {
	return primeOne(ctx, l.WorkloadByID, l.fetch.workloads, workloadID, ids)
}

// PrefetchProjects primes ProjectByID.
func (l *Loaders) PrefetchProjects(ctx context.Context, ids []string) ([]*models.Project, error) {
	return primeOne(ctx, l.ProjectByID, l.fetch.projects, projectID, ids)
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
