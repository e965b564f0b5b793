package resolvers

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"gpugraph/graph/model"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/filterby"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/credentials"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/models"
)

func ptr[T any](v T) *T { return &v }

// TestPodWhere holds the translation of GraphQL's PodFilter into the
// plain data package pods compiles: every operator under its filterBy
// name, instants in UTC with every digit, null filters dropped, and
// anything else passed through for pods to refuse naming the field.
func TestPodWhere(t *testing.T) {
	if got := podWhere(nil); got != nil {
		t.Errorf("nil where: %v", got)
	}
	at := time.Date(2026, 5, 6, 9, 8, 7, 123456789, time.FixedZone("X", 2*3600))
	var nilString *model.StringFilter
	var nilTime *model.TimeFilter
	odd := []int{1}
	got := podWhere(map[string]any{
		"name": &model.StringFilter{Eq: ptr("a"), Ne: ptr("b"), Lte: ptr("c"), Gte: ptr("d"), Contains: ptr("e"),
			NotContains: ptr("f"), StartsWith: ptr("g"), EndsWith: ptr("h")},
		"nodeName":  &model.StringFilter{Contains: ptr("")},
		"createdAt": &model.TimeFilter{Gte: &at, Ne: &at},
		"deletedAt": &model.TimeFilter{},
		"projectId": nilString,
		"updatedAt": nilTime,
		"ip":        nil,
		"task":      odd,
	})
	want := map[string]any{
		"name": map[string]any{"eq": "a", "ne": "b", "lte": "c", "gte": "d", "contains": "e",
			"notContains": "f", "startsWith": "g", "endsWith": "h"},
		"nodeName":  map[string]any{"contains": ""},
		"createdAt": map[string]any{"gte": "2026-05-06T07:08:07.123456789Z", "ne": "2026-05-06T07:08:07.123456789Z"},
		"deletedAt": map[string]any{},
		"task":      odd,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}

// TestSortArguments: absent sortBy and sortOrder are the default sort
// (createdAt, ascending), as an absent sortBy is on the REST face; the
// enums read their GraphQL names only.
func TestSortArguments(t *testing.T) {
	if got := filterby.SortOf(nil, nil); got != (filterby.Sort{Field: filterby.DefaultSortField, Order: filterby.Asc}) {
		t.Errorf("default: %+v", got)
	}
	by, order := filterby.SortField("name"), filterby.Desc
	if got := filterby.SortOf(&by, &order); got != (filterby.Sort{Field: "name", Order: filterby.Desc}) {
		t.Errorf("given: %+v", got)
	}
	var o filterby.Order
	for in, want := range map[any]string{"ASC": "", "DESC": "", "asc": "asc is not a valid SortOrder", 1: "enums must be strings"} {
		err := o.UnmarshalGQL(in)
		if got := errText(err); got != want {
			t.Errorf("SortOrder %v: %q, want %q", in, got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestPaginationArguments: vms asks who the caller is before it reads
// offset and limit, so an unauthenticated request is a 401, never a 400.
func TestPaginationArguments(t *testing.T) {
	r := &queryResolver{&Resolver{}}
	_, err := r.Vms(context.Background(), nil, ptr(-1), ptr(0))
	if e, _ := apierr.As(err); e.Status != 401 {
		t.Errorf("no caller: %+v", e)
	}
	_, err = r.Pods(context.Background(), nil, nil, nil, nil, nil, ptr(-1), nil, nil, nil)
	if e, _ := apierr.As(err); e.Status != 401 {
		t.Errorf("pods, no caller: %+v", e)
	}
	for _, tc := range []struct {
		conn paging.Connection[int]
		want string
	}{
		{paging.Connection[int]{}, `{"hasNextPage":false,"hasPreviousPage":false}`},
		{paging.Connection[int]{Cursors: []string{"a", "b", "c"}, HasNext: true, After: true},
			`{"hasNextPage":true,"hasPreviousPage":true,"startCursor":"a","endCursor":"c"}`},
		{paging.Connection[int]{Cursors: []string{"a"}}, `{"hasNextPage":false,"hasPreviousPage":false,"startCursor":"a","endCursor":"a"}`},
	} {
		b, _ := json.Marshal(pageInfo(&tc.conn))
		if string(b) != tc.want {
			t.Errorf("pageInfo: %s, want %s", b, tc.want)
		}
	}
}

// TestPodMetricsModel: the service's answer field for field, histograms
// null when none was asked, omitted types as the enum, lists never null.
func TestPodMetricsModel(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := podmetrics.Result{
		Measurements: []podmetrics.Measurement{{Type: "GPU_UTILIZATION", Labels: map[string]string{"gpu": "0"},
			Values: []podmetrics.Value{{T: at, Value: "0.5"}}}},
		Histograms: []podmetrics.Histogram{{Type: "NIM_TIME_TO_FIRST_TOKEN_SECONDS",
			Values: []podmetrics.HistogramValue{{T: at, Data: map[string]string{"+Inf": "3"}}}}},
		Omitted: []string{"NIM_NUM_REQUESTS_RUNNING"},
	}
	b, _ := json.Marshal(podMetricsModel(res))
	want := `{"measurements":[{"type":"GPU_UTILIZATION","labels":{"gpu":"0"},"values":[{"value":"0.5","timestamp":"2026-01-01T00:00:00Z"}]}],` +
		`"histogram":[{"type":"NIM_TIME_TO_FIRST_TOKEN_SECONDS","values":[{"timestamp":"2026-01-01T00:00:00Z","data":{"+Inf":"3"}}]}],` +
		`"omittedTypes":["NIM_NUM_REQUESTS_RUNNING"]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(podMetricsModel(podmetrics.Result{}))
	if string(b) != `{"measurements":[],"omittedTypes":[]}` {
		t.Errorf("empty: %s", b)
	}
}

// TestCredentialTranslation: the input's absent strings are the service's
// empty ones (the caller's organization, no name, never expires), and a
// credential's space-separated permissions a list, [] when none.
func TestCredentialTranslation(t *testing.T) {
	if got := spec(model.CredentialInput{Permissions: []string{"vms.read"}}); !reflect.DeepEqual(got,
		credentials.Spec{Permissions: []string{"vms.read"}}) {
		t.Errorf("bare input: %+v", got)
	}
	if got := spec(model.CredentialInput{OrganizationID: ptr("o1"), Name: ptr("ci"), Expires: ptr("90d")}); !reflect.DeepEqual(got,
		credentials.Spec{OrganizationID: "o1", Name: "ci", Expires: "90d"}) {
		t.Errorf("full input: %+v", got)
	}
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	got := credentialList([]credentials.Credential{
		{ID: "k1", OrganizationID: "o1", Name: "n", Permissions: "vms.read  pods.read", CreatedAt: at, ExpiresAt: &at},
		{ID: "k2", Permissions: ""},
	})
	if len(got) != 2 || !reflect.DeepEqual(got[0], &model.Credential{ID: "k1", OrganizationID: "o1", Name: "n",
		Permissions: []string{"vms.read", "pods.read"}, CreatedAt: at, ExpiresAt: &at}) ||
		got[1].Permissions == nil || len(got[1].Permissions) != 0 {
		t.Errorf("credentials: %+v %+v", got[0], got[1])
	}
	if orZero(nil) != 0 || orZero(ptr(7)) != 7 || deref(nil) != "" || deref(ptr("x")) != "x" ||
		orEmpty(nil) != "" || orEmpty(ptr("y")) != "y" || isTrue(nil) || isTrue(ptr(false)) || !isTrue(ptr(true)) {
		t.Error("argument defaults")
	}
}

// TestGPUMemoryUsedBytes: the stored integer as the schema's Float, null
// when unknown.
func TestGPUMemoryUsedBytes(t *testing.T) {
	r := &gpuResolver{}
	got, err := r.MemoryUsedBytes(context.Background(), &models.GPU{})
	if got != nil || err != nil {
		t.Errorf("unknown: %v %v", got, err)
	}
	n := int64(81_920_000_000)
	got, err = r.MemoryUsedBytes(context.Background(), &models.GPU{MemoryUsedBytes: &n})
	if err != nil || got == nil || *got != 81_920_000_000 {
		t.Errorf("known: %v %v", got, err)
	}
}
