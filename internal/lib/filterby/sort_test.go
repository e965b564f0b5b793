package filterby

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseSort(t *testing.T) {
	for _, tc := range []struct {
		by, order string
		want      Sort
		column    string
	}{
		{"", "", Sort{Field: "createdAt"}, "created_at"},
		{"", "desc", Sort{Field: "createdAt", Order: Desc}, "created_at"},
		{"name", "asc", Sort{Field: "name"}, "name"},
		{"clusterId", "", Sort{Field: "clusterId"}, "cluster_id"},
		{"workloadId", "desc", Sort{Field: "workloadId", Order: Desc}, "workload_id"},
		{"revisionId", "", Sort{Field: "revisionId"}, "revision_id"},
		{"nodeName", "desc", Sort{Field: "nodeName", Order: Desc}, "node_name"},
		{"currentNodepool", "", Sort{Field: "currentNodepool"}, "current_node_pool"},
		{"currentNodePool", "", Sort{Field: "currentNodepool"}, "current_node_pool"},
		{"createdAt", "", Sort{Field: "createdAt"}, "created_at"},
		{"completedAt", "", Sort{Field: "completedAt"}, "completed_at"},
		{"deletedAt", "desc", Sort{Field: "deletedAt", Order: Desc}, "deleted_at"},
		{"k8sPhase", "", Sort{Field: "k8sPhase"}, "k8s_phase"},
	} {
		s, err := ParseSort(tc.by, tc.order)
		if err != nil {
			t.Errorf("ParseSort(%q, %q): %v", tc.by, tc.order, err)
			continue
		}
		if s != tc.want || s.PodField().Column != tc.column {
			t.Errorf("ParseSort(%q, %q) = %+v on %s, want %+v on %s", tc.by, tc.order, s, s.PodField().Column, tc.want, tc.column)
		}
	}
	if got := (Sort{}).PodField().Column; got != "created_at" {
		t.Errorf("zero Sort orders by %q, want created_at", got)
	}
	if got := (Sort{Field: "id; DROP TABLE pods"}).PodField().Column; got != "created_at" {
		t.Errorf("hand-made Sort orders by %q, want created_at", got)
	}
	if got := (Sort{Field: "projectId"}).PodField().Column; got != "created_at" {
		t.Errorf("Sort on a field sortBy refuses orders by %q, want created_at", got)
	}
}

func TestParseSortErrors(t *testing.T) {
	const fieldsWanted = "name, clusterId, workloadId, revisionId, nodeName, currentNodepool, createdAt, completedAt, deletedAt, k8sPhase"
	for _, tc := range []struct {
		by, order string
		param     string
		msg       string
	}{
		{"size", "", "sortBy", `invalid sortBy "size": unknown field; want one of ` + fieldsWanted},
		{"projectId", "", "sortBy", `invalid sortBy "projectId": unknown field; want one of ` + fieldsWanted},
		{"priorityClassName", "", "sortBy", `invalid sortBy "priorityClassName": unknown field; want one of ` + fieldsWanted},
		{"CreatedAt", "", "sortBy", `invalid sortBy "CreatedAt": unknown field; want one of ` + fieldsWanted},
		{"name", "ASC", "sortOrder", `invalid sortOrder "ASC": want asc or desc`},
		{"name", "up", "sortOrder", `invalid sortOrder "up": want asc or desc`},
	} {
		_, err := ParseSort(tc.by, tc.order)
		var e *Error
		if !errors.As(err, &e) || e.Param != tc.param || err.Error() != tc.msg {
			t.Errorf("ParseSort(%q, %q) = %v, want %s error %q", tc.by, tc.order, err, tc.param, tc.msg)
		}
	}
}

// TestSortGraphQL checks that the GraphQL enum values read into the same
// Sort as the REST spellings, and write back as they came.
func TestSortGraphQL(t *testing.T) {
	for enum, rest := range map[string]string{
		"NAME": "name", "CURRENT_NODEPOOL": "currentNodePool", "CREATED_AT": "createdAt", "K8S_PHASE": "k8sPhase",
	} {
		var f SortField
		if err := f.UnmarshalGQL(enum); err != nil {
			t.Fatalf("UnmarshalGQL(%q): %v", enum, err)
		}
		var o Order
		if err := o.UnmarshalGQL("DESC"); err != nil {
			t.Fatal(err)
		}
		want, err := ParseSort(rest, "desc")
		if err != nil {
			t.Fatal(err)
		}
		if got := SortOf(&f, &o); got != want {
			t.Errorf("%s DESC = %+v, REST %s desc = %+v", enum, got, rest, want)
		}
		var b bytes.Buffer
		f.MarshalGQL(&b)
		if b.String() != `"`+enum+`"` {
			t.Errorf("%s writes back as %s", enum, b.String())
		}
	}
	if got := SortOf(nil, nil); got != (Sort{Field: DefaultSortField}) {
		t.Errorf("SortOf(nil, nil) = %+v", got)
	}
	var f SortField
	if err := f.UnmarshalGQL("PROJECT_ID"); err == nil || err.Error() != "PROJECT_ID is not a valid PodSortField" {
		t.Errorf("UnmarshalGQL(PROJECT_ID) = %v", err)
	}
	var o Order
	if err := o.UnmarshalGQL("UP"); err == nil || err.Error() != "UP is not a valid SortOrder" {
		t.Errorf("UnmarshalGQL(UP) = %v", err)
	}
}
