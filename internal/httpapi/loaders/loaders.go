// Package loaders batches every nested lookup of a GraphQL request into one
// statement per nesting level. Loaders are made per request, after the
// caller is known, so each one is scoped to the caller's organization or
// tenant: a nested field can never reach another organization's rows.
package loaders

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"gpugraph/internal/auth"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// DefaultWait is how long a loader collects keys before it runs its batch.
// Field resolvers of one level start within microseconds of each other; the
// wait only has to outlast that.
const DefaultWait = 2 * time.Millisecond

// Loaders holds one request's loaders.
type Loaders struct {
	NodeByID   *dataloader.Loader[string, *models.Node]
	NodeByName *dataloader.Loader[store.NodeKey, *models.Node]
	GPUsByNode *dataloader.Loader[string, []*models.GPU]
	GPUsByVM   *dataloader.Loader[string, []*models.GPU]
	ModelByID  *dataloader.Loader[string, *models.GPUModel]
	VMByID     *dataloader.Loader[string, *models.VM]
	// HolderByVM reads who holds a GPU, whichever organization: only the
	// fleet's operator (nodes.admin) is answered it; any other caller, nil.
	HolderByVM   *dataloader.Loader[string, *models.GPUHolder]
	VMsByNode    *dataloader.Loader[string, []*models.VM]
	WorkloadByID *dataloader.Loader[string, *models.Workload]
	ProjectByID  *dataloader.Loader[string, *models.Project]
	// EventsByVM is a VM's whole event log, oldest first; VM.events pages it.
	EventsByVM *dataloader.Loader[string, []*models.VMEvent]
	// VolumeByVM is a VM's live volume (its disk, a pod's /workspace).
	VolumeByVM *dataloader.Loader[string, *models.Volume]
	// CostByVM is the cost of a VM's closed usage, in micro-cents (nil:
	// not a VM of the caller's organization). VM.costSoFar reads it after
	// checking billing.read.
	CostByVM *dataloader.Loader[string, *VMCost]
	// ConsoleByVM is the stored tail of a VM's serial console (nil: none
	// captured, or not a VM of the caller's organization).
	ConsoleByVM *dataloader.Loader[string, *store.Console]
	// BalanceByOrg is an organization's balance, burn, runway and spend
	// limit as package metering decides them for the caller (its refusal,
	// for one the caller may not read, is that key's error): every money
	// field of an organization reads it, so a query costs one balance per
	// organization, not one per field. Not batched into one statement: the
	// service computes each (Money.Balance), and a query names few.
	BalanceByOrg *dataloader.Loader[string, *metering.Balance]

	fetch fetchers
	mu    sync.Mutex // guards what FillGPUModels writes into shared rows
	// columns are what the loaders read of nodes and GPUs (Narrow).
	columns atomic.Pointer[Columns]
}

// Columns are the columns of nodes, GPUs and VMs a request's loaders read
// (and its page of VMs); nil reads every column.
type Columns struct{ Nodes, GPUs, VMs store.Columns }

// ColumnOf answers the column a narrowed read fills for Go field goField
// of T's rows (models.Node, models.GPU, models.VM), as the store names it;
// ok is false for a field no column fills and for a table Narrow does not
// narrow.
func ColumnOf[T any](goField string) (column string, ok bool) { return store.ColumnOf[T](goField) }

// NodeKey names a node as a pod does, by cluster and name: the key of
// NodeByName.
type NodeKey = store.NodeKey

// Narrow makes the loaders read only cols of nodes, GPUs and VMs from now on:
// the GraphQL face calls it, before a query runs, with the columns its
// selection needs, so a page of 500 pods' nodes and GPUs does not carry
// every column of 2,400 rows it does not answer.
func (l *Loaders) Narrow(cols Columns) { l.columns.Store(&cols) }

// Narrowed are the columns Narrow set (none, or no loaders: every column).
func (l *Loaders) Narrowed() Columns {
	if l == nil {
		return Columns{}
	}
	if c := l.columns.Load(); c != nil {
		return *c
	}
	return Columns{}
}

