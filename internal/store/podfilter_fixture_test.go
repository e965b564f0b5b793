package store_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/store"
)

// The pods filterBy fixture: ten pods and an oracle, the semantics of
// package filterby written out in Go, which the database must agree with.

// pod is one row of the filterBy test fixture: only what filters and sorts read.
type fpod struct {
	id, name, prio, workload string
	revision                 *string
	cluster                  string
	project, node            *string
	created                  time.Time
	completed                *time.Time
	pool                     *string
	phase                    string
	deleted                  *time.Time
}

func strp(s string) *string { return &s }

func zone(name string, hours int) *time.Location { return time.FixedZone(name, hours*3600) }

// at builds an instant in a zone; the fixture mixes zones so that a test
// passes only if the instant, not its wall clock, reaches the database.
func at(loc *time.Location, y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ns, loc)
}

func timep(t time.Time) *time.Time { return &t }

var (
	plus2  = zone("+02", 2)
	minus5 = zone("-05", -5)
	plus9  = zone("+09", 9)
	plus1  = zone("+01", 1)
)

// fixture has nulls, mixed case, %, _ and \ in names, non-ASCII text, an
// empty string beside nulls, sub-second times and ties on every sort key.
var filterFixture = []fpod{
	{id: "p01", name: "alpha", prio: "high", workload: "w1", revision: strp("r1"), cluster: "c1", project: strp("1"), node: strp("node-a"),
		created: at(plus2, 2024, 1, 1, 12, 0, 0, 0), completed: timep(at(minus5, 2024, 1, 1, 19, 0, 0, 0)), pool: strp("default"), phase: "Succeeded"},
	{id: "p02", name: "Alpha", prio: "", workload: "w1", cluster: "c1",
		created: at(time.UTC, 2024, 1, 1, 10, 0, 0, 500_000_000), phase: "Running"},
	{id: "p03", name: "50%_off", prio: "low", workload: "w2", revision: strp("r2"), cluster: "c2", project: strp("2"), node: strp("node_b"),
		created: at(plus9, 2024, 1, 1, 18, 0, 0, 0), pool: strp("pool-1"), phase: "Pending"},
	{id: "p04", name: "50xyoff", prio: "low", workload: "w2", cluster: "c2", project: strp("2"), node: strp("nodeXb"),
		created: at(time.UTC, 2023, 12, 31, 23, 0, 0, 0), pool: strp("pool_2"), phase: "Pending", deleted: timep(at(time.UTC, 2024, 2, 1, 0, 0, 0, 0))},
	{id: "p05", name: "é", prio: "", workload: "w1", revision: strp("r1"), cluster: "c1", project: strp("1"), node: strp("nœud-é"),
		created: at(time.UTC, 2024, 1, 1, 10, 0, 0, 0), completed: timep(at(time.UTC, 2024, 1, 1, 10, 30, 0, 1000)), pool: strp("default"), phase: "Failed",
		deleted: timep(at(plus1, 2024, 3, 1, 1, 0, 0, 0))},
	{id: "p06", name: "B", prio: "high", workload: "w2", cluster: "c2", project: strp("1"),
		created: at(time.UTC, 2024, 6, 1, 0, 0, 0, 0), phase: "Running"},
	{id: "p07", name: "a", prio: "", workload: "w1", cluster: "c1", node: strp("node-a"),
		created: at(plus2, 2024, 6, 1, 2, 0, 0, 0), completed: timep(at(time.UTC, 2024, 1, 2, 0, 0, 0, 0)), pool: strp("Default"), phase: "Running"},
	{id: "p08", name: `back\slash`, prio: "", workload: "w1", cluster: "c1", project: strp("1"), node: strp("node-A"),
		created: at(time.UTC, 2024, 1, 1, 10, 0, 0, 499_999_000), pool: strp("default"), phase: "running"},
	{id: "p09", name: "a", prio: "high", workload: "w2", cluster: "c2", node: strp("node-a"),
		created: at(minus5, 2024, 1, 1, 5, 0, 0, 0), phase: "Running"},
	{id: "p10", name: "a,b", prio: "", workload: "w1", cluster: "c1", project: strp("1"), node: strp("Node-ñ"),
		created: at(time.UTC, 2025, 1, 1, 0, 0, 0, 0), pool: strp(""), phase: "Succeeded"},
}

