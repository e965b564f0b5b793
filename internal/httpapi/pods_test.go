package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// Expected orders are worked out by hand from the table in
// pods_fixture_test.go. Acme's live pods in the default order (createdAt,
// ties on id) are p01 p02 p03 p04 p09 p05 p06.
const live = "p01 p02 p03 p04 p09 p05 p06"

func TestPodsSortOrders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct {
			sortBy, deleted, asc string
		}{
			{"", "", live},
			{"createdAt", "", live},
			// Byte order: upper-case ASCII, lower-case ASCII, É (C3 89), é (C3 A9); the two alpha-0 tie on id.
			{"name", "", "p02 p01 p09 p05 p06 p03 p04"},
			{"clusterId", "", "p05 p01 p02 p03 p04 p06 p09"},
			{"workloadId", "", "p01 p02 p05 p09 p03 p04 p06"},
			{"revisionId", "", "p03 p04 p01 p02 p05 p06 p09"},
			{"nodeName", "", "p01 p03 p06 p09 p02 p05 p04"},
			{"currentNodepool", "", "p01 p03 p05 p02 p06 p04 p09"},
			{"currentNodePool", "", "p01 p03 p05 p02 p06 p04 p09"},
			{"completedAt", "", "p02 p05 p09 p01 p03 p04 p06"},
			{"deletedAt", "", "p01 p02 p03 p04 p05 p06 p09"},
			{"k8sPhase", "", "p05 p04 p01 p03 p06 p02 p09"},
			{"createdAt", "true", "p10 p07 p08"},
			{"deletedAt", "true", "p07 p10 p08"},
			{"name", "true", "p07 p10 p08"},
			{"completedAt", "true", "p07 p10 p08"},
		} {
			base := q("sortBy", tc.sortBy, "deleted", tc.deleted, "limit", "500")
			if got, next := restList(t, env, "acme-workloads", "/api/v1/workloads/pods"+base); got != tc.asc || next != -1 {
				t.Errorf("sortBy=%s deleted=%s: %s next %d, want %s", tc.sortBy, tc.deleted, got, next, tc.asc)
			}
			got, _ := restList(t, env, "acme-workloads", "/api/v1/workloads/pods"+base+"&sortOrder=asc")
			if got != tc.asc {
				t.Errorf("sortBy=%s asc: %s, want %s", tc.sortBy, got, tc.asc)
			}
			got, _ = restList(t, env, "acme-workloads", "/api/v1/workloads/pods"+base+"&sortOrder=desc")
			if want := reversed(tc.asc); got != want {
				t.Errorf("sortBy=%s desc: %s, want %s", tc.sortBy, got, want)
			}
		}
	})
}

func TestPodsPaging(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct {
			query, want string
			next        int
		}{
			{"", live, -1}, // default limit 50
			{"?limit=3", "p01 p02 p03", 3},
			{"?limit=3&offset=3", "p04 p09 p05", 6},
			{"?limit=3&offset=6", "p06", -1},
			{"?offset=5&limit=3", "p05 p06", -1},     // across the end
			{"?offset=4&limit=3", "p09 p05 p06", -1}, // exactly to the end: no next
			{"?offset=7", "", -1},
			{"?offset=1000&limit=500", "", -1},
			{"?limit=1", "p01", 1},
			{"?limit=500", live, -1},
			{"?limit=6", "p01 p02 p03 p04 p09 p05", 6},
			{"?sortBy=name&sortOrder=desc&limit=2&offset=1", "p03 p06", 3},
			// Ties stay in place across pages: the two alpha-0 split over pages 1 and 2.
			{"?sortBy=name&limit=2", "p02 p01", 2},
			{"?sortBy=name&limit=2&offset=2", "p09 p05", 4},
			{"?filterBy=nodeName!%3Dgpu-node-1&sortBy=name&sortOrder=desc&limit=2", "p04 p05", 2},
			{"?filterBy=nodeName!%3Dgpu-node-1&sortBy=name&sortOrder=desc&limit=2&offset=2", "p02", -1},
		} {
			got, next := restList(t, env, "acme-workloads", "/api/v1/workloads/pods"+tc.query)
			if got != tc.want || next != tc.next {
				t.Errorf("%s: [%s] next %d, want [%s] next %d", tc.query, got, next, tc.want, tc.next)
			}
		}
		for _, bad := range []string{"limit=0", "limit=501", "limit=-1", "limit=x", "offset=-1", "offset=1.5", "limit=", "sortBy=size", "sortBy=projectId", "sortOrder=up", "sortOrder=DESC", "deleted=yes", "deleted=1", "completed=no", "verbosity=loud"} {
			status, body := servertest.PodsGET(t, env, "acme-workloads", "/api/v1/workloads/pods?"+bad)
			name, _, _ := strings.Cut(bad, "=")
			msg := messageOf(t, body)
			if bad == "limit=" {
				// An empty value is the default, as if absent.
				if status != http.StatusOK {
					t.Errorf("%s: %d %s", bad, status, body)
				}
				continue
			}
			if status != http.StatusBadRequest || !strings.Contains(msg, name) {
				t.Errorf("%s: %d %s, want 400 naming %s", bad, status, body, name)
			}
		}
	})
}

func TestPodsFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct {
			filters []string
			want    string
		}{
			{[]string{"nodeName==gpu-node-1"}, "p01 p03 p09 p06"},
			{[]string{"nodeName!=gpu-node-1"}, "p02 p04 p05"}, // null matches !=
			{[]string{"nodeName=@node-2"}, "p02 p05"},
			{[]string{"nodeName!@node-2"}, "p01 p03 p04 p09 p06"}, // null matches !@
			{[]string{"nodeName=^gpu"}, "p01 p02 p03 p09 p05 p06"},
			{[]string{"nodeName=$-2"}, "p02 p05"},
			{[]string{"name=^alpha"}, "p01 p09"},
			{[]string{"name=$-3"}, "p04"},
			{[]string{"name=@%"}, "p05"}, // % is literal
			{[]string{"name=@_"}, "p02"}, // _ is literal
			{[]string{"name=@a%"}, "p05"},
			{[]string{"name=@%a"}, ""},
			{[]string{"name==Élan-2"}, "p03"},
			{[]string{"name==élan-2"}, ""}, // case-sensitive
			{[]string{"name=^É"}, "p03"},
			{[]string{"name>=b"}, "p03 p04 p05 p06"}, // byte order
			{[]string{"name<=a"}, "p02"},
			{[]string{"name==a,b"}, ""}, // one filter, value "a,b"
			{[]string{"createdAt>=2024-01-01T02:00:00Z"}, "p04 p09 p05 p06"},
			{[]string{"createdAt<=2024-01-01T01:00:00Z"}, "p01 p02 p03"},
			{[]string{"createdAt==2024-01-01T01:00:00.000Z"}, "p02 p03"},
			{[]string{"createdAt==2024-01-01T03:00:00+02:00"}, "p02 p03"}, // compared as instants
			{[]string{"createdAt!=2024-01-01T01:00:00Z"}, "p01 p04 p09 p05 p06"},
			{[]string{"completedAt<=2024-01-01T06:00:00Z"}, "p02 p05"},
			{[]string{"completedAt>=2024-01-01T06:00:00Z"}, "p09 p05"},
			{[]string{"completedAt!=2024-01-01T05:00:00Z"}, "p01 p03 p04 p09 p05 p06"},
			{[]string{"deletedAt>=2000-01-01T00:00:00Z"}, ""},
			{[]string{"revisionId==" + r1}, "p03 p04"},
			{[]string{"revisionId!=" + r1}, "p01 p02 p09 p05 p06"},
			{[]string{"currentNodepool==pool-b"}, "p02 p06"},
			{[]string{"currentNodePool==pool-b"}, "p02 p06"},
			{[]string{"currentNodepool!=default"}, "p02 p04 p09 p06"},
			{[]string{"k8sPhase==Running"}, "p01 p03 p06"},
			{[]string{"projectId==3"}, "p03 p04 p06"},
			{[]string{"priorityClassName!=high"}, "p02 p05 p06"},
			{[]string{"workloadId==" + w1}, "p01 p02 p09 p05"},
			{[]string{"workloadId==" + w3}, ""}, // Globex's workload
			{[]string{"clusterId==" + c2}, "p05"},
			{[]string{"nodeName==gpu-node-1,k8sPhase==Running"}, "p01 p03 p06"},
			{[]string{"nodeName==gpu-node-1", "name=^alpha"}, "p01 p09"},
			{[]string{"nodeName==gpu-node-1,name=^alpha", "k8sPhase==Succeeded"}, "p09"},
		} {
			var pairs []string
			for _, f := range tc.filters {
				pairs = append(pairs, "filterBy", f)
			}
			got, _ := restList(t, env, "acme-workloads", "/api/v1/workloads/pods"+q(pairs...))
			if got != tc.want {
				t.Errorf("filterBy %q: [%s], want [%s]", tc.filters, got, tc.want)
			}
			if n := restCount(t, env, "acme-workloads", q(pairs...)); n != len(strings.Fields(tc.want)) {
				t.Errorf("count filterBy %q = %d, want %d", tc.filters, n, len(strings.Fields(tc.want)))
			}
		}
		for _, tc := range []struct{ filter, msg string }{
			{"size==1", `invalid filterBy "size==1": unknown field "size"`},
			{"name~=x", `invalid filterBy "name~=x": unknown operator`},
			{"name==", `invalid filterBy "name==": empty value`},
			{"createdAt=@2024", `invalid filterBy "createdAt=@2024": operator "=@" does not apply to dates`},
			{"createdAt>=yesterday", `invalid filterBy "createdAt>=yesterday": bad date`},
			{"createdAt>=2024-01-01T00:00:00", `invalid filterBy "createdAt>=2024-01-01T00:00:00": date has no time zone`},
			{"", `invalid filterBy "": missing field`},
		} {
			for _, path := range []string{"/api/v1/workloads/pods", "/api/v1/workloads/pods/count", "/api/v1/workloads/" + w1 + "/pods"} {
				status, body := servertest.PodsGET(t, env, "acme-workloads", path+q("filterBy", tc.filter))
				if status != http.StatusBadRequest || !strings.HasPrefix(messageOf(t, body), tc.msg) {
					t.Errorf("%s filterBy=%q: %d %s, want 400 with %s", path, tc.filter, status, body, tc.msg)
				}
			}
		}
	})
}

