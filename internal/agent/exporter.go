package agent

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Workload is what runs on a GPU, for the exporter's pod, namespace and
// container labels.
type Workload struct{ Pod, Namespace, Container string }

// Assignments answers, at each scrape, the workloads on each GPU by UUID.
// It is the hook where the lifecycle's assignments plug in (the heartbeat
// answer's [{id, generation, gpus: [UUID]}]); nil leaves pod, namespace
// and container empty, as DCGM exporter does for a GPU no pod holds.
type Assignments func() map[string][]Workload

// The series the exporter serves, in DCGM exporter's names and labels
// (github.com/NVIDIA/dcgm-exporter, etc/default-counters.csv: GPU_UTIL in
// %, FB_USED in MiB, GPU_TEMP in C, POWER_USAGE in W, XID_ERRORS the value
// of the last XID; labels gpu, UUID, device, modelName, Hostname,
// container, namespace, pod), so the default PromQL mapping of gpugraph's
// Prometheus metrics source reads them as it reads DCGM exporter.
var exporterLabels = []string{"gpu", "UUID", "device", "modelName", "Hostname", "container", "namespace", "pod"}

var (
	descUtil  = prometheus.NewDesc("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", exporterLabels, nil)
	descFB    = prometheus.NewDesc("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", exporterLabels, nil)
	descTemp  = prometheus.NewDesc("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", exporterLabels, nil)
	descPower = prometheus.NewDesc("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", exporterLabels, nil)
	descXID   = prometheus.NewDesc("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", exporterLabels, nil)
)

// exporter reads NVML at each scrape.
type exporter struct {
	gpus        []*GPU
	health      *HealthState
	hostname    string
	assignments Assignments
	log         *slog.Logger
}

func (e *exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUtil, descFB, descTemp, descPower, descXID} {
		ch <- d
	}
}

func (e *exporter) Collect(ch chan<- prometheus.Metric) {
	var assigned map[string][]Workload
	if e.assignments != nil {
		assigned = e.assignments()
	}
	for _, g := range e.gpus {
		if g.device == nil {
			continue
		}
		ws := assigned[g.UUID]
		if len(ws) == 0 {
			ws = []Workload{{}}
		}
		for _, w := range ws {
			l := []string{strconv.Itoa(g.Index), g.UUID, "nvidia" + strconv.Itoa(g.Index), g.Name, e.hostname, w.Container, w.Namespace, w.Pod}
			if u, ok := read(g.device.GetUtilizationRates); ok {
				ch <- prometheus.MustNewConstMetric(descUtil, prometheus.GaugeValue, float64(u.Gpu), l...)
			}
			if m, ok := read(g.device.GetMemoryInfo); ok {
				ch <- prometheus.MustNewConstMetric(descFB, prometheus.GaugeValue, float64(m.Used/(1<<20)), l...)
			}
			if t, ok := read(func() (uint32, nvml.Return) { return g.device.GetTemperature(nvml.TEMPERATURE_GPU) }); ok {
				ch <- prometheus.MustNewConstMetric(descTemp, prometheus.GaugeValue, float64(t), l...)
			}
			if p, ok := read(g.device.GetPowerUsage); ok {
				ch <- prometheus.MustNewConstMetric(descPower, prometheus.GaugeValue, float64(p)/1000, l...)
			}
			ch <- prometheus.MustNewConstMetric(descXID, prometheus.GaugeValue, e.lastXID(g), l...)
		}
	}
}

// lastXID is the XID that failed the GPU (its "XID 79" reason), 0 when none.
func (e *exporter) lastXID(g *GPU) float64 {
	_, reason := e.health.Status(g.UUID)
	if x, ok := strings.CutPrefix(reason, "XID "); ok {
		if n, err := strconv.Atoi(strings.Fields(x + " ")[0]); err == nil {
			return float64(n)
		}
	}
	return 0
}

// read calls one NVML getter; a GPU that cannot answer (or a simulated one
// without the call) leaves that series out of the scrape.
func read[T any](f func() (T, nvml.Return)) (v T, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	v, ret := f()
	return v, ret == nvml.SUCCESS
}

// serveMetrics serves /metrics on addr until ctx ends.
func serveMetrics(ctx context.Context, addr, nodeName string, gpus []*GPU, health *HealthState, a Assignments, log *slog.Logger) error {
	host := nodeName
	if host == "" {
		host, _ = os.Hostname()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&exporter{gpus: gpus, health: health, hostname: host, assignments: a, log: log})
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("serving GPU metrics in DCGM exporter's names", "addr", ln.Addr().String())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	return nil
}
