package bench

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/models"
)

// metricsRead is figure 6: Samples stored over 100 pods of the fleet (a
// series of Samples/100 each), and one pod's series read at SeriesPoints
// points across its whole span through the REST path.
func (f *fleetRun) metricsRead(ctx context.Context) error {
	c := f.cfg
	const pods = 100
	perPod := c.Samples / pods
	targets, err := f.firstRunningPods(ctx, pods)
	if err != nil {
		return err
	}
	if len(targets) < pods {
		return fmt.Errorf("only %d running pods of tenant 0 to hold samples", len(targets))
	}
	ids := make([]string, len(targets))
	for i, p := range targets {
		ids[i] = p.ID
	}
	start := time.Now()
	if err := InsertBulkSamples(ctx, f.srv.DB, ids, perPod); err != nil {
		return err
	}
	if err := analyze(ctx, f.srv.DB); err != nil {
		return err
	}
	f.logf("inserted %d samples by SQL in %s", perPod*pods, time.Since(start).Round(time.Millisecond))

	pod := targets[pods/2]
	from := fleetgen.Epoch.Add(-time.Duration(perPod-1) * fleetgen.SampleStep)
	q := url.Values{}
	q.Set("metricType", "CPU_USAGE_CORES")
	q.Set("start", models.FormatTime(from))
	q.Set("end", models.FormatTime(fleetgen.Epoch))
	q.Set("numberOfSamples", strconv.Itoa(c.SeriesPoints))
	path := "/api/v1/workloads/" + url.PathEscape(pod.WorkloadID) + "/pods/" + url.PathEscape(pod.ID) + "/metrics?" + q.Encode()
	read := func(ctx context.Context) error {
		var m struct {
			Measurements []struct {
				Values []metricPoint `json:"values"`
			} `json:"measurements"`
		}
		if err := f.srv.Client.Get(ctx, path, &m); err != nil {
			return err
		}
		if len(m.Measurements) != 1 || len(m.Measurements[0].Values) != c.SeriesPoints {
			n := 0
			if len(m.Measurements) > 0 {
				n = len(m.Measurements[0].Values)
			}
			return fmt.Errorf("read %d series, %d points; want 1 series of %d", len(m.Measurements), n, c.SeriesPoints)
		}
		return nil
	}
	d, err := Median(ctx, 3, c.LatencyRuns, read)
	if err != nil {
		return err
	}
	f.rep.Set(6, rowMetrics, f.engine, ms(d))
	return nil
}

type metricPoint = struct {
	Value     string `json:"value"`
	Timestamp string `json:"timestamp"`
}