func TestPodsSearch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct {
			search, extra, want string
		}{
			{"É", "", "p03 p04"},
			{"é", "", "p03 p04"},
			{"ÉLAN", "", "p03 p04"},
			{"élan-2", "", "p03"},
			{"ELAN", "", ""}, // no accent folding
			{"ALPHA", "", "p01 p09"},
			{"%", "", "p05"}, // literal
			{"_", "", "p02"}, // literal
			{"zeta_", "", "p02"},
			{"vision", "", "p01 p02 p09 p05"}, // projectName
			{"VISION", "", "p01 p02 p09 p05"}, // projectName, any case
			{"LLM-serve", "", "p03 p04 p06"},  // workloadName
			{"node-2", "", "p02 p05"},         // nodeName
			{"-", "", live},                   // every pod has a dash somewhere
			{"STRAẞE", "", "p06"},             // capital sharp s folds to ß
			{"strasse", "", ""},               // ß is not ss
			{"globex", "", ""},                // another tenant's names
			{"\x1f", "", ""},                  // the key's separator
			{"a-0\x1fgpu", "", ""},            // never across two fields
			{"alpha", "&filterBy=nodeName%3D%3Dgpu-node-1&sortBy=createdAt&sortOrder=desc", "p09 p01"},
			{"σ", "&deleted=true", "p08"},
			{"ς", "&deleted=true", "p08"}, // final sigma folds with Σ and σ
			{"ΣIGMA", "&deleted=true", "p08"},
			{"alpha", "&deleted=true", "p07"},
		} {
			got, _ := restList(t, env, "acme-workloads", "/api/v1/workloads/pods"+q("search", tc.search)+tc.extra)
			if got != tc.want {
				t.Errorf("search %q%s: [%s], want [%s]", tc.search, tc.extra, got, tc.want)
			}
			if n := restCount(t, env, "acme-workloads", q("search", tc.search)+tc.extra); n != len(strings.Fields(tc.want)) {
				t.Errorf("count search %q%s = %d, want %d", tc.search, tc.extra, n, len(strings.Fields(tc.want)))
			}
		}
	})
}

