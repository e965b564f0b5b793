package store_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/podfield"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The filterBy and sortBy tests on the database: each filter and order the
// store compiles from filterby's data selects exactly what the oracle
// (podfilter_fixture_test.go) says, on every engine.

const allPods = "p01 p02 p03 p04 p05 p06 p07 p08 p09 p10"

// selectIDs runs filters against the pods table.
func selectIDs(t *testing.T, st *store.Store, filters []filterby.Filter) string {
	t.Helper()
	ids, err := st.PodIDsWhere(context.Background(), filters)
	if err != nil {
		t.Fatalf("%v: %v", filters, err)
	}
	return strings.Join(ids, " ")
}

// TestFiltersOnDatabase asserts, on every engine, the exact rows each filter
// selects.
func TestFiltersOnDatabase(t *testing.T) {
	cases := []struct {
		params []string
		want   string
	}{
		// name: not null text.
		{[]string{"name==a"}, "p07 p09"},
		{[]string{"name==Alpha"}, "p02"},
		{[]string{"name==a,b"}, "p10"},
		{[]string{"name!=a"}, "p01 p02 p03 p04 p05 p06 p08 p10"},
		{[]string{"name<=B"}, "p02 p03 p04 p06"},
		{[]string{"name<=a"}, "p02 p03 p04 p06 p07 p09"},
		{[]string{"name>=a"}, "p01 p05 p07 p08 p09 p10"},
		{[]string{"name>=é"}, "p05"},
		{[]string{"name=@alp"}, "p01"},
		{[]string{"name=@0%_"}, "p03"},
		{[]string{"name=@_o"}, "p03"},
		{[]string{"name=@%"}, "p03"},
		{[]string{`name=@\`}, "p08"},
		{[]string{`name=@k\s`}, "p08"},
		{[]string{"name!@a"}, "p03 p04 p05 p06"},
		{[]string{"name=^a"}, "p01 p07 p09 p10"},
		{[]string{"name=^A"}, "p02"},
		{[]string{"name=^50%"}, "p03"},
		{[]string{"name=$off"}, "p03 p04"},
		{[]string{"name=$é"}, "p05"},
		// nodeName: nullable text.
		{[]string{"nodeName==node-a"}, "p01 p07 p09"},
		{[]string{"nodeName!=node-a"}, "p02 p03 p04 p05 p06 p08 p10"},
		{[]string{"nodeName<=node-a"}, "p01 p07 p08 p09 p10"},
		{[]string{"nodeName>=node_"}, "p03 p05"},
		{[]string{"nodeName=@_"}, "p03"},
		{[]string{"nodeName=@A"}, "p08"},
		{[]string{"nodeName!@_"}, "p01 p02 p04 p05 p06 p07 p08 p09 p10"},
		{[]string{"nodeName!@node"}, "p02 p05 p06 p10"},
		{[]string{"nodeName=^Node"}, "p10"},
		{[]string{"nodeName=$-é"}, "p05"},
		{[]string{"nodeName=$ñ"}, "p10"},
		// currentNodepool, both spellings; "" is a value, not null.
		{[]string{"currentNodePool==default"}, "p01 p05 p08"},
		{[]string{"currentNodepool!=default"}, "p02 p03 p04 p06 p07 p09 p10"},
		{[]string{"currentNodepool=^pool_"}, "p04"},
		{[]string{"currentNodepool<=Default"}, "p07 p10"},
		{[]string{"currentNodepool!@ool"}, "p01 p02 p05 p06 p07 p08 p09 p10"},
		// The other text fields.
		{[]string{"clusterId==c1"}, "p01 p02 p05 p07 p08 p10"},
		{[]string{"clusterId!=c1"}, "p03 p04 p06 p09"},
		{[]string{"workloadId==w2"}, "p03 p04 p06 p09"},
		{[]string{"workloadId=$1"}, "p01 p02 p05 p07 p08 p10"},
		{[]string{"revisionId==r1"}, "p01 p05"},
		{[]string{"revisionId!=r1"}, "p02 p03 p04 p06 p07 p08 p09 p10"},
		{[]string{"revisionId=@r"}, "p01 p03 p05"},
		{[]string{"revisionId!@r"}, "p02 p04 p06 p07 p08 p09 p10"},
		{[]string{"projectId==1"}, "p01 p05 p06 p08 p10"},
		{[]string{"projectId!=1"}, "p02 p03 p04 p07 p09"},
		{[]string{"projectId>=2"}, "p03 p04"},
		{[]string{"k8sPhase==Running"}, "p02 p06 p07 p09"},
		{[]string{"k8sPhase=^R"}, "p02 p06 p07 p09"},
		{[]string{"k8sPhase<=R"}, "p03 p04 p05"},
		{[]string{"priorityClassName==high"}, "p01 p06 p09"},
		{[]string{"priorityClassName!=high"}, "p02 p03 p04 p05 p07 p08 p10"},
		{[]string{"priorityClassName=@ig"}, "p01 p06 p09"},
		// createdAt: not null instant, given in several zones.
		{[]string{"createdAt==2024-01-01T10:00:00Z"}, "p01 p05 p09"},
		{[]string{"createdAt==2024-01-01T12:00:00+02:00"}, "p01 p05 p09"},
		{[]string{"createdAt==2024-01-01T05:00:00-05:00"}, "p01 p05 p09"},
		{[]string{"createdAt!=2024-01-01T10:00:00Z"}, "p02 p03 p04 p06 p07 p08 p10"},
		{[]string{"createdAt<=2024-01-01T10:00:00Z"}, "p01 p03 p04 p05 p09"},
		{[]string{"createdAt==2024-01-01T10:00:00.5Z"}, "p02"},
		{[]string{"createdAt==2024-01-01T11:00:00.500+01:00"}, "p02"},
		{[]string{"createdAt==2024-01-01T10:00:00.499999Z"}, "p08"},
		{[]string{"createdAt<=2024-01-01T00:30:00+01:00"}, "p04"},
		{[]string{"createdAt>=2024-01-01T18:00:00+09:00"}, "p01 p02 p03 p05 p06 p07 p08 p09 p10"},
		// Finer than microseconds: still exact.
		{[]string{"createdAt>=2024-01-01T10:00:00.4999995Z"}, "p02 p06 p07 p10"},
		{[]string{"createdAt<=2024-01-01T10:00:00.4999995Z"}, "p01 p03 p04 p05 p08 p09"},
		{[]string{"createdAt==2024-01-01T10:00:00.4999995Z"}, ""},
		{[]string{"createdAt!=2024-01-01T10:00:00.4999995Z"}, allPods},
		{[]string{"createdAt>=2024-01-01T10:00:00.5000001Z"}, "p06 p07 p10"},
		// The ends of the accepted range.
		{[]string{"createdAt>=9999-12-31T23:59:59.999999Z"}, ""},
		{[]string{"createdAt>=9999-12-31T23:59:59.9999985Z"}, ""},
		{[]string{"createdAt<=0001-01-01T00:00:00Z"}, ""},
		{[]string{"createdAt>=0001-01-01T01:00:00+01:00"}, allPods},
		// completedAt and deletedAt: nullable instants.
		{[]string{"completedAt==2024-01-01T19:00:00-05:00"}, "p01 p07"},
		{[]string{"completedAt!=2024-01-02T00:00:00Z"}, "p02 p03 p04 p05 p06 p08 p09 p10"},
		{[]string{"completedAt<=2024-01-01T10:30:00Z"}, ""},
		{[]string{"completedAt<=2024-01-01T10:30:00.000001Z"}, "p05"},
		{[]string{"completedAt>=2024-01-01T10:30:00.0000005Z"}, "p01 p05 p07"},
		{[]string{"completedAt>=2024-01-01T10:30:00.0000015Z"}, "p01 p07"},
		{[]string{"deletedAt>=2024-01-01T00:00:00Z"}, "p04 p05"},
		{[]string{"deletedAt<=2024-02-15T00:00:00Z"}, "p04"},
		{[]string{"deletedAt!=2024-02-01T00:00:00Z"}, "p01 p02 p03 p05 p06 p07 p08 p09 p10"},
		{[]string{"deletedAt==2024-03-01T01:00:00+01:00"}, "p05"},
		// Several filters AND, comma-joined or repeated.
		{nil, allPods},
		{[]string{"name=^a,nodeName==node-a"}, "p01 p07 p09"},
		{[]string{"name=^a", "clusterId==c2"}, "p09"},
		{[]string{"k8sPhase==Running,nodeName!=node-a"}, "p02 p06"},
		{[]string{"nodeName!=node-a,nodeName!@_", "createdAt<=2024-06-01T00:00:00Z"}, "p02 p04 p05 p06 p08"},
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		seedFilterFixture(t, st)
		for _, tc := range cases {
			fs, err := filterby.Parse(tc.params)
			if err != nil {
				t.Errorf("Parse(%q): %v", tc.params, err)
				continue
			}
			if got := selectIDs(t, st, fs); got != tc.want {
				t.Errorf("%q selects [%s], want [%s]", tc.params, got, tc.want)
			}
			if got := oracleIDs(fs); got != tc.want {
				t.Errorf("%q: the oracle selects [%s], want [%s]", tc.params, got, tc.want)
			}
		}
	})
}

func oracleIDs(fs []filterby.Filter) string {
	var ids []string
	for _, p := range filterFixture {
		ok := true
		for _, f := range fs {
			ok = ok && p.matches(f)
		}
		if ok {
			ids = append(ids, p.id)
		}
	}
	return strings.Join(ids, " ")
}

// TestEveryOpAgainstOracle runs every operator on every field with every
// value the fixture holds (and some tricky ones) and compares the database
// with the oracle, so the two engines cannot drift apart.
func TestEveryOpAgainstOracle(t *testing.T) {
	texts := []string{"a", "A", "_", "%", `\`, "é", "ñ", "o", "-", "0%_", "node", "Default", "z", "~", "\u00ff", "日本"}
	var dates []time.Time
	for _, p := range filterFixture {
		for _, f := range filterFields() {
			v := p.get(f.Name())
			switch {
			case v.null:
			case f.Kind == podfield.Date:
				dates = append(dates, v.t, v.t.Add(time.Microsecond), v.t.Add(-time.Microsecond),
					v.t.Add(500*time.Nanosecond), v.t.Add(-500*time.Nanosecond))
			default:
				texts = append(texts, v.s)
				if len(v.s) > 1 {
					texts = append(texts, v.s[:len(v.s)/2], v.s[1:])
				}
			}
		}
	}
	var filters []string
	for _, f := range filterFields() {
		if f.Kind == podfield.Date {
			for i, d := range dates {
				zoned := d.In(zone("", i%5-2)).Format(time.RFC3339Nano)
				for _, op := range []filterby.Op{filterby.Eq, filterby.Ne, filterby.Le, filterby.Ge} {
					filters = append(filters, f.Name()+string(op)+zoned)
				}
			}
			continue
		}
		for _, v := range texts {
			if v == "" {
				continue // an error, tested in TestParseErrors
			}
			for _, op := range filterby.Ops {
				filters = append(filters, f.Name()+string(op)+v)
			}
		}
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		seedFilterFixture(t, st)
		for _, s := range filters {
			f, err := filterby.ParseOne(s)
			if err != nil {
				if strings.Contains(err.Error(), "UTF-8") {
					continue // a cut through a multi-byte character
				}
				t.Fatalf("ParseOne(%q): %v", s, err)
			}
			fs := []filterby.Filter{f}
			if got, want := selectIDs(t, st, fs), oracleIDs(fs); got != want {
				t.Errorf("%q selects [%s], the oracle [%s]", s, got, want)
			}
		}
	})
}

// TestSortOnDatabase checks every sort field on every engine: asc is the
// oracle's order (nulls last, byte order, ties on id) and desc its exact
// reverse.
func TestSortOnDatabase(t *testing.T) {
	explicit := map[string]string{
		"name":      "p03 p04 p02 p06 p07 p09 p10 p01 p08 p05",
		"nodeName":  "p10 p08 p01 p07 p09 p04 p03 p05 p02 p06",
		"createdAt": "p04 p03 p01 p05 p09 p08 p02 p06 p07 p10",
		"deletedAt": "p04 p05 p01 p02 p03 p06 p07 p08 p09 p10",
	}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		seedFilterFixture(t, st)
		for _, f := range podfield.Sortable() {
			name := f.Name()
			asc := sortedIDs(t, st, name, "asc")
			if want := strings.Join(oracleSort(name), " "); asc != want {
				t.Errorf("sortBy=%s asc = [%s], want [%s]", name, asc, want)
			}
			if want, ok := explicit[name]; ok && asc != want {
				t.Errorf("sortBy=%s asc = [%s], want [%s]", name, asc, want)
			}
			desc := strings.Fields(sortedIDs(t, st, name, "desc"))
			slices.Reverse(desc)
			if !reflect.DeepEqual(desc, strings.Fields(asc)) {
				t.Errorf("sortBy=%s desc reversed = %v, asc %v", name, desc, asc)
			}
		}
		if got, want := sortedIDs(t, st, "", ""), explicit["createdAt"]; got != want {
			t.Errorf("default sort = [%s], want [%s]", got, want)
		}
	})
}

func sortedIDs(t *testing.T, st *store.Store, by, order string) string {
	t.Helper()
	s, err := filterby.ParseSort(by, order)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ids, err := st.PodIDsOrdered(ctx, s, false)
	if err != nil {
		t.Fatalf("sort %s %s: %v", by, order, err)
	}
	if st.Dialect == store.Postgres {
		pg, err := st.PodIDsOrdered(ctx, s, true)
		if err != nil {
			t.Fatalf("sort %s %s: %v", by, order, err)
		}
		if !slices.Equal(pg, ids) {
			t.Errorf("sort %s %s: PostgreSQL's order gives %v, the portable one %v", by, order, pg, ids)
		}
	}
	return strings.Join(ids, " ")
}

// filterFields are the registry's fields that filterBy takes.
func filterFields() []*podfield.Field {
	var out []*podfield.Field
	for _, f := range podfield.All() {
		if f.Filter {
			out = append(out, f)
		}
	}
	return out
}
