// Package loaders batches every nested lookup of a GraphQL request into one
// statement per nesting level. Loaders are made per request, after the
// caller is known, so each one is scoped to the caller's organization or
// tenant: a nested field can never reach another organization's rows.
package loaders

import (
	"context"
	"net/http"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"gpugraph/auth"
	"gpugraph/models"
	"gpugraph/store"
)

// DefaultWait is how long a loader collects keys before it runs its batch.
// Field resolvers of one level start within microseconds of each other; the
// wait only has to outlast that.
const DefaultWait = 2 * time.Millisecond

// Loaders holds one request's loaders.
type Loaders struct {
	NodeByID     *dataloader.Loader[string, *models.Node]
	NodeByName   *dataloader.Loader[store.NodeKey, *models.Node]
	GPUsByNode   *dataloader.Loader[string, []*models.Gpu]
	GPUsByVM     *dataloader.Loader[string, []*models.Gpu]
	ModelByID    *dataloader.Loader[string, *models.GpuModel]
	VMByID       *dataloader.Loader[string, *models.VM]
	VMsByNode    *dataloader.Loader[string, []*models.VM]
	WorkloadByID *dataloader.Loader[string, *models.Workload]
	ProjectByID  *dataloader.Loader[string, *models.Project]
}

// New makes the loaders of one request of caller c (nil: an anonymous
// caller, who can see no organization's VMs and no tenant's workloads).
func New(st *store.Store, c *auth.Caller, wait time.Duration) *Loaders {
	if wait <= 0 {
		wait = DefaultWait
	}
	org, tenant := "", -1
	if c != nil {
		org, tenant = c.OrganizationID, c.TenantID
	}
	return &Loaders{
		NodeByID: one(wait, st.NodesByIDs, func(n *models.Node) string { return n.ID }),
		NodeByName: one(wait, st.NodesByClusterNames, func(n *models.Node) store.NodeKey {
			return store.NodeKey{ClusterID: n.ClusterID, Name: n.Name}
		}),
		GPUsByNode: many(wait, st.GPUsByNodeIDs, func(g *models.Gpu) string { return g.NodeID }),
		GPUsByVM: many(wait, st.GPUsByHolders, func(g *models.Gpu) string {
			if g.HolderVMID == nil {
				return ""
			}
			return *g.HolderVMID
		}),
		ModelByID: one(wait, st.GpuModelsByIDs, func(m *models.GpuModel) string { return m.ID }),
		VMByID: one(wait, func(ctx context.Context, ids []string) ([]*models.VM, error) {
			return st.VMsByIDs(ctx, org, ids)
		}, func(v *models.VM) string { return v.ID }),
		VMsByNode: many(wait, func(ctx context.Context, ids []string) ([]*models.VM, error) {
			return st.VMsByNodeIDs(ctx, org, ids)
		}, func(v *models.VM) string {
			if v.NodeID == nil {
				return ""
			}
			return *v.NodeID
		}),
		WorkloadByID: one(wait, func(ctx context.Context, ids []string) ([]*models.Workload, error) {
			return st.WorkloadsByIDs(ctx, tenant, ids)
		}, func(w *models.Workload) string { return w.ID }),
		ProjectByID: one(wait, func(ctx context.Context, ids []string) ([]*models.Project, error) {
			return st.ProjectsByIDs(ctx, tenant, ids)
		}, func(p *models.Project) string { return p.ID }),
	}
}

// one makes a loader of at most one row per key; a key without a row
// answers nil, and a failed batch answers its error for every key.
func one[K comparable, V any](wait time.Duration, fetch func(context.Context, []K) ([]*V, error), key func(*V) K) *dataloader.Loader[K, *V] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []K) []*dataloader.Result[*V] {
		rows, err := fetch(ctx, keys)
		out := make([]*dataloader.Result[*V], len(keys))
		byKey := make(map[K]*V, len(rows))
		for _, r := range rows {
			byKey[key(r)] = r
		}
		for i, k := range keys {
			out[i] = &dataloader.Result[*V]{Data: byKey[k], Error: err}
		}
		return out
	}, dataloader.WithWait[K, *V](wait))
}

// many makes a loader of a list of rows per key, in the order fetch gave them.
func many[K comparable, V any](wait time.Duration, fetch func(context.Context, []K) ([]*V, error), key func(*V) K) *dataloader.Loader[K, []*V] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []K) []*dataloader.Result[[]*V] {
		rows, err := fetch(ctx, keys)
		out := make([]*dataloader.Result[[]*V], len(keys))
		byKey := make(map[K][]*V, len(keys))
		for _, r := range rows {
			k := key(r)
			byKey[k] = append(byKey[k], r)
		}
		for i, k := range keys {
			list := byKey[k]
			if list == nil && err == nil {
				list = []*V{}
			}
			out[i] = &dataloader.Result[[]*V]{Data: list, Error: err}
		}
		return out
	}, dataloader.WithWait[K, []*V](wait))
}

type ctxKey struct{}

// For answers the loaders of the request ctx belongs to.
func For(ctx context.Context) *Loaders {
	l, _ := ctx.Value(ctxKey{}).(*Loaders)
	return l
}

// With puts l in ctx.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// Middleware gives each request its own loaders, scoped to its caller; it
// runs after authentication.
func Middleware(st *store.Store, wait time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		next.ServeHTTP(w, r.WithContext(With(ctx, New(st, auth.FromContext(ctx), wait))))
	})
}
