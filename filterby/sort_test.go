package filterby

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSort(t *testing.T) {
	for _, tc := range []struct {
		by, order string
		orderBy   string
	}{
		{"", "", "created_at, id"},
		{"", "desc", "created_at DESC, id DESC"},
		{"name", "asc", "name, id"},
		{"clusterId", "", "cluster_id, id"},
		{"workloadId", "desc", "workload_id DESC, id DESC"},
		{"revisionId", "", "(revision_id IS NULL), revision_id, id"},
		{"nodeName", "desc", "(node_name IS NULL) DESC, node_name DESC, id DESC"},
		{"currentNodepool", "", "(current_node_pool IS NULL), current_node_pool, id"},
		{"currentNodePool", "", "(current_node_pool IS NULL), current_node_pool, id"},
		{"createdAt", "", "created_at, id"},
		{"completedAt", "", "(completed_at IS NULL), completed_at, id"},
		{"deletedAt", "desc", "(deleted_at IS NULL) DESC, deleted_at DESC, id DESC"},
		{"k8sPhase", "", "k8s_phase, id"},
	} {
		s, err := ParseSort(tc.by, tc.order)
		if err != nil {
			t.Errorf("ParseSort(%q, %q): %v", tc.by, tc.order, err)
			continue
		}
		if got := s.OrderBy(); got != tc.orderBy {
			t.Errorf("ParseSort(%q, %q).OrderBy() = %q, want %q", tc.by, tc.order, got, tc.orderBy)
		}
		// PostgreSQL's own null placement is the portable order's: the
		// null key goes.
		pg := tc.orderBy
		if i := strings.Index(pg, " IS NULL)"); i >= 0 {
			pg = pg[strings.Index(pg, ", ")+2:]
		}
		if got := s.PostgresOrderBy(); got != pg {
			t.Errorf("ParseSort(%q, %q).PostgresOrderBy() = %q, want %q", tc.by, tc.order, got, pg)
		}
	}
	if got, want := (Sort{}).OrderBy(), "created_at, id"; got != want {
		t.Errorf("zero Sort orders by %q, want %q", got, want)
	}
	if got, want := (Sort{Field: "id; DROP TABLE pods"}).OrderBy(), "created_at, id"; got != want {
		t.Errorf("hand-made Sort orders by %q, want %q", got, want)
	}
	if got, want := (Sort{Field: "id; DROP TABLE pods", Desc: true}).PostgresOrderBy(), "created_at DESC, id DESC"; got != want {
		t.Errorf("hand-made Sort orders PostgreSQL by %q, want %q", got, want)
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
