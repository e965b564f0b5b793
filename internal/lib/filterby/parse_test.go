package filterby

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"gpugraph/internal/lib/podfield"
)

// columnOf is the pods column of a parsed filter's field.
func columnOf(f Filter) string {
	fd, ok := podfield.ByParam(f.Field)
	if !ok {
		return ""
	}
	return fd.Column
}

func TestParseOneTextOps(t *testing.T) {
	for _, tc := range []struct {
		in    string
		field string
		col   string
		op    Op
		value string
	}{
		{"name==a", "name", "name", Eq, "a"},
		{"name!=a", "name", "name", Ne, "a"},
		{"name<=a", "name", "name", Le, "a"},
		{"name>=a", "name", "name", Ge, "a"},
		{"name=@a", "name", "name", Contains, "a"},
		{"name!@a", "name", "name", NotContains, "a"},
		{"name=^a", "name", "name", StartsWith, "a"},
		{"name=$a", "name", "name", EndsWith, "a"},
		{"clusterId==c1", "clusterId", "cluster_id", Eq, "c1"},
		{"workloadId!=w", "workloadId", "workload_id", Ne, "w"},
		{"revisionId=@r", "revisionId", "revision_id", Contains, "r"},
		{"nodeName!=some-node-name", "nodeName", "node_name", Ne, "some-node-name"},
		{"currentNodepool=^def", "currentNodepool", "current_node_pool", StartsWith, "def"},
		{"currentNodePool=$ult", "currentNodepool", "current_node_pool", EndsWith, "ult"},
		{"k8sPhase<=Running", "k8sPhase", "k8s_phase", Le, "Running"},
		{"projectId>=1", "projectId", "project_id", Ge, "1"},
		{"priorityClassName!@low", "priorityClassName", "priority_class_name", NotContains, "low"},
		// The value is everything after the operator, operators and commas included.
		{"name===x", "name", "name", Eq, "=x"},
		{"name!==x", "name", "name", Ne, "=x"},
		{"name== a b ", "name", "name", Eq, " a b "},
		{"name==a,b", "name", "name", Eq, "a,b"},
		{"name==a,nodeName==b", "name", "name", Eq, "a,nodeName==b"},
		{"name=@50%_\\", "name", "name", Contains, "50%_\\"},
		{"name==é", "name", "name", Eq, "é"},
	} {
		f, err := ParseOne(tc.in)
		if err != nil {
			t.Errorf("ParseOne(%q): %v", tc.in, err)
			continue
		}
		want := Filter{Field: tc.field, Op: tc.op, Value: tc.value, Raw: tc.in}
		if !reflect.DeepEqual(f, want) || columnOf(f) != tc.col {
			t.Errorf("ParseOne(%q) = %+v, want %+v", tc.in, f, want)
		}
	}
}

func TestParseOneDates(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	for _, tc := range []struct {
		in    string
		field string
		col   string
		op    Op
		at    time.Time
	}{
		{"createdAt==2024-01-01T10:00:00Z", "createdAt", "created_at", Eq, utc("2024-01-01T10:00:00Z")},
		{"createdAt!=2024-01-01T12:00:00+02:00", "createdAt", "created_at", Ne, utc("2024-01-01T10:00:00Z")},
		{"completedAt<=2024-01-01T05:00:00.123-05:00", "completedAt", "completed_at", Le, utc("2024-01-01T10:00:00.123Z")},
		{"deletedAt>=2024-01-01T10:00:00.123456789Z", "deletedAt", "deleted_at", Ge, utc("2024-01-01T10:00:00.123456789Z")},
		{"createdAt==2024-01-01T10:00:00,5Z", "createdAt", "created_at", Eq, utc("2024-01-01T10:00:00.5Z")},
		{"createdAt==2024-01-01T12:00:00+0200", "createdAt", "created_at", Eq, utc("2024-01-01T10:00:00Z")},
		{"createdAt==2024-01-01T12:00:00+02", "createdAt", "created_at", Eq, utc("2024-01-01T10:00:00Z")},
		{"createdAt==2024-01-01T10:00Z", "createdAt", "created_at", Eq, utc("2024-01-01T10:00:00Z")},
		{"createdAt==2024-01-01t10:00:00z", "createdAt", "created_at", Eq, utc("2024-01-01T10:00:00Z")},
		{"createdAt>=2024-01-01T00:30:00+01:00", "createdAt", "created_at", Ge, utc("2023-12-31T23:30:00Z")},
	} {
		f, err := ParseOne(tc.in)
		if err != nil {
			t.Errorf("ParseOne(%q): %v", tc.in, err)
			continue
		}
		if f.Field != tc.field || columnOf(f) != tc.col || f.Op != tc.op || !f.IsTime ||
			!f.Time.Equal(tc.at) || f.Time.Location() != time.UTC || f.Raw != tc.in {
			t.Errorf("ParseOne(%q) = %+v, want %s %s %s at %v UTC", tc.in, f, tc.field, tc.col, tc.op, tc.at)
		}
	}
}

