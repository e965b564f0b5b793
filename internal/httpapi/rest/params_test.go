package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/filterby"
	"gpugraph/models"
)

// message is err's status and message as a face writes them ("" for nil).
func message(err error) string {
	if err == nil {
		return ""
	}
	e, _ := apierr.As(err)
	return http.StatusText(e.Status) + ": " + e.Message
}

func query(t *testing.T, raw string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestParsePodListParams holds the pods lists' parameters to what rest
// decides itself: their syntax and exact 400s, the sort, verbosity; the
// range of limit and offset is package pods'.
func TestParsePodListParams(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
	}{
		{"", ""},
		{"limit=5&offset=10&deleted=true&completed=false&verbosity=full&sortBy=name&sortOrder=desc", ""},
		{"limit=-1&offset=0", ""}, // the range is package pods'
		{"limit=abc", `Bad Request: limit must be an integer, got "abc"`},
		{"limit=%2B5", `Bad Request: limit must be an integer, got "+5"`},
		{"limit=05", `Bad Request: limit must be an integer, got "05"`},
		{"limit=5.0", `Bad Request: limit must be an integer, got "5.0"`},
		{"limit=99999999999999999999", `Bad Request: limit must be an integer, got "99999999999999999999"`},
		{"offset=x", `Bad Request: offset must be an integer, got "x"`},
		{"deleted=yes", `Bad Request: deleted must be true or false, got "yes"`},
		{"deleted=True", `Bad Request: deleted must be true or false, got "True"`},
		{"completed=maybe", `Bad Request: completed must be true, false or all, got "maybe"`},
		{"verbosity=loud", `Bad Request: verbosity must be brief or full (PodVerbosity.BRIEF and PodVerbosity.FULL are read as those), got "loud"`},
		{"sortOrder=up", `Bad Request: ` + (&filterby.Error{Param: "sortOrder", Text: "up", Reason: "want asc or desc"}).Error()},
		// the first bad parameter in the order they are read
		{"deleted=x&limit=y", `Bad Request: deleted must be true or false, got "x"`},
		{"limit=y&verbosity=z", `Bad Request: limit must be an integer, got "y"`},
	} {
		_, _, err := parsePodListParams(query(t, tc.raw))
		if got := message(err); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.raw, got, tc.want)
		}
	}
	_, _, err := parsePodListParams(query(t, "sortBy=noSuchField"))
	if got := message(err); !strings.HasPrefix(got, `Bad Request: `) || !strings.Contains(got, "sortBy") || !strings.Contains(got, "noSuchField") {
		t.Errorf("unknown sortBy: %q", got)
	}

	q, full, err := parsePodListParams(query(t, "limit=5&offset=10&deleted=true&completed=false&verbosity=full&sortBy=name&sortOrder=desc&filterBy=a==b&filterBy=c!=d&search=x"))
	if err != nil {
		t.Fatal(err)
	}
	if !full || *q.Limit != 5 || *q.Offset != 10 || !q.Deleted || q.Completed == nil || *q.Completed ||
		q.Sort.Field != "name" || q.Sort.Order != filterby.Desc || q.Search != "x" ||
		len(q.FilterBy) != 2 || q.FilterBy[0] != "a==b" || q.FilterBy[1] != "c!=d" {
		t.Errorf("read %+v, full %v", q, full)
	}
	q, full, err = parsePodListParams(url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if full || q.Limit != nil || q.Offset != nil || q.Deleted || q.Completed != nil ||
		q.Sort.Field != filterby.DefaultSortField || q.Sort.Order != filterby.Asc || q.FilterBy != nil {
		t.Errorf("defaults: %+v, full %v", q, full)
	}
}

