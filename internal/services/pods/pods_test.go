package pods_test

import (
	"context"
	"slices"
	"testing"

	"gpugraph/internal/auth"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/pods"
	"gpugraph/internal/store"
	"gpugraph/models"
)

func podNames(list []*models.Pod) []string {
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.Name
	}
	return out
}

// List answers the caller's tenant's pods only, oldest first, a page at a
// time with the offset of the next page, and the total when asked.
func TestListIsTheTenantsPods(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := pods.New(st)
		acme := datasettest.Caller(t, st, "acme-workloads")
		page, err := svc.List(ctx, acme, pods.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := podNames(page.Pods), []string{"resnet-train-0", "resnet-train-1", "llm-serve-0"}; !slices.Equal(got, want) || page.Next != nil || page.Total != 0 {
			t.Errorf("acme's pods: %v next %v total %d, want %v, no next page, no total", got, page.Next, page.Total, want)
		}
		globex, err := svc.List(ctx, datasettest.Caller(t, st, "globex-operator"), pods.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if got := podNames(globex.Pods); !slices.Equal(got, []string{"globex-job-0"}) {
			t.Errorf("globex's pods: %v", got)
		}

		l, err := svc.Prepare(acme, pods.Query{Limit: new(2)})
		if err != nil {
			t.Fatal(err)
		}
		l.Total = true
		first, err := l.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := podNames(first.Pods); !slices.Equal(got, []string{"resnet-train-0", "resnet-train-1"}) || first.Next == nil || *first.Next != 2 || first.Total != 3 {
			t.Errorf("first page of 2: %v next %v total %d", got, first.Next, first.Total)
		}
		second, err := svc.List(ctx, acme, pods.Query{Offset: first.Next, Limit: new(2)})
		if err != nil {
			t.Fatal(err)
		}
		if got := podNames(second.Pods); !slices.Equal(got, []string{"llm-serve-0"}) || second.Next != nil {
			t.Errorf("second page: %v next %v", got, second.Next)
		}
	})
}

// Filters, typed filters and a workload narrow the list, and a count
// matches its list; another tenant's workload or revision does not exist.
func TestListNarrowsAndCounts(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := pods.New(st)
		acme := datasettest.Caller(t, st, "acme-workloads")
		for _, c := range []struct {
			q    pods.Query
			want []string
		}{
			{pods.Query{FilterBy: []string{"nodeName==gpu-node-1"}}, []string{"resnet-train-0", "llm-serve-0"}},
			{pods.Query{Where: map[string]any{"name": map[string]any{"startsWith": "resnet"}}}, []string{"resnet-train-0", "resnet-train-1"}},
			{pods.Query{WorkloadID: "22222222-2222-4222-8222-222222222222"}, []string{"llm-serve-0"}},
			{pods.Query{Search: "llm"}, []string{"llm-serve-0"}},
			{pods.Query{Deleted: true}, []string{}},
		} {
			page, err := svc.List(ctx, acme, c.q)
			if err != nil {
				t.Fatalf("%+v: %v", c.q, err)
			}
			if got := podNames(page.Pods); !slices.Equal(got, c.want) {
				t.Errorf("%+v: %v, want %v", c.q, got, c.want)
			}
			if c.q.WorkloadID != "" {
				continue
			}
			n, err := svc.Count(ctx, acme, pods.CountQuery{FilterBy: c.q.FilterBy, Where: c.q.Where, Search: c.q.Search, Deleted: c.q.Deleted})
			if err != nil || n != len(c.want) {
				t.Errorf("count of %+v: %d %v, want %d", c.q, n, err, len(c.want))
			}
		}

		// globex's workload and acme's revision, asked by the other tenant.
		globex := datasettest.Caller(t, st, "globex-operator")
		_, err := svc.List(ctx, globex, pods.Query{WorkloadID: "11111111-1111-4111-8111-111111111111"})
		datasettest.WantError(t, err, 404, "NOT_FOUND", `workload "11111111-1111-4111-8111-111111111111" not found`)
		_, err = svc.OfRevision(ctx, globex, "44444444-4444-4444-8444-444444444444", false)
		datasettest.WantError(t, err, 404, "NOT_FOUND", `revision "44444444-4444-4444-8444-444444444444" not found`)
		rev, err := svc.OfRevision(ctx, acme, "44444444-4444-4444-8444-444444444444", false)
		if err != nil || !slices.Equal(podNames(rev), []string{"llm-serve-0"}) {
			t.Errorf("acme's revision: %v %v", podNames(rev), err)
		}
	})
}