func TestParseSplitsCommas(t *testing.T) {
	for _, tc := range []struct {
		params []string
		want   []string // String() of each filter
	}{
		{nil, nil},
		{[]string{"name==a"}, []string{"name==a"}},
		{[]string{"name==a,nodeName!=b"}, []string{"name==a", "nodeName!=b"}},
		{[]string{"name==a,b"}, []string{"name==a,b"}},
		{[]string{"name==a,b,c=@d"}, []string{"name==a,b,c=@d"}},
		{[]string{"name==a,", "k8sPhase==x"}, []string{"name==a,", "k8sPhase==x"}},
		{[]string{"name==a,,nodeName==b"}, []string{"name==a,", "nodeName==b"}},
		{[]string{"name==a, nodeName==b"}, []string{"name==a, nodeName==b"}},
		{[]string{"name==a,size==1"}, []string{"name==a,size==1"}},
		{[]string{"name==a,nodeName~=1"}, []string{"name==a,nodeName~=1"}},
		{[]string{"name==a,currentNodePool=^d,createdAt>=2024-01-01T00:00:00,5Z"},
			[]string{"name==a", "currentNodepool=^d", "createdAt>=2024-01-01T00:00:00,5Z"}},
		{[]string{"name==x,y", "clusterId==c,workloadId==w"},
			[]string{"name==x,y", "clusterId==c", "workloadId==w"}},
		{[]string{"name==a,name==b"}, []string{"name==a", "name==b"}},
	} {
		fs, err := Parse(tc.params)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.params, err)
			continue
		}
		var got []string
		for _, f := range fs {
			got = append(got, f.String())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %q, want %q", tc.params, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		params []string
		text   string // the filter the error names
		msg    string
	}{
		{[]string{""}, "", `invalid filterBy "": missing field`},
		{[]string{"==x"}, "==x", `invalid filterBy "==x": missing field`},
		{[]string{"size==1"}, "size==1", `invalid filterBy "size==1": unknown field "size"`},
		{[]string{"NodeName==x"}, "NodeName==x", `invalid filterBy "NodeName==x": unknown field "NodeName"`},
		{[]string{"currentnodepool==x"}, "currentnodepool==x", `invalid filterBy "currentnodepool==x": unknown field "currentnodepool"`},
		{[]string{"node-name==x"}, "node-name==x", `invalid filterBy "node-name==x": unknown field "node-name"`},
		{[]string{" name==x"}, " name==x", `invalid filterBy " name==x": unknown field " name"`},
		{[]string{"nameX"}, "nameX", `invalid filterBy "nameX": unknown field "nameX"`},
		{[]string{"nodeName"}, "nodeName", `invalid filterBy "nodeName": missing operator`},
		{[]string{"nodeName~=x"}, "nodeName~=x", `invalid filterBy "nodeName~=x": unknown operator`},
		{[]string{"nodeName=x"}, "nodeName=x", `invalid filterBy "nodeName=x": unknown operator`},
		{[]string{"nodeName="}, "nodeName=", `invalid filterBy "nodeName=": unknown operator`},
		{[]string{"nodeName<x"}, "nodeName<x", `invalid filterBy "nodeName<x": unknown operator`},
		{[]string{"nodeName =x"}, "nodeName =x", `invalid filterBy "nodeName =x": unknown operator`},
		{[]string{"nodeName=="}, "nodeName==", `invalid filterBy "nodeName==": empty value`},
		{[]string{"name=@\xff"}, "name=@\xff", `invalid filterBy "name=@\xff": value is not valid UTF-8`},
		{[]string{"name==a\x00b"}, "name==a\x00b", `invalid filterBy "name==a\x00b": value contains a NUL character`},
		{[]string{"createdAt=@2024"}, "createdAt=@2024", `invalid filterBy "createdAt=@2024": operator "=@" does not apply to dates; use ==, !=, <= or >=`},
		{[]string{"deletedAt=$Z"}, "deletedAt=$Z", `invalid filterBy "deletedAt=$Z": operator "=$" does not apply to dates; use ==, !=, <= or >=`},
		{[]string{"completedAt!@x"}, "completedAt!@x", `invalid filterBy "completedAt!@x": operator "!@" does not apply to dates; use ==, !=, <= or >=`},
		{[]string{"createdAt=^2024"}, "createdAt=^2024", `invalid filterBy "createdAt=^2024": operator "=^" does not apply to dates; use ==, !=, <= or >=`},
		{[]string{"createdAt>=yesterday"}, "createdAt>=yesterday", `invalid filterBy "createdAt>=yesterday": bad date; want ISO 8601 with a time zone, e.g. 2023-06-06T12:09:18.211Z`},
		{[]string{"createdAt>=2024-01-01"}, "createdAt>=2024-01-01", `invalid filterBy "createdAt>=2024-01-01": bad date; want ISO 8601 with a time zone, e.g. 2023-06-06T12:09:18.211Z`},
		{[]string{"createdAt>=2024-02-30T00:00:00Z"}, "createdAt>=2024-02-30T00:00:00Z", `invalid filterBy "createdAt>=2024-02-30T00:00:00Z": bad date; want ISO 8601 with a time zone, e.g. 2023-06-06T12:09:18.211Z`},
		{[]string{"createdAt>=2024-01-01T00:00:00"}, "createdAt>=2024-01-01T00:00:00", `invalid filterBy "createdAt>=2024-01-01T00:00:00": date has no time zone; add Z or an offset such as +02:00`},
		{[]string{"createdAt>=2024-01-01T00:00"}, "createdAt>=2024-01-01T00:00", `invalid filterBy "createdAt>=2024-01-01T00:00": date has no time zone; add Z or an offset such as +02:00`},
		{[]string{"createdAt>=2024-01-01T00:00:00 02:00"}, "createdAt>=2024-01-01T00:00:00 02:00", `invalid filterBy "createdAt>=2024-01-01T00:00:00 02:00": bad date; want ISO 8601 with a time zone, e.g. 2023-06-06T12:09:18.211Z (a + in a query string must be sent as %2B)`},
		{[]string{"createdAt>=0000-06-01T00:00:00Z"}, "createdAt>=0000-06-01T00:00:00Z", `invalid filterBy "createdAt>=0000-06-01T00:00:00Z": date is out of range (years 0001 to 9999 in UTC)`},
		{[]string{"createdAt>=9999-12-31T23:00:00-02:00"}, "createdAt>=9999-12-31T23:00:00-02:00", `invalid filterBy "createdAt>=9999-12-31T23:00:00-02:00": date is out of range (years 0001 to 9999 in UTC)`},
		{[]string{"createdAt>=9999-12-31T23:59:59.9999991Z"}, "createdAt>=9999-12-31T23:59:59.9999991Z", `invalid filterBy "createdAt>=9999-12-31T23:59:59.9999991Z": date is out of range (years 0001 to 9999 in UTC)`},
		{[]string{"createdAt=="}, "createdAt==", `invalid filterBy "createdAt==": empty value`},
		// The bad piece of a comma-joined parameter is the one named.
		{[]string{"name==a,createdAt>=soon"}, "createdAt>=soon", `invalid filterBy "createdAt>=soon": bad date; want ISO 8601 with a time zone, e.g. 2023-06-06T12:09:18.211Z`},
		{[]string{"size==1,name==a"}, "size==1", `invalid filterBy "size==1": unknown field "size"`},
		{[]string{"name==a,nodeName==,k8sPhase==x"}, "nodeName==", `invalid filterBy "nodeName==": empty value`},
		{[]string{"name==ok", "nodeName~=x"}, "nodeName~=x", `invalid filterBy "nodeName~=x": unknown operator`},
	} {
		fs, err := Parse(tc.params)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("Parse(%q) = %v, %v; want *Error", tc.params, fs, err)
			continue
		}
		if fs != nil || fe.Param != "filterBy" || fe.Text != tc.text || err.Error() != tc.msg {
			t.Errorf("Parse(%q) error = %q (text %q), want %q (text %q)", tc.params, err, fe.Text, tc.msg, tc.text)
		}
	}
}

func TestStringRoundTrips(t *testing.T) {
	for _, in := range []string{"currentNodePool==a,b", "createdAt>=2024-01-01T12:00:00+02:00", "name!@%_"} {
		f, err := ParseOne(in)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ParseOne(f.String())
		if err != nil {
			t.Fatal(err)
		}
		g.Raw = f.Raw
		if !reflect.DeepEqual(f, g) {
			t.Errorf("ParseOne(%q) = %+v, its String() reparses to %+v", in, f, g)
		}
	}
}
