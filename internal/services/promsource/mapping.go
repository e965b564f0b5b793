package promsource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/template"

	"gpugraph/models"
)

// Mapping says what PromQL answers each Run:ai metric type. Every string
// is a text/template over Params; label values arrive escaped for a
// PromQL double-quoted string.
//
// An override file (--metrics-mapping) has the same JSON shape; what it
// sets replaces the default (namespace, selector, nimPresence, or a type's
// entry whole), the rest stays. A type mapped to "" is not read (it
// answers one empty series, as a type with no samples).
type Mapping struct {
	// Namespace derives the pod's Kubernetes namespace from Params
	// (Project, Cluster, …); its result is Params.Namespace.
	Namespace string `json:"namespace,omitempty"`
	// Selector is the label matchers of the pod's series (Params.Selector),
	// without braces.
	Selector string `json:"selector,omitempty"`
	// NIMPresence is an instant query, evaluated at the range's end, that
	// answers a non-empty vector when the pod serves NVIDIA NIM over the
	// range (Params.Window is the range plus the lookback).
	NIMPresence string `json:"nimPresence,omitempty"`
	// Types maps a Run:ai metric type to its query.
	Types map[string]Entry `json:"types,omitempty"`
}

// Entry is one type's query. Gauge types keep the listed labels of each
// series (the _PER_GPU types keep gpu, so one series per GPU); a
// histogram type's query answers one series per bucket with label le; a
// _PERCENTILES type's query is run once per quantile (Params.Quantile is
// 0.5, 0.9, 0.99).
type Entry struct {
	Query  string   `json:"query"`
	Labels []string `json:"labels,omitempty"`
}

// Params are what a template may use.
type Params struct {
	Pod       string // the pod's name
	Namespace string // from Mapping.Namespace
	Project   string // the pod's Run:ai project name ("" when unknown)
	Cluster   string // the pod's clusterId
	Node      string // the pod's nodeName ("" when never scheduled)
	Selector  string // from Mapping.Selector
	Quantile  string // _PERCENTILES only
	Window    string // NIMPresence only: a PromQL duration such as 3900s
}

