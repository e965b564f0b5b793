package resolvers

import (
	"context"

	"gpugraph/graph/model"
	"gpugraph/internal/auth"
	"gpugraph/internal/fieldmodel"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/hardware"
	"gpugraph/internal/services/pods"
	"gpugraph/models"
)

// The console's root queries: catalogs for filter menus, an offset page of
// nodes and cursor pages (connections) of the big lists. Like every list
// they prefetch what they select below their rows (through edges.node and
// nodes alike: fieldmodel.Prefetch), and count their total only when it is
// selected.

func (r *queryResolver) Projects(ctx context.Context) ([]*models.Project, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return r.Services.Pods.Projects(ctx, c)
}

func (r *queryResolver) Workloads(ctx context.Context, projectID *string, offset, limit *int) ([]*models.Workload, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	list, err := r.Services.Pods.Workloads(ctx, c, orEmpty(projectID), offset, limit)
	if err != nil {
		return nil, err
	}
	return list, fieldmodel.Prefetch(ctx, list)
}

func (r *queryResolver) GPUModels(ctx context.Context) ([]*models.GPUModel, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	return r.Services.Hardware.Models(ctx, c)
}

func (r *queryResolver) Gpus(ctx context.Context, health *models.GPUHealth, modelID, nodeID *string, first *int, after *string) (*model.GPUConnection, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := r.Services.Hardware.GPUs(ctx, c, hardware.GPUQuery{
		Health: health, ModelID: orEmpty(modelID), NodeID: orEmpty(nodeID),
		First: first, After: after, Total: fieldmodel.Selects(ctx, "totalCount"),
	})
	if err != nil {
		return nil, err
	}
	if err := fieldmodel.Prefetch(ctx, conn.Rows); err != nil {
		return nil, err
	}
	out := &model.GPUConnection{Nodes: conn.Rows, PageInfo: pageInfo(conn), TotalCount: conn.Total, Edges: make([]*model.GPUEdge, len(conn.Rows))}
	for i, g := range conn.Rows {
		out.Edges[i] = &model.GPUEdge{Cursor: conn.Cursors[i], Node: g}
	}
	return out, nil
}

func (r *queryResolver) NodeList(ctx context.Context, status []models.NodeStatus, offset, limit *int) (*model.NodeList, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	page, err := paging.Parse(offset, limit)
	if err != nil {
		return nil, err
	}
	nodes, total, err := r.Services.Hardware.NodePage(ctx, c, status, page)
	if err != nil {
		return nil, err
	}
	if err := fieldmodel.Prefetch(ctx, nodes); err != nil {
		return nil, err
	}
	return &model.NodeList{Nodes: nodes, Next: page.Next(total), Total: int(total)}, nil
}

func (r *queryResolver) NodesConnection(ctx context.Context, status []models.NodeStatus, first *int, after *string) (*model.NodeConnection, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := r.Services.Hardware.Nodes(ctx, c, hardware.NodeQuery{Statuses: status, First: first, After: after, Total: fieldmodel.Selects(ctx, "totalCount")})
	if err != nil {
		return nil, err
	}
	if err := fieldmodel.Prefetch(ctx, conn.Rows); err != nil {
		return nil, err
	}
	out := &model.NodeConnection{Nodes: conn.Rows, PageInfo: pageInfo(conn), TotalCount: conn.Total, Edges: make([]*model.NodeEdge, len(conn.Rows))}
	for i, n := range conn.Rows {
		out.Edges[i] = &model.NodeEdge{Cursor: conn.Cursors[i], Node: n}
	}
	return out, nil
}

func (r *queryResolver) VmsConnection(ctx context.Context, status []models.VMStatus, first *int, after *string) (*model.VMConnection, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := r.Services.Compute.Connection(ctx, c, compute.CursorQuery{Statuses: status, First: first, After: after, Total: fieldmodel.Selects(ctx, "totalCount")})
	if err != nil {
		return nil, err
	}
	for _, v := range conn.Rows {
		loaders.For(ctx).VMByID.Prime(ctx, v.ID, v)
	}
	if err := fieldmodel.Prefetch(ctx, conn.Rows); err != nil {
		return nil, err
	}
	out := &model.VMConnection{Nodes: conn.Rows, PageInfo: pageInfo(conn), TotalCount: conn.Total, Edges: make([]*model.VMEdge, len(conn.Rows))}
	for i, v := range conn.Rows {
		out.Edges[i] = &model.VMEdge{Cursor: conn.Cursors[i], Node: v}
	}
	return out, nil
}

func (r *queryResolver) PodsConnection(ctx context.Context, where map[string]any, filterBy []string, search *string, sortBy *filterby.SortField, sortOrder *filterby.Order, first *int, after *string, deleted *bool, completed *bool) (*model.PodConnection, error) {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := r.Services.Pods.Connection(ctx, c, pods.CursorQuery{
		Query: pods.Query{
			FilterBy:  filterBy,
			Where:     podWhere(where),
			Search:    orEmpty(search),
			Sort:      filterby.SortOf(sortBy, sortOrder),
			Deleted:   isTrue(deleted),
			Completed: completed,
		},
		First: first, After: after,
		Columns: fieldmodel.PageColumns(ctx, "Pod"), Total: fieldmodel.Selects(ctx, "totalCount"),
	})
	if err != nil {
		return nil, err
	}
	if err := fieldmodel.Prefetch(ctx, conn.Rows); err != nil {
		return nil, err
	}
	out := &model.PodConnection{Nodes: conn.Rows, PageInfo: pageInfo(conn), TotalCount: conn.Total, Edges: make([]*model.PodEdge, len(conn.Rows))}
	for i, p := range conn.Rows {
		out.Edges[i] = &model.PodEdge{Cursor: conn.Cursors[i], Node: p}
	}
	return out, nil
}

func pageInfo[T any](c *paging.Connection[T]) *model.PageInfo {
	pi := &model.PageInfo{HasNextPage: c.HasNext, HasPreviousPage: c.After}
	if n := len(c.Cursors); n > 0 {
		pi.StartCursor, pi.EndCursor = &c.Cursors[0], &c.Cursors[n-1]
	}
	return pi
}