// fetchers are the batch reads behind the loaders, already scoped to the
// caller; the Sources (prefetch.go) run the same ones.
type fetchers struct {
	nodesByID   func(context.Context, []string) ([]*models.Node, error)
	nodesByName func(context.Context, []store.NodeKey) ([]*models.Node, error)
	gpusByNode  func(context.Context, []string) ([]*models.GPU, error)
	gpusByVM    func(context.Context, []string) ([]*models.GPU, error)
	models      func(context.Context, []string) ([]*models.GPUModel, error)
	vms         func(context.Context, []string) ([]*models.VM, error)
	vmsByNode   func(context.Context, []string) ([]*models.VM, error)
	workloads   func(context.Context, []string) ([]*models.Workload, error)
	projects    func(context.Context, []string) ([]*models.Project, error)
	events      func(context.Context, []string) ([]*models.VMEvent, error)
	volumes     func(context.Context, []string) ([]*models.Volume, error)
	costs       func(context.Context, []string) ([]*VMCost, error)
	consoles    func(context.Context, []string) ([]*store.Console, error)
	holders     func(context.Context, []string) ([]*models.GPUHolder, error)
}

// VMCost is a VM's closed usage cost, in micro-cents.
type VMCost struct {
	VMID       string
	MicroCents int64
}

// The keys rows answer to, per loader.
func nodeID(n *models.Node) string { return n.ID }
func nodeKey(n *models.Node) store.NodeKey {
	return store.NodeKey{ClusterID: n.ClusterID, Name: n.Name}
}
func gpuNode(g *models.GPU) string { return g.NodeID }
func gpuHolder(g *models.GPU) string {
	if g.HolderVMID == nil {
		return ""
	}
	return *g.HolderVMID
}
func modelID(m *models.GPUModel) string { return m.ID }
func vmID(v *models.VM) string          { return v.ID }
func vmNode(v *models.VM) string {
	if v.NodeID == nil {
		return ""
	}
	return *v.NodeID
}
func workloadID(w *models.Workload) string { return w.ID }
func projectID(p *models.Project) string   { return p.ID }
func eventVM(e *models.VMEvent) string     { return e.VMID }
func volumeVM(v *models.Volume) string     { return v.VMID }
func costVM(c *VMCost) string              { return c.VMID }
func consoleVM(c *store.Console) string    { return c.VMID }
func holderVM(h *models.GPUHolder) string  { return h.VMID }

// Money is what BalanceByOrg reads through: the metering service, which
// checks that the caller may read the organization's money and decides
// its balance.
type Money interface {
	Balance(ctx context.Context, caller *auth.Caller, orgID string) (*metering.Balance, error)
}

// New makes the loaders of one request of caller c (nil: an anonymous
// caller, who can see no organization's VMs and no tenant's workloads),
// reading rows from st and balances from money.
func New(st *store.Store, money Money, c *auth.Caller, wait time.Duration) *Loaders {
	if wait <= 0 {
		wait = DefaultWait
	}
	org, tenant := "", -1
	if c != nil {
		org, tenant = c.OrganizationID, c.TenantID
	}
	l := &Loaders{}
	f := fetchers{
		nodesByID: func(ctx context.Context, ids []string) ([]*models.Node, error) {
			return st.NodesByIDs(ctx, ids, l.Narrowed().Nodes)
		},
		nodesByName: func(ctx context.Context, keys []store.NodeKey) ([]*models.Node, error) {
			return st.NodesByClusterNames(ctx, keys, l.Narrowed().Nodes)
		},
		gpusByNode: func(ctx context.Context, ids []string) ([]*models.GPU, error) {
			return st.GPUsByNodeIDs(ctx, ids, l.Narrowed().GPUs)
		},
		gpusByVM: func(ctx context.Context, ids []string) ([]*models.GPU, error) {
			return st.GPUsByHolders(ctx, ids, l.Narrowed().GPUs)
		},
		models: st.GPUModelsByIDs,
		vms: func(ctx context.Context, ids []string) ([]*models.VM, error) {
			return st.VMsByIDs(ctx, org, ids, l.Narrowed().VMs)
		},
		vmsByNode: func(ctx context.Context, ids []string) ([]*models.VM, error) {
			return st.VMsByNodeIDs(ctx, org, ids, l.Narrowed().VMs)
		},
		workloads: func(ctx context.Context, ids []string) ([]*models.Workload, error) {
			return st.WorkloadsByIDs(ctx, tenant, ids)
		},
		projects: func(ctx context.Context, ids []string) ([]*models.Project, error) {
			return st.ProjectsByIDs(ctx, tenant, ids)
		},
		events: func(ctx context.Context, ids []string) ([]*models.VMEvent, error) {
			return st.EventsOfVMs(ctx, org, ids)
		},
		volumes: func(ctx context.Context, ids []string) ([]*models.Volume, error) {
			return st.VolumesOfVMs(ctx, org, ids)
		},
		costs: func(ctx context.Context, ids []string) ([]*VMCost, error) {
			m, err := st.CostsOf(ctx, org, ids)
			out := make([]*VMCost, 0, len(m))
			for id, c := range m {
				out = append(out, &VMCost{VMID: id, MicroCents: c})
			}
			return out, err
		},
		// Who holds a GPU, whichever organization, is the fleet
		// operator's to read: any other caller's read is of nothing.
		holders: func(ctx context.Context, ids []string) ([]*models.GPUHolder, error) {
			if c == nil || !c.Can(auth.NodesAdmin) {
				return nil, nil
			}
			return st.HoldersOf(ctx, ids)
		},
		consoles: func(ctx context.Context, ids []string) ([]*store.Console, error) {
			return st.ConsolesOf(ctx, org, ids)
		},
	}
	l.NodeByID = one(wait, f.nodesByID, nodeID)
	l.NodeByName = one(wait, f.nodesByName, nodeKey)
	l.GPUsByNode = many(wait, f.gpusByNode, gpuNode)
	l.GPUsByVM = many(wait, f.gpusByVM, gpuHolder)
	l.ModelByID = one(wait, f.models, modelID)
	l.VMByID = one(wait, f.vms, vmID)
	l.HolderByVM = one(wait, f.holders, holderVM)
	l.VMsByNode = many(wait, f.vmsByNode, vmNode)
	l.WorkloadByID = one(wait, f.workloads, workloadID)
	l.ProjectByID = one(wait, f.projects, projectID)
	l.EventsByVM = many(wait, f.events, eventVM)
	l.VolumeByVM = one(wait, f.volumes, volumeVM)
	l.CostByVM = one(wait, f.costs, costVM)
	l.ConsoleByVM = one(wait, f.consoles, consoleVM)
	l.BalanceByOrg = each(wait, func(ctx context.Context, orgID string) (*metering.Balance, error) {
		return money.Balance(ctx, c, orgID)
	})
	l.fetch = f
	return l
}

