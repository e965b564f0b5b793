package servertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gpugraph/internal/httpapi/rest/openapitest"
)

// Workloads and pods of Base the pod metrics' tests read and write:
// TrainPod1 (resnet-train-1, Acme's, no samples in Base), TrainPod0
// (resnet-train-0, Acme's, GPU 0 at 85 and 92 on 2024-12-20 14:30:00 and
// :30), ServePod0 (llm-serve-0, Acme's, one NIM histogram in Base) and
// GlobexPod0 (Globex's).
const (
	TrainWorkload  = "11111111-1111-4111-8111-111111111111"
	ServeWorkload  = "22222222-2222-4222-8222-222222222222"
	GlobexWorkload = "33333333-3333-4333-8333-333333333333"
	TrainPod0      = "aaaaaaaa-0000-4000-8000-000000000001"
	TrainPod1      = "aaaaaaaa-0000-4000-8000-000000000002"
	ServePod0      = "aaaaaaaa-0000-4000-8000-000000000003"
	GlobexPod0     = "aaaaaaaa-0000-4000-8000-000000000004"
)

// SamplesPath is where pod metrics samples are posted.
const SamplesPath = "/api/v1/metrics/samples"

// MetricsPath is the REST path of a pod's metrics; params are query
// pairs.
func MetricsPath(workload, pod string, params ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		q.Add(params[i], params[i+1])
	}
	return "/api/v1/workloads/" + workload + "/pods/" + pod + "/metrics?" + q.Encode()
}

// GetMetrics fetches a metrics answer as acme-workloads, checks its status
// and that it validates against MetricsCompositeResponse, and answers it
// compacted.
func GetMetrics(t testing.TB, env *Env, status int, path string) string {
	t.Helper()
	got, body := env.Do(http.MethodGet, path, "acme-workloads", nil, nil)
	if got != status {
		t.Fatalf("GET %s: %d %s, want %d", path, got, body, status)
	}
	openapitest.Validate(t, "MetricsCompositeResponse", body)
	return Compact(t, body)
}

// Compact is the JSON document b without its spaces, its keys sorted.
func Compact(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// JS writes expected JSON readably, single quotes for double ones, and
// answers it as Compact does.
func JS(s string) string {
	var v any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(s, "'", `"`)), &v); err != nil {
		panic(err.Error() + ": " + s)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
