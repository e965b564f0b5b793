package hardware_test

import (
	"context"
	"slices"
	"testing"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/hardware"
	"gpugraph/internal/store"
	"gpugraph/models"
)

func nodeNames(list []*models.Node) []string {
	var out []string
	for _, n := range list {
		out = append(out, n.Name)
	}
	return out
}

func gpuIDs(list []*models.GPU) []string {
	var out []string
	for _, g := range list {
		out = append(out, g.ID)
	}
	return out
}

// Nodes are read by name, whole, an offset page or a cursor page at a
// time, narrowed by status; every organization's caller sees the same
// shared nodes.
func TestNodes(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := hardware.New(st)
		for _, key := range []string{"acme-reader", "globex-operator"} {
			all, err := svc.AllNodes(ctx, datasettest.Caller(t, st, key), nil)
			if err != nil || !slices.Equal(nodeNames(all), []string{"gpu-node-1", "gpu-node-2"}) {
				t.Errorf("%s: nodes %v %v", key, nodeNames(all), err)
			}
		}
		c := datasettest.Caller(t, st, "acme-reader")
		online, err := svc.AllNodes(ctx, c, []models.NodeStatus{models.NodeOnline})
		if err != nil || !slices.Equal(nodeNames(online), []string{"gpu-node-1"}) {
			t.Errorf("online nodes: %v %v", nodeNames(online), err)
		}
		page, total, err := svc.NodePage(ctx, c, nil, paging.Page{Offset: 1, Limit: 1})
		if err != nil || !slices.Equal(nodeNames(page), []string{"gpu-node-2"}) || total != 2 {
			t.Errorf("offset page 1+1: %v of %d, %v", nodeNames(page), total, err)
		}
		first, err := svc.Nodes(ctx, c, hardware.NodeQuery{First: new(1), Total: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(nodeNames(first.Rows), []string{"gpu-node-1"}) || !first.HasNext || first.Total != 2 {
			t.Fatalf("first cursor page: %v hasNext %v total %d", nodeNames(first.Rows), first.HasNext, first.Total)
		}
		next, err := svc.Nodes(ctx, c, hardware.NodeQuery{First: new(1), After: &first.Cursors[0]})
		if err != nil || !slices.Equal(nodeNames(next.Rows), []string{"gpu-node-2"}) || next.HasNext {
			t.Errorf("second cursor page: %v hasNext %v, %v", nodeNames(next.Rows), next.HasNext, err)
		}
		// A GPU list's cursor is not a node list's.
		gpus, err := svc.GPUs(ctx, c, hardware.GPUQuery{First: new(1)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Nodes(ctx, c, hardware.NodeQuery{After: &gpus.Cursors[0]})
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "after is not a cursor of this list and order: pass an endCursor or edge cursor it answered")
		_, err = svc.Nodes(ctx, c, hardware.NodeQuery{First: new(0)})
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "first must be between 1 and 500, got 0")
	})
}

// GPUs are read by node and index, narrowed by health, model and node.
func TestGPUs(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := hardware.New(st)
		c := datasettest.Caller(t, st, "acme-reader")
		for _, q := range []struct {
			q    hardware.GPUQuery
			want []string
		}{
			{hardware.GPUQuery{Health: new(models.GPUFailed)}, []string{"n1-g7"}},
			{hardware.GPUQuery{ModelID: "mi300x"}, []string{"n2-g0", "n2-g1", "n2-g2", "n2-g3"}},
			{hardware.GPUQuery{NodeID: "n1", First: new(3)}, []string{"n1-g0", "n1-g1", "n1-g2"}},
			{hardware.GPUQuery{NodeID: "n3"}, nil},
		} {
			conn, err := svc.GPUs(ctx, c, q.q)
			if err != nil || !slices.Equal(gpuIDs(conn.Rows), q.want) {
				t.Errorf("%+v: %v %v, want %v", q.q, gpuIDs(conn.Rows), err, q.want)
			}
		}
		all, err := svc.GPUs(ctx, c, hardware.GPUQuery{Total: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Rows) != 12 || all.Total != 12 || all.HasNext {
			t.Fatalf("all GPUs: %d rows, total %d, hasNext %v", len(all.Rows), all.Total, all.HasNext)
		}
		g7 := all.Rows[7]
		if g7.ID != "n1-g7" || g7.Index != 7 || g7.UUID != "GPU-n1-0007" || g7.Health != models.GPUFailed || g7.FailedReason == nil || *g7.FailedReason != "XID 79" {
			t.Errorf("n1-g7: %+v", g7)
		}
		// The page after n1's last GPU is n2's first (node, then index order).
		next, err := svc.GPUs(ctx, c, hardware.GPUQuery{First: new(1), After: &all.Cursors[7]})
		if err != nil || !slices.Equal(gpuIDs(next.Rows), []string{"n2-g0"}) {
			t.Errorf("after n1-g7: %v %v", gpuIDs(next.Rows), err)
		}
		ms, err := svc.Models(ctx, c)
		if err != nil || len(ms) != 2 || ms[0].ID != "mi300x" || ms[1].ID != "h100-80gb" {
			t.Errorf("models by name: %+v %v", ms, err)
		}
	})
}

// Every hardware read needs compute.read: a caller without it gets the
// 403 naming it (before a bad parameter's 400), no caller the 401.
func TestReadsNeedComputeRead(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := hardware.New(st)
		for _, c := range []struct {
			caller *auth.Caller
			status int
			code   string
			msg    string
		}{
			{datasettest.Caller(t, st, "acme-workloads"), 403, "FORBIDDEN", "this API key lacks the compute.read permission"},
			{nil, 401, "UNAUTHENTICATED", "missing API key: send Authorization: Bearer <API key>"},
		} {
			_, err := svc.AllNodes(ctx, c.caller, nil)
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, _, err = svc.NodePage(ctx, c.caller, nil, paging.Page{Limit: 1})
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.Nodes(ctx, c.caller, hardware.NodeQuery{First: new(0)})
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.GPUs(ctx, c.caller, hardware.GPUQuery{After: new("nonsense")})
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.Models(ctx, c.caller)
			datasettest.WantError(t, err, c.status, c.code, c.msg)
		}
	})
}
