package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"gpugraph/dataset"
	"gpugraph/store"
	"gpugraph/store/storetest"
)

// Issue 18: what strict, generated clients trip on.

// TestPodMetricsLongRange: a range past ~292 years (time.Duration's
// reach) keeps its end point; steps are counted in int64 milliseconds.
func TestPodMetricsLongRange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := newMetricsEnv(t, st)
		far := `{"podMetrics": [{"podId": "` + train1 + `", "type": "CPU_USAGE_CORES",
		  "samples": [["0001-01-01T00:00:00Z", "1"], ["9999-12-31T23:58:00Z", "2"]]}]}`
		if _, err := dataset.LoadFile(context.Background(), st, []byte(far)); err != nil {
			t.Fatal(err)
		}
		got := getMetrics(t, env, http.StatusOK, metricsPath(trainWL, train1, "metricType", "CPU_USAGE_CORES",
			"start", "0001-01-01T00:00:00Z", "end", "9999-12-31T23:59:59.999Z", "numberOfSamples", "2"))
		want := js(`{'measurements': [{'type': 'CPU_USAGE_CORES', 'labels': {}, 'values': [
			{'value': '1', 'timestamp': '0001-01-01T00:00:00.000Z'},
			{'value': '2', 'timestamp': '9999-12-31T23:59:59.999Z'}]}]}`)
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}
