package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// connPage is a connection's page as the tests read it.
type connPage struct {
	Edges []struct {
		Cursor string
		Node   struct{ ID string }
	}
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

// walk reads a connection page by page, first rows at a time, calling
// between after each page, and answers the ids in the order read.
func walk(t *testing.T, env *servertest.Env, token, field, args, fields string, first int, between func(page int)) []string {
	t.Helper()
	q := fmt.Sprintf(`query($first: Int, $after: String) { c: %s(first: $first, after: $after%s) { edges { cursor node { id %s } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, field, args, fields)
	var ids []string
	var after any
	for page := 0; ; page++ {
		r := env.GraphQL(token, q, map[string]any{"first": first, "after": after})
		var got struct{ C connPage }
		env.Decode(r, &got)
		p := got.C
		if p.PageInfo.HasPreviousPage != (after != nil) {
			t.Fatalf("%s page %d: hasPreviousPage %v", field, page, p.PageInfo.HasPreviousPage)
		}
		for i, e := range p.Edges {
			ids = append(ids, e.Node.ID)
			if i == len(p.Edges)-1 && (p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != e.Cursor) {
				t.Fatalf("%s page %d: endCursor %v is not the last edge's %s", field, page, p.PageInfo.EndCursor, e.Cursor)
			}
		}
		if !p.PageInfo.HasNextPage {
			return ids
		}
		if len(p.Edges) != first {
			t.Fatalf("%s page %d: %d rows and a next page", field, page, len(p.Edges))
		}
		if page > 1000 {
			t.Fatalf("%s: no end", field)
		}
		after = *p.PageInfo.EndCursor
		if between != nil {
			between(page)
		}
	}
}

// A cursor page read on after rows were inserted before its cursor (and
// rows after it removed) neither repeats nor skips a row that was there
// all along: cursors are keyset positions, not offsets.
func TestCursorPagesStableUnderInserts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, fleet(7))
		want := walk(t, env, "fleet-reader", "nodesConnection", "", "", 3, nil)
		if len(want) != 7 {
			t.Fatalf("nodes: %v", want)
		}
		got := walk(t, env, "fleet-reader", "nodesConnection", "", "", 3, func(page int) {
			// node-000 … sort after "a-…": every insert lands before the cursor.
			n := &models.Node{ID: fmt.Sprintf("x%d", page), Name: fmt.Sprintf("a-%d", page), Status: models.NodeOnline}
			storetest.Insert(t, st, n)
		})
		if !slices.Equal(got, want) {
			t.Fatalf("nodes with inserts before the cursor: %v, want %v", got, want)
		}

		// GPUs are by node id, then index: node "a" sorts before n0 … n6.
		storetest.Insert(t, st, &models.Node{ID: "a", Name: "z", Status: models.NodeOnline})
		wantGPUs := walk(t, env, "fleet-reader", "gpus", "", "", 5, nil)
		if len(wantGPUs) != 56 {
			t.Fatalf("gpus: %d", len(wantGPUs))
		}
		gotGPUs := walk(t, env, "fleet-reader", "gpus", "", "", 5, func(page int) {
			g := &models.GPU{ID: fmt.Sprintf("x%d-g", page), NodeID: "a", Index: page, UUID: fmt.Sprintf("GPU-x-%d", page), ModelID: "h100", Health: models.GPUHealthy}
			storetest.Insert(t, st, g)
		})
		if !slices.Equal(gotGPUs, wantGPUs) {
			t.Fatalf("gpus with inserts before the cursor: %v, want %v", gotGPUs, wantGPUs)
		}

		// VMs are newest first: a VM created now lands before any cursor.
		wantVMs := walk(t, env, "fleet-reader", "vmsConnection", "", "", 2, nil)
		if len(wantVMs) != 7 {
			t.Fatalf("vms: %v", wantVMs)
		}
		gotVMs := walk(t, env, "fleet-reader", "vmsConnection", "", "", 2, func(page int) {
			now := time.Now().UTC()
			v := &models.VM{ID: fmt.Sprintf("new-%d", page), Name: "new", OrganizationID: "o", Status: models.VMStopped, CreatedAt: &now}
			storetest.Insert(t, st, v)
		})
		if !slices.Equal(gotVMs, wantVMs) {
			t.Fatalf("vms with inserts before the cursor: %v, want %v", gotVMs, wantVMs)
		}
	})
}

// Walking podsConnection page by page in every order answers exactly the
// offset list of pods in that order, nulls and ties included, on both
// engines.
func TestPodCursorsWalkEveryOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b, err := json.Marshal(fleetgen.Generate(fleetgen.Options{Nodes: 6, Pods: 90, Tenants: 1, Seed: 3}))
		if err != nil {
			t.Fatal(err)
		}
		env := servertest.New(t, st, string(b))
		// Every sortable field of the registry, so a new one needs its cursor value.
		for _, fd := range podfield.Sortable() {
			for _, order := range []string{"ASC", "DESC"} {
				field := fd.Enum
				args := fmt.Sprintf(", sortBy: %s, sortOrder: %s", field, order)
				var list struct {
					Pods struct{ Pods []struct{ ID string } }
				}
				env.Decode(env.GraphQL(fleetgen.Token(0), fmt.Sprintf(`{ pods(limit: 500%s) { pods { id } } }`, args), nil), &list)
				var want []string
				for _, p := range list.Pods.Pods {
					want = append(want, p.ID)
				}
				if len(want) != 90 {
					t.Fatalf("%s %s: %d pods", field, order, len(want))
				}
				if got := walk(t, env, fleetgen.Token(0), "podsConnection", args, "", 7, nil); !slices.Equal(got, want) {
					t.Fatalf("%s %s: cursor walk\n%v\nwant the offset list\n%v", field, order, got, want)
				}
			}
		}
	})
}

// A cursor is good only for its list and order: any other is a 400 naming
// after, never a wrong page.
func TestForeignCursorsAreRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, servertest.Base)
		cursor := func(token, q string) string {
			var got struct {
				C struct{ PageInfo struct{ EndCursor string } }
			}
			env.Decode(env.GraphQL(token, q, nil), &got)
			return got.C.PageInfo.EndCursor
		}
		nodeCursor := cursor("acme-reader", `{ c: nodesConnection(first: 1) { pageInfo { endCursor } } }`)
		podAsc := cursor("acme-workloads", `{ c: podsConnection(first: 1) { pageInfo { endCursor } } }`)
		cases := []struct{ token, query, after string }{
			{"acme-reader", `query($a: String) { gpus(after: $a) { totalCount } }`, nodeCursor},
			{"acme-reader", `query($a: String) { vmsConnection(after: $a) { totalCount } }`, nodeCursor},
			{"acme-reader", `query($a: String) { nodesConnection(after: $a) { totalCount } }`, "not a cursor"},
			{"acme-workloads", `query($a: String) { podsConnection(after: $a, sortOrder: DESC) { totalCount } }`, podAsc},
			{"acme-workloads", `query($a: String) { podsConnection(after: $a, sortBy: NAME) { totalCount } }`, podAsc},
		}
		for _, c := range cases {
			r := env.GraphQL(c.token, c.query, map[string]any{"a": c.after})
			if r.Code() != "BAD_REQUEST" || r.Errors[0].Message != "after is not a cursor of this list and order: pass an endCursor or edge cursor it answered" {
				t.Errorf("%s after %q: %s %+v", c.query, c.after, r.Data, r.Errors)
			}
		}
		if r := env.GraphQL("acme-reader", `{ nodesConnection(first: 0) { totalCount } }`, nil); r.Code() != "BAD_REQUEST" || r.Errors[0].Message != "first must be between 1 and 500, got 0" {
			t.Errorf("first 0: %+v", r.Errors)
		}
	})
}
