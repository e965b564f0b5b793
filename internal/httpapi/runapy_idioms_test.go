package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// runapy's own idioms, replayed as its URL builder writes them (run-ai's
// runapy 1.224.0, runai/api_client.py: param_serialize runs
// sanitize_for_serialization, which writes a datetime with isoformat()
// and leaves a str enum as it is, then parameters_to_url_query, which
// joins a list with "," and writes every value as quote(str(v)):
// str(PodVerbosity.FULL) is "PodVerbosity.FULL", a naive datetime has no
// zone, and quote escapes ":" and ","). The paths below are what
//
//	PodsApi(client).list_pods(limit=2, sort_by="name", verbosity=PodVerbosity.FULL)
//	PodsApi(client).get_workload_pod_metrics(workload_id, pod_id,
//	    metric_type=[PodMetricType.GPU_UTILIZATION_PER_GPU, PodMetricType.CPU_USAGE_CORES],
//	    start=datetime(2025, 1, 1, 0, 0), end=datetime(2025, 1, 1, 0, 2, 0, 500000), number_of_samples=3)
//
// send, with the token flow's access token and runapy's default headers.
func TestRunapyIdioms(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.NewWithAdminKeys(t, st)
		if _, err := dataset.LoadFile(context.Background(), st, []byte(metricsFixture)); err != nil {
			t.Fatal(err)
		}
		app := servertest.NewApplication(t, env, `{"name": "runapy", "permissions": ["workloads.read"]}`)
		status, body := runapyTokenRequest(t, env, app.ClientID, app.ClientSecret)
		var tok servertest.TokenAnswer
		if status != 200 || json.Unmarshal(body, &tok) != nil {
			t.Fatalf("token: %d %s", status, body)
		}
		h := runapyHeaders()
		h.Set("Authorization", "Bearer "+tok.AccessToken)
		get := func(path string) string {
			t.Helper()
			status, body := env.Do(http.MethodGet, path, "", nil, h)
			if status != 200 {
				t.Fatalf("GET %s: %d %s", path, status, body)
			}
			return servertest.Compact(t, body)
		}

		// verbosity=PodVerbosity.FULL answers as verbosity=full, .BRIEF as brief.
		full := get("/api/v1/workloads/pods?limit=2&sortBy=name&verbosity=PodVerbosity.FULL")
		if want := get("/api/v1/workloads/pods?limit=2&sortBy=name&verbosity=full"); full != want {
			t.Errorf("PodVerbosity.FULL:\n%s\nwant (verbosity=full)\n%s", full, want)
		}
		var pods struct {
			Next int
			Pods []struct{ Name, WorkloadName, ProjectName string }
		}
		if err := json.Unmarshal([]byte(full), &pods); err != nil {
			t.Fatal(err)
		}
		if len(pods.Pods) != 2 || pods.Next != 2 || pods.Pods[0].Name != "llm-serve-0" || pods.Pods[0].WorkloadName != "llm-serve" || pods.Pods[0].ProjectName != "vision" ||
			pods.Pods[1].Name != "resnet-train-0" || pods.Pods[1].WorkloadName != "resnet-train" {
			t.Errorf("PodVerbosity.FULL: %s", full)
		}
		brief := get("/api/v1/workloads/pods?limit=2&sortBy=name&verbosity=PodVerbosity.BRIEF")
		if want := get("/api/v1/workloads/pods?limit=2&sortBy=name"); brief != want || strings.Contains(brief, "workloadName") {
			t.Errorf("PodVerbosity.BRIEF:\n%s\nwant (no verbosity)\n%s", brief, want)
		}

		// Other spellings stay a 400 naming what is taken.
		for _, v := range []string{"FULL", "Full", "PodVerbosity.full", "PodVerbosity", "runai.PodVerbosity.FULL"} {
			status, body := env.Do(http.MethodGet, "/api/v1/workloads/pods?verbosity="+v, "", nil, h)
			if want := `verbosity must be brief or full (PodVerbosity.BRIEF and PodVerbosity.FULL are read as those), got "` + v + `"`; status != 400 || servertest.ErrorMessage(t, body) != want {
				t.Errorf("verbosity=%s: %d %s, want 400 %s", v, status, body, want)
			}
		}

		// start and end without a zone are UTC: the same answer as with Z.
		naive := get("/api/v1/workloads/" + servertest.TrainWorkload + "/pods/" + servertest.TrainPod1 + "/metrics?metricType=GPU_UTILIZATION_PER_GPU%2CCPU_USAGE_CORES" +
			"&start=2025-01-01T00%3A00%3A00&end=2025-01-01T00%3A02%3A00.500000&numberOfSamples=3")
		zoned := get("/api/v1/workloads/" + servertest.TrainWorkload + "/pods/" + servertest.TrainPod1 + "/metrics?metricType=GPU_UTILIZATION_PER_GPU%2CCPU_USAGE_CORES" +
			"&start=2025-01-01T00%3A00%3A00Z&end=2025-01-01T00%3A02%3A00.5Z&numberOfSamples=3")
		// Samples at 0 s, 60.25 s and 120.5 s: the step is (end − start)/2.
		want := servertest.JS(`{'measurements': [
			{'labels': {'gpu': '0'}, 'type': 'GPU_UTILIZATION_PER_GPU', 'values': [
				{'timestamp': '2025-01-01T00:00:00.000Z', 'value': '10'}, {'timestamp': '2025-01-01T00:01:00.250Z', 'value': '20'},
				{'timestamp': '2025-01-01T00:02:00.500Z', 'value': '30.5'}]},
			{'labels': {'gpu': '1'}, 'type': 'GPU_UTILIZATION_PER_GPU', 'values': [
				{'timestamp': '2025-01-01T00:01:00.250Z', 'value': '40'}, {'timestamp': '2025-01-01T00:02:00.500Z', 'value': '60'}]},
			{'labels': {}, 'type': 'CPU_USAGE_CORES', 'values': [
				{'timestamp': '2025-01-01T00:00:00.000Z', 'value': '0.1'}, {'timestamp': '2025-01-01T00:01:00.250Z', 'value': '3.5'},
				{'timestamp': '2025-01-01T00:02:00.500Z', 'value': '3.5'}]}]}`)
		if naive != want || zoned != want {
			t.Errorf("zone-less start and end:\n%s\nwith Z\n%s\nwant\n%s", naive, zoned, want)
		}
	})
}