func TestScalarParams(t *testing.T) {
	for raw, want := range map[string]*bool{"": nil, "completed=": nil, "completed=all": nil, "completed=true": ptr(true), "completed=false": ptr(false)} {
		got, err := completedParam(query(t, raw))
		if err != nil || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("completed %q: %v %v", raw, got, err)
		}
	}
	for raw, want := range map[string]*bool{"": nil, "deleted=": nil, "deleted=true": ptr(true), "deleted=false": ptr(false)} {
		got, err := boolParam(query(t, raw), "deleted")
		if err != nil || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("deleted %q: %v %v", raw, got, err)
		}
	}
	for raw, want := range map[string]bool{"": false, "verbosity=brief": false, "verbosity=PodVerbosity.BRIEF": false,
		"verbosity=full": true, "verbosity=PodVerbosity.FULL": true} {
		if got, err := verbosityParam(query(t, raw)); err != nil || got != want {
			t.Errorf("verbosity %q: %v %v", raw, got, err)
		}
	}
	for raw, want := range map[string]int{"limit=0": 0, "limit=-3": -3, "limit=9007199254740991": 9007199254740991} {
		if got, err := intParam(query(t, raw), "limit"); err != nil || got == nil || *got != want {
			t.Errorf("limit %q: %v %v", raw, got, err)
		}
	}
	if got, err := intParam(url.Values{}, "limit"); got != nil || err != nil {
		t.Errorf("absent limit: %v %v", got, err)
	}
	if isTrue(nil) || isTrue(ptr(false)) || !isTrue(ptr(true)) {
		t.Error("isTrue")
	}
}

func ptr[T any](v T) *T { return &v }

// TestCheckParams holds the edge's checks of every REST request: repeated
// scalars, the count and length bounds, path values; unknown parameters
// pass (the seed's clients send their own).
func TestCheckParams(t *testing.T) {
	long := strings.Repeat("a", 257)
	many := strings.Repeat("filterBy=a&", 65)
	manyNames := ""
	for i := range 65 {
		manyNames += "p" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + "=1&"
	}
	for _, tc := range []struct {
		raw, want string
	}{
		{"", ""},
		{"limit=5&filterBy=a&filterBy=b&metricType=X&metricType=Y&status=running&status=stopped", ""},
		{"noSuchParameter=1", ""},
		{"limit=5&limit=500", "Bad Request: limit is given 2 times; it takes one value"},
		{"sortBy=a&sortBy=b&sortBy=c", "Bad Request: sortBy is given 3 times; it takes one value"},
		{"offset=1&limit=1&limit=2&offset=2", "Bad Request: limit is given 2 times; it takes one value"}, // sorted: the same at every run
		{strings.TrimSuffix(many, "&"), "Bad Request: filterBy is repeated 65 times, more than 64"},
		{strings.TrimSuffix(manyNames, "&"), "Bad Request: the query string has 65 parameters, more than 64"},
		{"search=" + long, "Bad Request: search is longer than 256 bytes"},
		{"filterBy=" + long, ""},
		{"filterBy=" + strings.Repeat("a", 8193), "Bad Request: filterBy is longer than 8192 bytes"},
		{"search=%ff", "Bad Request: search is not valid UTF-8"},
		{"search=a%00b", "Bad Request: search contains a NUL character"},
		{"%ff=1", "Bad Request: a parameter name is not valid UTF-8"},
		{strings.Repeat("n", 65) + "=1", "Bad Request: a parameter name is longer than 64 bytes"},
	} {
		r := httptest.NewRequest("GET", "/x?"+tc.raw, nil)
		if got := message(CheckParams(r)); got != tc.want {
			t.Errorf("%.80q: got %q, want %q", tc.raw, got, tc.want)
		}
	}
	for name, want := range map[string]string{
		"id":         "Bad Request: id is longer than 256 bytes",
		"workloadId": "Bad Request: workloadId is longer than 256 bytes",
		"podId":      "Bad Request: podId is longer than 256 bytes",
		"revisionId": "Bad Request: revisionId is longer than 256 bytes",
	} {
		r := httptest.NewRequest("GET", "/x", nil)
		r.SetPathValue(name, long)
		if got := message(CheckParams(r)); got != want {
			t.Errorf("path %s: got %q, want %q", name, got, want)
		}
		r.SetPathValue(name, "a\x00b")
		if got := message(CheckParams(r)); got != "Bad Request: "+name+" contains a NUL character" {
			t.Errorf("path %s NUL: got %q", name, got)
		}
	}
}