// one makes a loader of at most one row per key; a key without a row
// answers nil, and a failed batch answers its error for every key.
func one[K comparable, V any](wait time.Duration, fetch func(context.Context, []K) ([]*V, error), key func(*V) K) *dataloader.Loader[K, *V] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []K) []*dataloader.Result[*V] {
		rows, err := fetch(ctx, keys)
		out := make([]*dataloader.Result[*V], len(keys))
		byKey := indexOne(rows, key)
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
		byKey := indexMany(rows, key, keys)
		for i, k := range keys {
			out[i] = &dataloader.Result[[]*V]{Data: byKey[k], Error: err}
		}
		return out
	}, dataloader.WithWait[K, []*V](wait))
}

// each makes a loader that reads each key of a batch on its own with
// read, each key answering its own value or error: what it saves is the
// second read of a key, which its cache answers.
func each[K comparable, V any](wait time.Duration, read func(context.Context, K) (V, error)) *dataloader.Loader[K, V] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		out := make([]*dataloader.Result[V], len(keys))
		for i, k := range keys {
			v, err := read(ctx, k)
			out[i] = &dataloader.Result[V]{Data: v, Error: err}
		}
		return out
	}, dataloader.WithWait[K, V](wait))
}

// indexOne maps each row to its key.
func indexOne[K comparable, V any](rows []*V, key func(*V) K) map[K]*V {
	byKey := make(map[K]*V, len(rows))
	for _, r := range rows {
		byKey[key(r)] = r
	}
	return byKey
}

// indexMany groups rows by key, in the order fetch gave them; every asked
// key gets a list, empty when it has no rows.
func indexMany[K comparable, V any](rows []*V, key func(*V) K, keys []K) map[K][]*V {
	byKey := make(map[K][]*V, len(keys))
	for _, r := range rows {
		k := key(r)
		byKey[k] = append(byKey[k], r)
	}
	for _, k := range keys {
		if byKey[k] == nil {
			byKey[k] = []*V{}
		}
	}
	return byKey
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

// Factory makes the loaders of one request for its caller c, over the
// store, money and wait it was made with (NewFactory): what the HTTP edge
// holds, so that it makes loaders without knowing the store.
type Factory func(c *auth.Caller) *Loaders

// NewFactory is the Factory of loaders reading st and money (the
// process's metering service) that collect keys for wait (DefaultWait
// when zero).
func NewFactory(st *store.Store, money Money, wait time.Duration) Factory {
	return func(c *auth.Caller) *Loaders { return New(st, money, c, wait) }
}

// Middleware gives each request its own loaders, scoped to its caller; it
// runs after authentication. The server puts it on /graphql alone: the
// REST handlers and the agents' reports read through the services, and
// build none.
func (f Factory) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		next.ServeHTTP(w, r.WithContext(With(ctx, f(auth.FromContext(ctx)))))
	})
}