// Bad input is a 400 naming what was wrong, before the database is read.
func TestListRefusesBadInput(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := pods.New(st)
		acme := datasettest.Caller(t, st, "acme-workloads")
		_, err := svc.List(ctx, acme, pods.Query{Limit: new(-1)})
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "limit must be between 1 and 500, got -1")
		_, err = svc.List(ctx, acme, pods.Query{Where: map[string]any{"ip": map[string]any{"eq": "x"}}})
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "where.ip: not a field pods filter on")
		_, err = svc.Count(ctx, acme, pods.CountQuery{FilterBy: []string{"nodeName"}})
		datasettest.WantError(t, err, 400, "BAD_REQUEST", `invalid filterBy "nodeName": missing operator`)
	})
}

// Projects and workloads are the tenant's own, by name.
func TestProjectsAndWorkloadsAreTheTenants(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := pods.New(st)
		acme := datasettest.Caller(t, st, "acme-workloads")
		projects, err := svc.Projects(ctx, acme)
		if err != nil || len(projects) != 1 || projects[0].Name != "vision" {
			t.Errorf("acme's projects: %+v %v", projects, err)
		}
		ws, err := svc.Workloads(ctx, acme, "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, w := range ws {
			names = append(names, w.Name)
		}
		if !slices.Equal(names, []string{"llm-serve", "resnet-train"}) {
			t.Errorf("acme's workloads: %v", names)
		}
		// globex's project holds none of acme's.
		ws, err = svc.Workloads(ctx, acme, "2", nil, nil)
		if err != nil || len(ws) != 0 {
			t.Errorf("acme's workloads of globex's project: %+v %v", ws, err)
		}
	})
}

// Every read needs workloads.read: a caller without it gets the 403
// naming it, no caller the 401, and nothing is read.
func TestReadsNeedWorkloadsRead(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := pods.New(st)
		const lacks = "this API key lacks the workloads.read permission"
		for _, c := range []struct {
			caller *auth.Caller
			status int
			code   string
			msg    string
		}{
			{datasettest.Caller(t, st, "acme-reader"), 403, "FORBIDDEN", lacks},
			{nil, 401, "UNAUTHENTICATED", "missing API key: send Authorization: Bearer <API key>"},
		} {
			_, err := svc.List(ctx, c.caller, pods.Query{})
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.Count(ctx, c.caller, pods.CountQuery{})
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.OfRevision(ctx, c.caller, "44444444-4444-4444-8444-444444444444", false)
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.Projects(ctx, c.caller)
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.Workloads(ctx, c.caller, "", nil, nil)
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			_, err = svc.Connection(ctx, c.caller, pods.CursorQuery{})
			datasettest.WantError(t, err, c.status, c.code, c.msg)
			// A refusal answers before a bad parameter does.
			_, err = svc.List(ctx, c.caller, pods.Query{Limit: new(-1)})
			datasettest.WantError(t, err, c.status, c.code, c.msg)
		}
	})
}

// Connection answers cursor pages: the second starts after the first's
// last cursor.
func TestConnectionPagesByCursor(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := pods.New(st)
		acme := datasettest.Caller(t, st, "acme-workloads")
		first, err := svc.Connection(ctx, acme, pods.CursorQuery{First: new(2), Total: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := podNames(first.Rows); !slices.Equal(got, []string{"resnet-train-0", "resnet-train-1"}) || !first.HasNext || first.Total != 3 || len(first.Cursors) != 2 {
			t.Fatalf("first page: %v hasNext %v total %d cursors %d", got, first.HasNext, first.Total, len(first.Cursors))
		}
		next, err := svc.Connection(ctx, acme, pods.CursorQuery{First: new(2), After: &first.Cursors[1]})
		if err != nil {
			t.Fatal(err)
		}
		if got := podNames(next.Rows); !slices.Equal(got, []string{"llm-serve-0"}) || next.HasNext || !next.After {
			t.Errorf("second page: %v hasNext %v after %v", got, next.HasNext, next.After)
		}
		_, err = svc.Connection(ctx, acme, pods.CursorQuery{After: new("nonsense")})
		datasettest.WantError(t, err, 400, "BAD_REQUEST", "after is not a cursor of this list and order: pass an endCursor or edge cursor it answered")
	})
}