// TestFaceOrder checks what a face does before its handler: who the caller
// is (401), the service's gate (403), the parameters (400), each in its
// API's error shape.
func TestFaceOrder(t *testing.T) {
	ran := false
	h := func(w http.ResponseWriter, r *http.Request) error {
		ran = true
		if r.PathValue("id") != "vm-1" {
			return apierr.NotFound("VM_NOT_FOUND", "VM %s not found", r.PathValue("id"))
		}
		writeJSON(w, http.StatusOK, map[string]string{"say": "<API key>"})
		return nil
	}
	allow := func(*auth.Caller) error { return nil }
	deny := func(*auth.Caller) error { return apierr.MissingPermission("API key", "vms.read") }
	serve := func(hd http.Handler, caller bool, raw, id string) (int, string) {
		t.Helper()
		ran = false
		r := httptest.NewRequest("GET", "/x?"+raw, nil)
		r.SetPathValue("id", id)
		if caller {
			r = r.WithContext(auth.WithCaller(r.Context(), auth.SystemCaller()))
		}
		w := httptest.NewRecorder()
		hd.ServeHTTP(w, r)
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	for _, tc := range []struct {
		name   string
		h      http.Handler
		caller bool
		raw    string
		id     string
		status int
		body   string
		ran    bool
	}{
		{"runai 401 before 400", runai(allow, h), false, "limit=1&limit=2", "vm-1", 401, "", false},
		{"runai 403 before 400", runai(deny, h), true, "limit=1&limit=2", "vm-1", 403,
			`{"code":403,"message":"this API key lacks the vms.read permission"}`, false},
		{"runai 400", runai(allow, h), true, "limit=1&limit=2", "vm-1", 400,
			`{"code":400,"message":"limit is given 2 times; it takes one value"}`, false},
		{"runai handler error", runai(allow, h), true, "", "vm-2", 404, `{"code":404,"message":"VM vm-2 not found"}`, true},
		{"runai ok, not HTML-escaped", runai(allow, h), true, "", "vm-1", 200, `{"say":"<API key>"}`, true},
		{"openRelay 403", openRelay(deny, h), true, "", "vm-1", 403,
			`{"error":{"code":"FORBIDDEN","message":"this API key lacks the vms.read permission"}}`, false},
		{"openRelay 400", openRelay(allow, h), true, "a=1&a=2", "vm-1", 400,
			`{"error":{"code":"BAD_REQUEST","message":"a is given 2 times; it takes one value"}}`, false},
		{"openRelay handler error", openRelay(allow, h), true, "", "vm-2", 404,
			`{"error":{"code":"VM_NOT_FOUND","message":"VM vm-2 not found"}}`, true},
	} {
		status, body := serve(tc.h, tc.caller, tc.raw, tc.id)
		if status != tc.status || (tc.body != "" && body != tc.body) || ran != tc.ran {
			t.Errorf("%s: %d %s (handler ran: %v)", tc.name, status, body, ran)
		}
	}
	if got := PolicyOf(runai(allow, h)).API; got != route.Runai {
		t.Errorf("runai's face: %q", got)
	}
	if got := PolicyOf(Costs(route.Policy{MaxBody: 10}, openRelay(allow, h))); got.API != route.OpenRelay || got.MaxBody != 10 {
		t.Errorf("openRelay's costed policy: %+v", got)
	}
	if got := PolicyOf(http.NotFoundHandler()); got != (route.Policy{}) {
		t.Errorf("a bare handler's policy: %+v", got)
	}
}

// TestRunaiPodWriter checks the Run:ai pod object rest writes: times in
// the API's one format, null where unknown, lists written empty, the
// names only with verbosity=full.
func TestRunaiPodWriter(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC)
	done := at.Add(time.Hour)
	pool, project, workload := "pool-a", "proj", "wl"
	w := 2.5
	p := &models.Pod{
		ID: "p1", Name: "pod-1", PriorityClassName: "high", WorkloadID: "w1", ClusterID: "c1",
		CreatedAt: at, CompletedAt: &done, K8sPhase: "Running", TenantID: 7,
		K8sPhaseUpdatedAt: at, UpdatedAt: at, CurrentNodePool: &pool, ProjectName: &project, WorkloadName: &workload,
		Containers: []models.Container{{Name: "main", Image: "img:1", StartedAt: &at}, {Name: "side", Image: "img:2"}},
		NodeAffinity: &models.PodNodeAffinity{
			Required: &models.NodeAffinityRequired{NodeSelectorTerms: []models.NodeSelectorTerm{{MatchExpressions: []models.MatchExpression{
				{Key: "gpu", Operator: "In", Values: []string{"h100"}}, {Key: "zone", Operator: "Exists"}}}}},
			Preferred: &models.NodeAffinityPreferred{NodeSelectorTerms: []models.PreferredNodeSelectorTerm{
				{Weight: &w, Preference: &models.NodeSelectorTerm{MatchExpressions: []models.MatchExpression{}}}, {}}},
		},
	}
	brief, err := json.Marshal(newRunaiPod(p, false))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"pod-1","priorityClassName":"high","id":"p1","workloadId":"w1","revisionId":null,"clusterId":"c1",` +
		`"nodeName":null,"createdAt":"2026-03-04T05:06:07.890Z","completedAt":"2026-03-04T06:06:07.890Z",` +
		`"containers":[{"name":"main","image":"img:1","startedAt":"2026-03-04T05:06:07.890Z"},{"name":"side","image":"img:2","startedAt":null}],` +
		`"currentNodePool":"pool-a","requestedNodePools":[],"requestedResources":null,"allocatedResources":null,"tolerations":[],` +
		`"k8sPhase":"Running","ip":null,"task":null,` +
		`"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"gpu","operator":"In","values":["h100"]},{"key":"zone","operator":"Exists"}]}]},` +
		`"preferred":{"nodeSelectorTerms":[{"weight":2.5,"preference":{"matchExpressions":[]}},{"preference":null}]}},` +
		`"tenantId":7,"k8sPhaseUpdatedAt":"2026-03-04T05:06:07.890Z","updatedAt":"2026-03-04T05:06:07.890Z","deletedAt":null}`
	if string(brief) != want {
		t.Errorf("brief:\n got %s\nwant %s", brief, want)
	}
	full, _ := json.Marshal(newRunaiPods([]*models.Pod{p}, true))
	if !strings.HasSuffix(string(full), `"deletedAt":null,"projectName":"proj","workloadName":"wl"}]`) {
		t.Errorf("full: %s", full)
	}
	bare, _ := json.Marshal(newRunaiPod(&models.Pod{ID: "p2"}, true))
	if !strings.Contains(string(bare), `"containers":[],`) || !strings.Contains(string(bare), `"nodeAffinity":{"required":null,"preferred":null}`) ||
		strings.Contains(string(bare), "projectName") || strings.Contains(string(bare), "projectId") {
		t.Errorf("bare: %s", bare)
	}
	if got, _ := json.Marshal(newRunaiPods(nil, false)); string(got) != "[]" {
		t.Errorf("no pods: %s", got)
	}
}

