package demo_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/httpapi/rest/openapitest"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

// The pod metrics the demo README shows answer as it says: a training pod
// asked for GPU_UTILIZATION and a NIM type together answers 207; a serving
// pod's percentiles answer 200, a value at every step.
func TestDemoPodMetrics(t *testing.T) {
	now := time.Now().UTC()
	b, err := demo.JSON(now)
	if err != nil {
		t.Fatal(err)
	}
	start, end := now.Add(-24*time.Hour).Format(time.RFC3339), now.Format(time.RFC3339)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, string(b))
		var got struct {
			Measurements []struct {
				Type   string
				Labels map[string]string
				Values []struct{ Value, Timestamp string }
			}
			Histogram []struct {
				Type   string
				Values []struct {
					Timestamp string
					Data      map[string]string
				}
			}
			OmittedTypes []string
		}
		get := func(path string, status int) {
			t.Helper()
			code, body := env.Do(http.MethodGet, path, "acme-operator", nil, nil)
			if code != status {
				t.Fatalf("%s: %d %s", path, code, body)
			}
			openapitest.Validate(t, "MetricsCompositeResponse", body)
			got.Measurements, got.Histogram, got.OmittedTypes = nil, nil, nil
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
		}

		get(servertest.MetricsPath("abac6a90-5b54-5000-9b14-72baefd89601", "1fc3994a-2eb2-559c-a87e-c91b75f73ea0",
			"metricType", "GPU_UTILIZATION,NIM_TIME_TO_FIRST_TOKEN_SECONDS", "start", start, "end", end, "numberOfSamples", "24"), http.StatusMultiStatus)
		if len(got.Measurements) != 1 || got.Measurements[0].Type != "GPU_UTILIZATION" || len(got.Measurements[0].Values) < 23 ||
			len(got.OmittedTypes) != 1 || got.OmittedTypes[0] != "NIM_TIME_TO_FIRST_TOKEN_SECONDS" {
			t.Errorf("training pod: %+v", got)
		}

		get(servertest.MetricsPath("47bd91de-25f3-5e00-b231-d0c1d74cfcd3", "539f135a-bf88-5a31-b0d0-ff918ec8a6ea",
			"metricType", "NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES", "start", start, "end", end, "numberOfSamples", "24"), http.StatusOK)
		if len(got.Histogram) != 1 || len(got.Histogram[0].Values) < 23 {
			t.Fatalf("serving pod: %+v", got)
		}
		for _, v := range got.Histogram[0].Values {
			if len(v.Data) != 3 || v.Data["p50"] == "" || v.Data["p90"] == "" || v.Data["p99"] == "" {
				t.Errorf("percentiles at %s: %v", v.Timestamp, v.Data)
			}
		}

		// Eight GPUs per training pod, in index order.
		get(servertest.MetricsPath("abac6a90-5b54-5000-9b14-72baefd89601", "1fc3994a-2eb2-559c-a87e-c91b75f73ea0",
			"metricType", "GPU_MEMORY_USAGE_BYTES_PER_GPU", "start", start, "end", end, "numberOfSamples", "2"), http.StatusOK)
		for i, m := range got.Measurements {
			if want := string(rune('0' + i)); m.Labels["gpu"] != want {
				t.Errorf("series %d: labels %v", i, m.Labels)
			}
		}
		if len(got.Measurements) != 8 {
			t.Errorf("%d GPU series", len(got.Measurements))
		}
	})
}