// The defaults. Names and labels were checked against the exporters'
// sources, not written from memory:
//
//   - DCGM exporter (github.com/NVIDIA/dcgm-exporter): etc/default-counters.csv
//     (commit 00d6d34) lists DCGM_FI_DEV_GPU_UTIL (gauge, %), DCGM_FI_DEV_FB_USED
//     (gauge, MiB: multiplied by 1048576 here), DCGM_FI_DEV_GPU_TEMP,
//     DCGM_FI_DEV_POWER_USAGE, DCGM_FI_DEV_XID_ERRORS; etc/dcp-metrics-included.csv
//     (commit 084a245) lists DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_PROF_SM_ACTIVE,
//     DCGM_FI_PROF_SM_OCCUPANCY, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE,
//     DCGM_FI_PROF_PIPE_FP64/FP32/FP16_ACTIVE, DCGM_FI_PROF_DRAM_ACTIVE (ratios
//     0–1: multiplied by 100, as Run:ai's activity types are percentages) and
//     DCGM_FI_PROF_PCIE_TX/RX_BYTES (gauges, bytes per second).
//     DCGM_FI_PROF_NVLINK_TX/RX_BYTES are the same DCP family (bytes per
//     second, DCGM field ids 1011/1012) and are enabled in the same CSV when
//     wanted. Its series carry gpu (the index), UUID, device (nvidia0),
//     modelName, Hostname and, with Kubernetes pod mapping on, pod, namespace
//     and container, as its exposition shows
//     (DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-…",device="nvidia0",modelName="…",Hostname="…",container="",namespace="",pod=""}).
//   - cAdvisor (through the kubelet): container_cpu_usage_seconds_total
//     (counter of CPU seconds) and container_memory_working_set_bytes, with
//     labels namespace, pod, container; the pod-level series have
//     container="" and the pause container container="POD", both left out.
//     CPU cores are irate over 5m, as kube-prometheus's recording rule
//     node_namespace_pod_container:container_cpu_usage_seconds_total:sum_irate.
//   - NVIDIA NIM for LLMs (docs.nvidia.com/nim/large-language-models/latest/observability.html):
//     num_requests_running, num_requests_waiting, num_request_max,
//     request_success_total, request_failure_total, gpu_cache_usage_perc
//     (1 means 100 %), and the histograms time_to_first_token_seconds and
//     e2e_request_latency_seconds (their _bucket series, label le).
//
// GPU_SWAP_MEMORY_BYTES_PER_GPU has no DCGM or NVML counterpart and is not
// mapped. Percentiles are histogram_quantile over the cumulative buckets,
// as the built-in store computes them from stored buckets; an operator
// who wants windowed percentiles maps them to rate(…[5m]) instead.
var defaults = Mapping{
	Namespace:   `{{if .Project}}runai-{{.Project}}{{end}}`,
	Selector:    `{{if .Namespace}}namespace="{{.Namespace}}",{{end}}pod="{{.Pod}}"`,
	NIMPresence: `count(last_over_time({__name__=~"num_requests_running|num_requests_waiting|num_request_max|request_success_total|request_failure_total|gpu_cache_usage_perc|time_to_first_token_seconds_bucket|e2e_request_latency_seconds_bucket",{{.Selector}}}[{{.Window}}]))`,
	Types: map[string]Entry{
		"GPU_UTILIZATION_PER_GPU":        perGPU(`avg by (gpu) (DCGM_FI_DEV_GPU_UTIL{{"{"}}{{.Selector}}})`),
		"GPU_UTILIZATION":                {Query: `avg(avg by (gpu) (DCGM_FI_DEV_GPU_UTIL{{"{"}}{{.Selector}}}))`},
		"GPU_MEMORY_USAGE_BYTES_PER_GPU": perGPU(`avg by (gpu) (DCGM_FI_DEV_FB_USED{{"{"}}{{.Selector}}}) * 1048576`),
		"GPU_MEMORY_USAGE_BYTES":         {Query: `sum(avg by (gpu) (DCGM_FI_DEV_FB_USED{{"{"}}{{.Selector}}})) * 1048576`},
		"CPU_USAGE_CORES":                {Query: `sum(irate(container_cpu_usage_seconds_total{{"{"}}{{.Selector}},container!="",container!="POD"}[5m]))`},
		"CPU_MEMORY_USAGE_BYTES":         {Query: `sum(container_memory_working_set_bytes{{"{"}}{{.Selector}},container!="",container!="POD"})`},

		"GPU_GRAPHICS_ENGINE_ACTIVITY_PER_GPU":     perGPU(`avg by (gpu) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{{"{"}}{{.Selector}}}) * 100`),
		"GPU_SM_ACTIVITY_PER_GPU":                  perGPU(`avg by (gpu) (DCGM_FI_PROF_SM_ACTIVE{{"{"}}{{.Selector}}}) * 100`),
		"GPU_SM_OCCUPANCY_PER_GPU":                 perGPU(`avg by (gpu) (DCGM_FI_PROF_SM_OCCUPANCY{{"{"}}{{.Selector}}}) * 100`),
		"GPU_TENSOR_ACTIVITY_PER_GPU":              perGPU(`avg by (gpu) (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{"{"}}{{.Selector}}}) * 100`),
		"GPU_FP64_ENGINE_ACTIVITY_PER_GPU":         perGPU(`avg by (gpu) (DCGM_FI_PROF_PIPE_FP64_ACTIVE{{"{"}}{{.Selector}}}) * 100`),
		"GPU_FP32_ENGINE_ACTIVITY_PER_GPU":         perGPU(`avg by (gpu) (DCGM_FI_PROF_PIPE_FP32_ACTIVE{{"{"}}{{.Selector}}}) * 100`),
		"GPU_FP16_ENGINE_ACTIVITY_PER_GPU":         perGPU(`avg by (gpu) (DCGM_FI_PROF_PIPE_FP16_ACTIVE{{"{"}}{{.Selector}}}) * 100`),
		"GPU_MEMORY_BANDWIDTH_UTILIZATION_PER_GPU": perGPU(`avg by (gpu) (DCGM_FI_PROF_DRAM_ACTIVE{{"{"}}{{.Selector}}}) * 100`),
		"GPU_NVLINK_TRANSMITTED_BANDWIDTH_PER_GPU": perGPU(`avg by (gpu) (DCGM_FI_PROF_NVLINK_TX_BYTES{{"{"}}{{.Selector}}})`),
		"GPU_NVLINK_RECEIVED_BANDWIDTH_PER_GPU":    perGPU(`avg by (gpu) (DCGM_FI_PROF_NVLINK_RX_BYTES{{"{"}}{{.Selector}}})`),
		"GPU_PCIE_TRANSMITTED_BANDWIDTH_PER_GPU":   perGPU(`avg by (gpu) (DCGM_FI_PROF_PCIE_TX_BYTES{{"{"}}{{.Selector}}})`),
		"GPU_PCIE_RECEIVED_BANDWIDTH_PER_GPU":      perGPU(`avg by (gpu) (DCGM_FI_PROF_PCIE_RX_BYTES{{"{"}}{{.Selector}}})`),
		"NVLINK_BANDWIDTH_TOTAL_PER_GPU":           perGPU(`avg by (gpu) (DCGM_FI_PROF_NVLINK_TX_BYTES{{"{"}}{{.Selector}}}) + avg by (gpu) (DCGM_FI_PROF_NVLINK_RX_BYTES{{"{"}}{{.Selector}}})`),
		"NVLINK_BANDWIDTH_TOTAL":                   {Query: `sum(avg by (gpu) (DCGM_FI_PROF_NVLINK_TX_BYTES{{"{"}}{{.Selector}}}) + avg by (gpu) (DCGM_FI_PROF_NVLINK_RX_BYTES{{"{"}}{{.Selector}}}))`},

		"NIM_NUM_REQUESTS_RUNNING":  {Query: `sum(num_requests_running{{"{"}}{{.Selector}}})`},
		"NIM_NUM_REQUESTS_WAITING":  {Query: `sum(num_requests_waiting{{"{"}}{{.Selector}}})`},
		"NIM_NUM_REQUEST_MAX":       {Query: `sum(num_request_max{{"{"}}{{.Selector}}})`},
		"NIM_REQUEST_SUCCESS_TOTAL": {Query: `sum(request_success_total{{"{"}}{{.Selector}}})`},
		"NIM_REQUEST_FAILURE_TOTAL": {Query: `sum(request_failure_total{{"{"}}{{.Selector}}})`},
		"NIM_GPU_CACHE_USAGE_PERC":  {Query: `avg(gpu_cache_usage_perc{{"{"}}{{.Selector}}})`},

		"NIM_TIME_TO_FIRST_TOKEN_SECONDS":             {Query: `sum by (le) (time_to_first_token_seconds_bucket{{"{"}}{{.Selector}}})`},
		"NIM_E2E_REQUEST_LATENCY_SECONDS":             {Query: `sum by (le) (e2e_request_latency_seconds_bucket{{"{"}}{{.Selector}}})`},
		"NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES": {Query: `histogram_quantile({{.Quantile}}, sum by (le) (time_to_first_token_seconds_bucket{{"{"}}{{.Selector}}}))`},
		"NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES": {Query: `histogram_quantile({{.Quantile}}, sum by (le) (e2e_request_latency_seconds_bucket{{"{"}}{{.Selector}}}))`},
	},
}

