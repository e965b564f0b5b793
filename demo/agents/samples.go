package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"gpugraph/demo"
	"gpugraph/internal/services/podmetrics"
)

// The demo's metrics are a day of samples as of its load; without more,
// "the last hour" is empty a day later. Samples keeps them coming: every
// series of the demo is replayed as a daily cycle (the sample at instant t
// is the fixture's sample at the same point of its day), back-filled over
// Window at start and extended every Interval, pushed through the real
// ingestion path with each organization's metrics key. Samples are upserts,
// so filling an instant twice writes the same value.

// Step is the demo's sample spacing; samples are written on multiples of it.
const Step = 5 * time.Minute

// SampleOptions of the sample pusher; zero values take the defaults.
type SampleOptions struct {
	Window   time.Duration // how far back the start fills; default 24h
	Interval time.Duration // how often new samples are pushed; default 1 minute
	Now      func() time.Time
	Client   *http.Client
}

// series is one demo series with its day of values, oldest first.
type series struct {
	key    string // the metrics.write key of the pod's organization
	metric map[string]any
	values []json.RawMessage // podMetrics: the value; podHistograms: the buckets
	hist   bool
}

// fixtureSeries reads the demo's series, each with the key that may push it
// (its tenant's metrics.write key, from demo.Keys).
var fixtureSeries = sync.OnceValues(func() ([]series, error) {
	b, err := demo.JSON(anchorTime())
	if err != nil {
		return nil, err
	}
	var f struct {
		Pods []struct {
			ID       string `json:"id"`
			TenantID int    `json:"tenantId"`
		} `json:"pods"`
		PodMetrics []struct {
			PodID   string            `json:"podId"`
			Type    string            `json:"type"`
			Labels  map[string]string `json:"labels"`
			Samples [][2]json.RawMessage
		} `json:"podMetrics"`
		PodHistograms []struct {
			PodID   string            `json:"podId"`
			Type    string            `json:"type"`
			Labels  map[string]string `json:"labels"`
			Samples []struct {
				Buckets json.RawMessage `json:"buckets"`
			} `json:"samples"`
		} `json:"podHistograms"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	keyOfTenant := map[int]string{}
	for _, k := range demo.Keys() {
		if slices.Contains(k.Permissions, "metrics.write") {
			keyOfTenant[k.TenantID] = k.Token
		}
	}
	keyOfPod := map[string]string{}
	for _, p := range f.Pods {
		keyOfPod[p.ID] = keyOfTenant[p.TenantID]
	}
	var out []series
	for _, m := range f.PodMetrics {
		s := series{key: keyOfPod[m.PodID], metric: map[string]any{"podId": m.PodID, "type": m.Type, "labels": m.Labels}}
		for _, v := range m.Samples {
			s.values = append(s.values, v[1])
		}
		out = append(out, s)
	}
	for _, h := range f.PodHistograms {
		s := series{key: keyOfPod[h.PodID], hist: true, metric: map[string]any{"podId": h.PodID, "type": h.Type, "labels": h.Labels}}
		for _, v := range h.Samples {
			s.values = append(s.values, v.Buckets)
		}
		out = append(out, s)
	}
	for _, s := range out {
		if s.key == "" || len(s.values) == 0 {
			return nil, fmt.Errorf("demo series %v: no metrics key or no samples", s.metric)
		}
	}
	return out, nil
})

func anchorTime() time.Time {
	t, _ := time.Parse(time.RFC3339, demo.Anchor)
	return t
}

// ValueAt is the index into a series of n samples (the newest at the
// anchor, Step apart) whose value instant t replays: the same point of
// the cycle.
func ValueAt(t time.Time, n int) int {
	d := t.Sub(anchorTime())
	steps := int(d / Step)
	if d%Step < 0 {
		steps-- // floor, for instants before the anchor
	}
	return ((n-1+steps)%n + n) % n
}

// Fill pushes every demo series' samples at the multiples of Step in
// (from, to] to server, as each organization's metrics key, in batches of
// at most podmetrics.MaxBatchSamples samples (a series longer than that
// is cut across batches).
func Fill(ctx context.Context, client *http.Client, server string, from, to time.Time) error {
	all, err := fixtureSeries()
	if err != nil {
		return err
	}
	type batch struct {
		key                       string
		PodMetrics, PodHistograms []map[string]any
		n                         int
	}
	var batches []*batch
	open := map[string]*batch{} // each key's batch being filled
	first := from.Truncate(Step).Add(Step)
	for _, s := range all {
		entry := map[string]any{}
		for k, v := range s.metric {
			if l, ok := v.(map[string]string); !ok || l != nil {
				entry[k] = v
			}
		}
		var samples []any
		for t := first; !t.After(to); t = t.Add(Step) {
			v := s.values[ValueAt(t, len(s.values))]
			ts := t.UTC().Format(time.RFC3339)
			if s.hist {
				samples = append(samples, map[string]any{"timestamp": ts, "buckets": v})
			} else {
				samples = append(samples, []any{ts, v})
			}
		}
		if len(samples) == 0 {
			return nil
		}
		for len(samples) > 0 {
			b := open[s.key]
			if b == nil || b.n == podmetrics.MaxBatchSamples {
				b = &batch{key: s.key}
				open[s.key] = b
				batches = append(batches, b)
			}
			part := samples[:min(len(samples), podmetrics.MaxBatchSamples-b.n)]
			samples = samples[len(part):]
			e := maps.Clone(entry)
			e["samples"] = part
			b.n += len(part)
			if s.hist {
				b.PodHistograms = append(b.PodHistograms, e)
			} else {
				b.PodMetrics = append(b.PodMetrics, e)
			}
		}
	}
	for _, b := range batches {
		key := b.key
		body, err := json.Marshal(map[string]any{"podMetrics": b.PodMetrics, "podHistograms": b.PodHistograms})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, server+"/api/v1/metrics/samples", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("push demo samples as %s: %d %s", key, resp.StatusCode, msg)
		}
	}
	return nil
}

// PushSamples back-fills the demo's series over o.Window up to now, then
// extends them every o.Interval until ctx ends; wait blocks until it has
// stopped. A failed push is logged and retried from the same instant.
func PushSamples(ctx context.Context, server string, o SampleOptions) (wait func()) {
	if o.Window <= 0 {
		o.Window = 24 * time.Hour
	}
	if o.Interval <= 0 {
		o.Interval = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 30 * time.Second}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := o.Now().Add(-o.Window)
		for {
			now := o.Now()
			if err := Fill(ctx, o.Client, server, last, now); err != nil {
				if ctx.Err() != nil {
					return
				}
				slog.Default().Warn("demo samples not pushed; retrying", "err", err)
			} else {
				last = now
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(o.Interval):
			}
		}
	}()
	return func() { <-done }
}
