// Package hardware is the console's reads of the nodes, their GPUs and the
// GPU model catalog: nodes a page at a time, GPUs narrowed by health,
// model and node. Nodes and GPUs are shared by every organization (the
// shared inventory) and need compute.read; who holds a GPU is not part of
// these rows (the GraphQL face shows a GPU's holder only through the
// caller's own VMs), so no organization's allocation shows here.
//
// It is not the agent's inventory report (POST /v1/agent/inventory,
// package nodes): in code "inventory" names only that report, the wire's
// word, and this package's name says what it reads.
package hardware

import (
	"context"
	"strconv"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// Service is the hardware reads for both faces.
type Service struct{ store *store.Store }

// New is the hardware service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// The lists' names in their cursors.
const (
	nodeCursors = "nodes"
	gpuCursors  = "gpus"
)

// AllNodes answers every node of statuses (none: every status) by name,
// unpaged: the nodes query.
func (s *Service) AllNodes(ctx context.Context, c *auth.Caller, statuses []models.NodeStatus) ([]*models.Node, error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	return s.store.Nodes(ctx, statuses)
}

// NodePage is an offset page of nodes by name and how many match in all.
func (s *Service) NodePage(ctx context.Context, c *auth.Caller, statuses []models.NodeStatus, page paging.Page) ([]*models.Node, int64, error) {
	if err := s.MayRead(c); err != nil {
		return nil, 0, err
	}
	return s.store.NodePage(ctx, statuses, page.Offset, page.Limit)
}

// NodeQuery is a cursor page of nodes.
type NodeQuery struct {
	Statuses []models.NodeStatus
	First    *int
	After    *string
	Total    bool
}

// Nodes is a cursor page of nodes by name.
func (s *Service) Nodes(ctx context.Context, c *auth.Caller, q NodeQuery) (*paging.Connection[models.Node], error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	page, err := paging.ParseCursor(nodeCursors, 1, q.First, q.After)
	if err != nil {
		return nil, err
	}
	var after *store.After
	if k := page.After; k != nil {
		after = &store.After{Values: []any{deref(k.Sort[0])}, ID: k.ID}
	}
	rows, more, total, err := s.store.NodesAfter(ctx, q.Statuses, after, page.First, q.Total)
	if err != nil {
		return nil, err
	}
	return paging.NewConnection(nodeCursors, page, rows, more, total, func(n *models.Node) paging.Key {
		return paging.Key{Sort: []*string{&n.Name}, ID: n.ID}
	}), nil
}

// GPUQuery is a cursor page of GPUs, narrowed by health, model and node.
type GPUQuery struct {
	Health  *models.GPUHealth
	ModelID string
	NodeID  string
	First   *int
	After   *string
	Total   bool
}

// GPUs is a cursor page of GPUs by node and index.
func (s *Service) GPUs(ctx context.Context, c *auth.Caller, q GPUQuery) (*paging.Connection[models.GPU], error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	if err := bounds.Text("modelId", q.ModelID, bounds.MaxID); err != nil {
		return nil, err
	}
	if err := bounds.Text("nodeId", q.NodeID, bounds.MaxID); err != nil {
		return nil, err
	}
	page, err := paging.ParseCursor(gpuCursors, 2, q.First, q.After)
	if err != nil {
		return nil, err
	}
	var after *store.After
	if k := page.After; k != nil {
		idx, err := strconv.Atoi(deref(k.Sort[1]))
		if err != nil {
			return nil, apierr.BadRequest("after is not a cursor of this list and order: pass an endCursor or edge cursor it answered")
		}
		after = &store.After{Values: []any{deref(k.Sort[0]), idx}, ID: k.ID}
	}
	rows, more, total, err := s.store.GPUsAfter(ctx, store.GPUQuery{Health: q.Health, ModelID: q.ModelID, NodeID: q.NodeID}, after, page.First, q.Total)
	if err != nil {
		return nil, err
	}
	return paging.NewConnection(gpuCursors, page, rows, more, total, func(g *models.GPU) paging.Key {
		idx := strconv.Itoa(g.Index)
		return paging.Key{Sort: []*string{&g.NodeID, &idx}, ID: g.ID}
	}), nil
}

// Models answers the GPU model catalog by name.
func (s *Service) Models(ctx context.Context, c *auth.Caller) ([]*models.GPUModel, error) {
	if err := s.MayRead(c); err != nil {
		return nil, err
	}
	return s.store.GPUModels(ctx)
}

// MayRead is the permission every hardware read needs: compute.read. Each
// read checks it first; a face that reads parameters of its own before
// calling one asks it first, so that a refusal answers before a bad
// parameter does.
func (s *Service) MayRead(c *auth.Caller) error { return c.Require(auth.ComputeRead) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