func TestPodsDeletedAndCompleted(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct{ query, want string }{
			{"", live},
			{"?deleted=false", live},
			{"?deleted=", live},
			{"?deleted=true", "p10 p07 p08"},
			{"?completed=true", "p02 p09 p05"},
			{"?completed=false", "p01 p03 p04 p06"},
			{"?completed=all", live},
			{"?completed=", live},
			{"?deleted=true&completed=true", "p10 p07"},
			{"?deleted=true&completed=false", "p08"},
			{"?deleted=true&completed=all", "p10 p07 p08"},
		} {
			if got, _ := restList(t, env, "acme-workloads", "/api/v1/workloads/pods"+tc.query); got != tc.want {
				t.Errorf("%s: [%s], want [%s]", tc.query, got, tc.want)
			}
			if n := restCount(t, env, "acme-workloads", tc.query); n != len(strings.Fields(tc.want)) {
				t.Errorf("count %s = %d, want %d", tc.query, n, len(strings.Fields(tc.want)))
			}
		}
		for _, bad := range []string{"?deleted=TRUE", "?deleted=all", "?completed=yes", "?completed=1"} {
			for _, path := range []string{"/api/v1/workloads/pods", "/api/v1/workloads/pods/count"} {
				if status, body := servertest.PodsGET(t, env, "acme-workloads", path+bad); status != http.StatusBadRequest {
					t.Errorf("%s%s: %d %s, want 400", path, bad, status, body)
				}
			}
		}
	})
}

func TestWorkloadAndRevisionPods(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct {
			path, want string
			next       int
		}{
			{"/api/v1/workloads/" + w1 + "/pods", "p01 p02 p09 p05", -1},
			{"/api/v1/workloads/" + w2 + "/pods", "p03 p04 p06", -1},
			{"/api/v1/workloads/" + w1 + "/pods?sortBy=name", "p02 p01 p09 p05", -1},
			{"/api/v1/workloads/" + w1 + "/pods?sortBy=name&sortOrder=desc&limit=3", "p05 p09 p01", 3},
			{"/api/v1/workloads/" + w1 + "/pods?limit=2&offset=2", "p09 p05", -1},
			{"/api/v1/workloads/" + w1 + "/pods?deleted=true", "p10 p07", -1},
			{"/api/v1/workloads/" + w1 + "/pods?completed=true", "p02 p09 p05", -1},
			{"/api/v1/workloads/" + w1 + "/pods?filterBy=nodeName%3D%3Dgpu-node-2", "p02 p05", -1},
			{"/api/v1/workloads/" + w2 + "/pods?search=%C3%89", "p03 p04", -1},
			{"/api/v1/workloads/" + w2 + "/pods?filterBy=workloadId%3D%3D" + w1, "", -1},
		} {
			if got, next := restList(t, env, "acme-workloads", tc.path); got != tc.want || next != tc.next {
				t.Errorf("%s: [%s] next %d, want [%s] next %d", tc.path, got, next, tc.want, tc.next)
			}
		}
		for _, tc := range []struct{ path, want string }{
			{"/api/v1/workloads/inferences/revisions/" + r1 + "/pods", "p03 p04"},
			{"/api/v1/workloads/inferences/revisions/" + r1 + "/pods?deleted=false", "p03 p04"},
			{"/api/v1/workloads/inferences/revisions/" + r1 + "/pods?deleted=true", "p08"},
			// Parameters the revision path does not take are ignored.
			{"/api/v1/workloads/inferences/revisions/" + r1 + "/pods?limit=1&sortOrder=desc", "p03 p04"},
		} {
			if got, next := restList(t, env, "acme-workloads", tc.path); got != tc.want || next != -1 {
				t.Errorf("%s: [%s] next %d, want [%s]", tc.path, got, next, tc.want)
			}
		}
		for _, path := range []string{
			"/api/v1/workloads/" + w3 + "/pods", // Globex's
			"/api/v1/workloads/99999999-9999-4999-8999-999999999999/pods",
			"/api/v1/workloads/not-a-uuid/pods",
			"/api/v1/workloads/inferences/revisions/" + r2 + "/pods", // Globex's
			"/api/v1/workloads/inferences/revisions/" + w2 + "/pods", // a workload, not a revision
			"/api/v1/workloads/inferences/revisions/99999999-9999-4999-8999-999999999999/pods",
		} {
			status, body := servertest.PodsGET(t, env, "acme-workloads", path)
			if status != http.StatusNotFound || !strings.HasSuffix(messageOf(t, body), "not found") {
				t.Errorf("%s: %d %s, want 404", path, status, body)
			}
		}
		if status, body := servertest.PodsGET(t, env, "acme-workloads", "/api/v1/workloads/"+w1+"/pods?limit=0"); status != http.StatusBadRequest {
			t.Errorf("workload pods limit=0: %d %s", status, body)
		}
		if status, body := servertest.PodsGET(t, env, "acme-workloads", "/api/v1/workloads/inferences/revisions/"+r1+"/pods?deleted=maybe"); status != http.StatusBadRequest {
			t.Errorf("revision pods deleted=maybe: %d %s", status, body)
		}
	})
}