func TestParseMetricsParams(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
	}{
		{"metricType=GPU_UTILIZATION&start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z", ""},
		{"start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z", "Bad Request: metricType is required: name at least one pod metric type"},
		{"metricType=,&start=2026-01-01T00:00:00Z", "Bad Request: metricType is required: name at least one pod metric type"},
		{"metricType=NOPE", `Bad Request: metricType "NOPE" is not a pod metric type`},
		{"metricType=GPU_UTILIZATION", "Bad Request: start is required (ISO 8601, e.g. 2023-06-06T12:09:18.211Z)"},
		{"metricType=GPU_UTILIZATION&start=2026-01-01T00:00:00Z", "Bad Request: end is required (ISO 8601, e.g. 2023-06-06T12:09:18.211Z)"},
		{"metricType=GPU_UTILIZATION&start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z&numberOfSamples=x",
			`Bad Request: numberOfSamples must be an integer between 0 and 1000, got "x"`},
	} {
		_, err := parseMetricsParams(query(t, tc.raw))
		if got := message(err); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.raw, got, tc.want)
		}
	}
	p, err := parseMetricsParams(query(t, "metricType=GPU_UTILIZATION,%20CPU_USAGE_CORES&metricType=GPU_MEMORY_USAGE_BYTES&start=2026-01-01T00:00:00&end=2026-01-01T01:00:00.5%2B01:00&numberOfSamples=7"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.types, ",") != "GPU_UTILIZATION,CPU_USAGE_CORES,GPU_MEMORY_USAGE_BYTES" || p.numberOfSamples != 7 ||
		!p.start.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || !p.end.Equal(time.Date(2026, 1, 1, 0, 0, 0, 500_000_000, time.UTC)) {
		t.Errorf("read %+v", p)
	}
}

func TestPrefersCSV(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                 false,
		"text/csv":                         true,
		"application/json":                 false,
		"text/csv, application/json":       true,
		"application/json, text/csv":       false,
		"text/csv;q=0.5, application/json": false,
		"application/json;q=0.5, text/csv": true,
		"text/*":                           true,
		"*/*, text/csv":                    false,
		"text/csv;q=0":                     false,
		"text/csv;q=x, application/json":   false,
	} {
		if got := prefersCSV(accept); got != want {
			t.Errorf("%q: %v, want %v", accept, got, want)
		}
	}
}
