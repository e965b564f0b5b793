package metering

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stats are the process's metering figures for /metrics: no label, so
// no organization or workload adds a series (decision 0039).
type stats struct {
	// through is where this process's last completed pass closed usage
	// up to (Unix nanoseconds), 0 before its first.
	through atomic.Int64
	// started is when the service was made (Unix nanoseconds): the lag
	// counts from it until a pass completes.
	started atomic.Int64
	records atomic.Int64
	stopped atomic.Int64
	failed  atomic.Int64
}

// passed records a completed pass's result.
func (s *Service) passed(res Result) {
	s.stats.through.Store(res.Through.UnixNano())
	s.stats.records.Add(int64(res.Records))
	s.stats.stopped.Add(res.Stopped)
}

// Lag is how far behind the clock this process's metering is: the time
// since its last completed pass's through (usage is closed up to there,
// so it includes the settle), or since the service was made before the
// first pass completes.
func (s *Service) Lag() time.Duration {
	at := s.stats.through.Load()
	if at == 0 {
		at = s.stats.started.Load()
	}
	return s.clock().Sub(time.Unix(0, at))
}

// Collectors are the metering's series of /metrics: the lag, the usage
// records closed, the workloads stopped when balances ran out, the
// passes that failed; none has a label.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gpugraph_metering_lag_seconds",
			Help: "Seconds since the usage this process's metering closed reaches (its last completed pass's through; since start before one completes)."},
			func() float64 { return s.Lag().Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_metering_records_closed_total",
			Help: "Usage records this process's metering passes closed."},
			func() float64 { return float64(s.stats.records.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_metering_workloads_stopped_total",
			Help: "Workloads this process's metering passes stopped because their organization's prepaid balance ran out."},
			func() float64 { return float64(s.stats.stopped.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gpugraph_metering_passes_failed_total",
			Help: "Metering passes of this process that failed (the next one closes what they left)."},
			func() float64 { return float64(s.stats.failed.Load()) }),
	}
}