// Globex sees its own pods only, and Acme none of them, whatever it asks.
func TestPodsTenantScoping(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, tc := range []struct{ path, want string }{
			{"/api/v1/workloads/pods", "g01 g02"},
			{"/api/v1/workloads/pods?deleted=true", "g03"},
			{"/api/v1/workloads/pods?search=alpha", "g01"},
			{"/api/v1/workloads/pods?search=globex", "g01 g02"},
			{"/api/v1/workloads/pods?search=vision", ""},
			{"/api/v1/workloads/pods?filterBy=workloadId%3D%3D" + w1, ""},
			{"/api/v1/workloads/" + w3 + "/pods", "g01 g02"},
			{"/api/v1/workloads/inferences/revisions/" + r2 + "/pods", "g01"},
		} {
			if got, _ := restList(t, env, "globex-workloads", tc.path); got != tc.want {
				t.Errorf("globex %s: [%s], want [%s]", tc.path, got, tc.want)
			}
		}
		if n := restCount(t, env, "globex-workloads", ""); n != 2 {
			t.Errorf("globex count = %d", n)
		}
		for _, path := range []string{"/api/v1/workloads/" + w1 + "/pods", "/api/v1/workloads/inferences/revisions/" + r1 + "/pods"} {
			if status, body := servertest.PodsGET(t, env, "globex-workloads", path); status != http.StatusNotFound {
				t.Errorf("globex %s: %d %s, want 404", path, status, body)
			}
		}
		for _, tc := range []struct {
			query string
			want  int
		}{
			{"?filterBy=workloadId%3D%3D" + w3, 0},
			{"?search=globex", 0},
			{"?filterBy=projectId%3D%3D2", 0},
			{"?deleted=true&filterBy=name%3D%3Dalpha-7", 1}, // p07, not g03
			{"", 7},
		} {
			if n := restCount(t, env, "acme-workloads", tc.query); n != tc.want {
				t.Errorf("acme count %s = %d, want %d", tc.query, n, tc.want)
			}
		}
	})
}

func TestPodsAuth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, podsFixture(t))
		for _, path := range []string{
			"/api/v1/workloads/pods",
			"/api/v1/workloads/pods/count",
			"/api/v1/workloads/" + w1 + "/pods",
			"/api/v1/workloads/inferences/revisions/" + r1 + "/pods",
			// Bad parameters do not tell an outsider anything.
			"/api/v1/workloads/pods?limit=0",
		} {
			for _, tc := range []struct {
				token  string
				status int
			}{{"", 401}, {"nope", 401}, {"acme-reader", 403}} {
				status, body := servertest.PodsGET(t, env, tc.token, path)
				if status != tc.status {
					t.Errorf("%s as %q: %d %s, want %d", path, tc.token, status, body, tc.status)
				}
			}
		}
		for _, query := range []string{`{ pods { total } }`, `{ podsCount }`, `{ workloadPods(workloadId: "` + w1 + `") { total } }`, `{ revisionPods(revisionId: "` + r1 + `") { id } }`} {
			if r := env.GraphQL("acme-reader", query, nil); r.Code() != "FORBIDDEN" {
				t.Errorf("%s as acme-reader: %+v", query, r.Errors)
			}
			if r := env.GraphQL("", query, nil); r.Code() != "UNAUTHENTICATED" || r.Status != http.StatusUnauthorized {
				t.Errorf("%s without key: %d %+v", query, r.Status, r.Errors)
			}
		}
	})
}
