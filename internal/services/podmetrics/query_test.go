package podmetrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
)

func TestCallsNeedTheirPermission(t *testing.T) {
	// A caller without the permission is refused before the store is used
	// (there is none here); no caller at all is a 401.
	none := &auth.Caller{}
	svc := New(nil, nil)
	_, err := svc.Query(context.Background(), none, Request{})
	if e, ok := apierr.As(err); !ok || e.Code != apierr.Forbidden || e.Message != "this credential lacks the workloads.read permission" {
		t.Errorf("Query: got %v, want a 403 naming workloads.read", err)
	}
	_, err = svc.Ingest(context.Background(), none, NewBatch())
	if e, ok := apierr.As(err); !ok || e.Code != apierr.Forbidden || e.Message != "this credential lacks the metrics.write permission" {
		t.Errorf("Ingest: got %v, want a 403 naming metrics.write", err)
	}
	_, err = svc.Query(context.Background(), nil, Request{})
	if e, ok := apierr.As(err); !ok || e.Code != apierr.Unauthenticated {
		t.Errorf("Query without a caller: got %v, want a 401", err)
	}
}

func TestCheckRequest(t *testing.T) {
	t0 := time.Date(2024, 12, 20, 14, 0, 0, 0, time.UTC)
	n := func(v int) *int { return &v }
	bad := []struct {
		name string
		req  Request
		want string
	}{
		{"unknown type", Request{Types: []string{"GPU_UTILIZATION", "NOPE"}, Start: t0, End: t0.Add(time.Hour)},
			`metricType "NOPE" is not a pod metric type`},
		{"no type", Request{Start: t0, End: t0.Add(time.Hour)}, "metricType is required"},
		{"empty range", Request{Types: []string{"GPU_UTILIZATION"}, Start: t0, End: t0},
			"end (2024-12-20T14:00:00.000Z) must be after start (2024-12-20T14:00:00.000Z)"},
		{"too many samples", Request{Types: []string{"GPU_UTILIZATION"}, Start: t0, End: t0.Add(time.Hour), NumberOfSamples: n(1001)},
			"numberOfSamples must be between 0 and 1000, got 1001"},
		{"negative samples", Request{Types: []string{"GPU_UTILIZATION"}, Start: t0, End: t0.Add(time.Hour), NumberOfSamples: n(-1)},
			"numberOfSamples must be between 0 and 1000, got -1"},
	}
	for _, tc := range bad {
		_, err := checkRequest(tc.req)
		if e, ok := apierr.As(err); !ok || e.Code != apierr.BadRequestCode || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: got %v, want a 400 saying %q", tc.name, err, tc.want)
		}
	}

	q, err := checkRequest(Request{Types: []string{"CPU_USAGE_CORES", "GPU_UTILIZATION", "CPU_USAGE_CORES"},
		Start: t0, End: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(q.types, ",") != "CPU_USAGE_CORES,GPU_UTILIZATION" || q.n != DefaultNumberOfSamples || len(q.steps) != DefaultNumberOfSamples {
		t.Errorf("got types %v, n %d, %d steps; want repeats dropped and %d steps", q.types, q.n, len(q.steps), DefaultNumberOfSamples)
	}
	if q, err := checkRequest(Request{Types: []string{"CPU_USAGE_CORES"}, Start: t0, End: t0.Add(time.Hour), NumberOfSamples: n(0)}); err != nil || q.steps != nil {
		t.Errorf("numberOfSamples=0: got %d steps, %v; want raw samples (no steps)", len(q.steps), err)
	}
}