// seed inserts the fixture with its parents, binding instants in UTC as the
// store requires.
func seedFilterFixture(t *testing.T, st *store.Store) {
	t.Helper()
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := st.ExecForTest(context.Background(), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO projects (id, name, tenant_id) VALUES ('1', 'one', 1), ('2', 'two', 1)`)
	exec(`INSERT INTO workloads (id, name, project_id, cluster_id, tenant_id) VALUES ('w1', 'wone', '1', 'c1', 1), ('w2', 'wtwo', '2', 'c2', 1)`)
	exec(`INSERT INTO revisions (id, workload_id) VALUES ('r1', 'w1'), ('r2', 'w2')`)
	for _, p := range filterFixture {
		exec(`INSERT INTO pods (id, tenant_id, name, priority_class_name, workload_id, revision_id, cluster_id,
			project_id, node_name, created_at, completed_at, current_node_pool, k8s_phase,
			k8s_phase_updated_at, updated_at, deleted_at) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.id, p.name, p.prio, p.workload, nullStr(p.revision), p.cluster, nullStr(p.project), nullStr(p.node),
			p.created.UTC(), nullTime(p.completed), nullStr(p.pool), p.phase, p.created.UTC(), p.created.UTC(), nullTime(p.deleted))
	}
}

func nullStr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

// value is what p holds in a field, as the oracle sees it.
type value struct {
	null bool
	s    string
	t    time.Time
}

func (p fpod) get(field string) value {
	ps := func(s *string) value {
		if s == nil {
			return value{null: true}
		}
		return value{s: *s}
	}
	pt := func(t *time.Time) value {
		if t == nil {
			return value{null: true}
		}
		return value{t: *t}
	}
	switch field {
	case "name":
		return value{s: p.name}
	case "clusterId":
		return value{s: p.cluster}
	case "workloadId":
		return value{s: p.workload}
	case "revisionId":
		return ps(p.revision)
	case "nodeName":
		return ps(p.node)
	case "currentNodepool":
		return ps(p.pool)
	case "createdAt":
		return value{t: p.created}
	case "completedAt":
		return pt(p.completed)
	case "deletedAt":
		return pt(p.deleted)
	case "k8sPhase":
		return value{s: p.phase}
	case "projectId":
		return ps(p.project)
	case "priorityClassName":
		return value{s: p.prio}
	}
	panic("no field " + field)
}

// matches is the package's semantics written out in Go, independently of SQL.
func (p fpod) matches(f filterby.Filter) bool {
	v := p.get(f.Field)
	if v.null {
		return f.Op == filterby.Ne || f.Op == filterby.NotContains
	}
	if f.IsTime {
		switch f.Op {
		case filterby.Eq:
			return v.t.Equal(f.Time)
		case filterby.Ne:
			return !v.t.Equal(f.Time)
		case filterby.Le:
			return !v.t.After(f.Time)
		case filterby.Ge:
			return !v.t.Before(f.Time)
		}
		panic("bad op")
	}
	switch f.Op {
	case filterby.Eq:
		return v.s == f.Value
	case filterby.Ne:
		return v.s != f.Value
	case filterby.Le:
		return v.s <= f.Value
	case filterby.Ge:
		return v.s >= f.Value
	case filterby.Contains:
		return strings.Contains(v.s, f.Value)
	case filterby.NotContains:
		return !strings.Contains(v.s, f.Value)
	case filterby.StartsWith:
		return strings.HasPrefix(v.s, f.Value)
	case filterby.EndsWith:
		return strings.HasSuffix(v.s, f.Value)
	}
	panic("bad op")
}

// oracleSort orders the fixture as the spec says asc must: nulls last, byte
// order, ties on id.
func oracleSort(field string) []string {
	ps := append([]fpod(nil), filterFixture...)
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].get(field), ps[j].get(field)
		switch {
		case a.null != b.null:
			return b.null
		case !a.null && !a.t.Equal(b.t):
			return a.t.Before(b.t)
		case !a.null && a.s != b.s:
			return a.s < b.s
		}
		return ps[i].id < ps[j].id
	})
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.id
	}
	return ids
}
