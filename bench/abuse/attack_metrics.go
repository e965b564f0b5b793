package abuse

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gpugraph/bench/fleetgen"
	"gpugraph/models"
)

// inventedMethods sends 20,000 requests with methods nobody serves (no
// key needed; finding 6), then scrapes /metrics: its size before and
// after and what one scrape costs.
func inventedMethods(ctx context.Context, e *env, r *Result) error {
	var warm Statuses
	send := func(ctx context.Context, s *Statuses, i int) {
		req, err := http.NewRequestWithContext(ctx, fmt.Sprintf("ABUSE%06d", i), e.base(i)+"/v1/vms", nil)
		if err != nil {
			s.Add("error")
			return
		}
		resp, err := e.http.Do(req)
		status := 0
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
		}
		s.Add(answer(status, err))
	}
	// A hundred first, so the series an unknown method falls into exist
	// before the first scrape.
	for i := 0; i < 100; i++ {
		send(ctx, &warm, 900000+i)
	}
	before, err := e.scrape(ctx)
	if err != nil {
		return err
	}
	const n, clients = 20000, 16
	next := make(chan int)
	err = e.set(ctx, r, n, clients, func(ctx context.Context) {
		go func() {
			defer close(next)
			for i := 0; i < n && ctx.Err() == nil; i++ {
				next <- i
			}
		}()
		parallel(clients, func(int) {
			for i := range next {
				send(ctx, &r.Statuses, i)
			}
		})
	})
	if err != nil {
		return err
	}
	s0 := e.snap(ctx)
	after, err := e.scrape(ctx)
	if err != nil {
		return err
	}
	scrape := e.snap(ctx).cpuSince(s0) / time.Duration(len(e.reps))
	r.Outcome = fmt.Sprintf("/metrics %s → %s; a scrape %s of CPU", kilobytes(before), kilobytes(after), seconds(scrape))
	r.OK = after <= before*105/100+16<<10 && scrape <= MaxCPUPerRequest
	return nil
}

// scrape reads every replica's /metrics whole and answers the largest
// exposition's size (decompressed).
func (e *env) scrape(ctx context.Context) (int64, error) {
	var largest int64
	for i := range e.reps {
		ctx, cancel := context.WithTimeout(ctx, e.cfg.Box)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base(i)+"/metrics", nil)
		if err != nil {
			cancel()
			return 0, err
		}
		resp, err := e.http.Do(req)
		if err != nil {
			cancel()
			return 0, fmt.Errorf("/metrics: %w", err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("/metrics: %d %v", resp.StatusCode, err)
		}
		largest = max(largest, n)
	}
	return largest, nil
}

func kilobytes(n int64) string {
	if n >= 10<<20 {
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0f KB", float64(n)/1e3)
}

// largestBatch posts a sample batch of 31.6 MB (finding 8's), halving it
// while it is refused for its size, while the victim restarts its VM:
// the batch accepted must be written well inside the request timeout,
// without holding the writer the victim's restart needs.
func largestBatch(ctx context.Context, e *env, r *Result) error {
	// Not a read-only key's request: the bound is the finding's, a batch
	// written well inside the 30 s request timeout.
	r.CPUBound = 10 * time.Second
	// The writer may be held "a fraction of a second at a time".
	r.VictimSlack = 500 * time.Millisecond
	// The first body is made before the measuring starts: making 31.6 MB
	// takes this process seconds.
	body := e.sampleBatch(31_600_000)
	var accepted bool
	var took time.Duration
	var last string
	// Its box is past the 30 s request timeout, so the server's own end
	// of a batch too large to write in time is seen.
	err := e.noisyWithin(ctx, max(e.cfg.Box, 35*time.Second), r, e.victimRestart(), func() int { return 1 }, 1, func(ctx context.Context) {
		for len(body) >= 64<<10 {
			start := time.Now()
			status, _, err := e.do(ctx, 0, http.MethodPost, "/api/v1/metrics/samples", MetricsKey, body)
			took, last = time.Since(start), answer(status, err)
			r.Statuses.Add(last)
			if status == http.StatusTooManyRequests {
				// The ingest rate limit is the deployment's, shared by
				// the replicas (burst 10 in all): the refusals while
				// halving spend it. Wait as a client told Retry-After
				// would, then send the same batch again.
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
			if status != http.StatusRequestEntityTooLarge && status != http.StatusBadRequest {
				accepted = err == nil && status/100 == 2
				return
			}
			body = e.sampleBatch(len(body) / 2)
		}
	})
	size := float64(len(body)) / 1e6
	switch {
	case accepted:
		r.Outcome = fmt.Sprintf("%.1f MB accepted in %s", size, took.Round(10*time.Millisecond))
	case last == "open":
		r.Outcome = fmt.Sprintf("%.1f MB not answered in %s", size, took.Round(10*time.Millisecond))
	default:
		r.Outcome = fmt.Sprintf("none accepted; the last, %.1f MB, answered %s in %s", size, last, took.Round(10*time.Millisecond))
	}
	r.OK = accepted && took <= 10*time.Second
	return err
}

// sampleBatch is an ingestion body of about size bytes: CPU and GPU
// series of every pod of the attacker, readings every 15 s after the
// fixture's epoch.
func (e *env) sampleBatch(size int) []byte {
	pods := e.fx.attackerPods
	const perSample = len(`["2026-01-01T00:00:15.000Z","12.25"],`)
	perSeries := max(size/perSample/(2*len(pods)), 1)
	stamps := make([]string, perSeries)
	for j := range stamps {
		stamps[j] = `["` + models.FormatTime(fleetgen.Epoch.Add(time.Duration(j+1)*fleetgen.SampleStep)) + `","` + strconv.Itoa(j%64) + `.25"]`
	}
	var b strings.Builder
	b.Grow(size + 1<<20)
	b.WriteString(`{"podMetrics":[`)
	for i, p := range pods {
		for s, series := range []string{`"type":"CPU_USAGE_CORES"`, `"type":"GPU_UTILIZATION_PER_GPU","labels":{"gpu":"0"}`} {
			if i+s > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"podId":%q,%s,"samples":[`, p.ID, series)
			b.WriteString(strings.Join(stamps, ","))
			b.WriteString("]}")
		}
	}
	b.WriteString("]}")
	return []byte(b.String())
}