func perGPU(q string) Entry { return Entry{Query: q, Labels: []string{"gpu"}} }

// DefaultMapping is the built-in mapping, checked.
func DefaultMapping() (*Mapping, error) {
	m := defaults
	m.Types = make(map[string]Entry, len(defaults.Types))
	for k, v := range defaults.Types {
		m.Types[k] = v
	}
	return &m, m.check()
}

// LoadMapping reads an override file over the defaults; an empty path is
// the defaults.
func LoadMapping(path string) (*Mapping, error) {
	m, err := DefaultMapping()
	if err != nil || path == "" {
		return m, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("metrics mapping: %w", err)
	}
	var o Mapping
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("metrics mapping %s: %w", path, err)
	}
	if o.Namespace != "" {
		m.Namespace = o.Namespace
	}
	if o.Selector != "" {
		m.Selector = o.Selector
	}
	if o.NIMPresence != "" {
		m.NIMPresence = o.NIMPresence
	}
	for k, v := range o.Types {
		if !models.IsMetricType(k) {
			return nil, fmt.Errorf("metrics mapping %s: %q is not a Run:ai pod metric type", path, k)
		}
		m.Types[k] = v
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("metrics mapping %s: %w", path, err)
	}
	return m, nil
}

// check parses every template once, so a bad file stops the server at start.
func (m *Mapping) check() error {
	for name, t := range map[string]string{"namespace": m.Namespace, "selector": m.Selector, "nimPresence": m.NIMPresence} {
		if _, err := template.New(name).Option("missingkey=error").Parse(t); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	keys := make([]string, 0, len(m.Types))
	for k := range m.Types {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, err := template.New(k).Parse(m.Types[k].Query); err != nil {
			return fmt.Errorf("types.%s: %w", k, err)
		}
	}
	return nil
}

// render fills a template.
func render(name, text string, p Params) (string, error) {
	t, err := template.New(name).Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, p); err != nil {
		return "", fmt.Errorf("metrics mapping %s: %w", name, err)
	}
	return b.String(), nil
}

// escape makes s safe inside a PromQL double-quoted string.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
