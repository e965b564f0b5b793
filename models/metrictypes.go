package models

import "strings"

// MetricKind says how a pod metric type is stored and answered.
type MetricKind int

const (
	// Gauge types are stored as samples and answered in measurements[].
	Gauge MetricKind = iota
	// Histogram types are stored as cumulative buckets and answered in histogram[].
	Histogram
	// Percentiles types are computed from their histogram type, never stored.
	Percentiles
)

// MetricTypes is Run:ai's PodMetricType enum, in its order.
var MetricTypes = []string{
	"GPU_UTILIZATION_PER_GPU", "GPU_UTILIZATION",
	"GPU_MEMORY_USAGE_BYTES_PER_GPU", "GPU_MEMORY_USAGE_BYTES",
	"CPU_USAGE_CORES", "CPU_MEMORY_USAGE_BYTES",
	"GPU_GRAPHICS_ENGINE_ACTIVITY_PER_GPU", "GPU_SM_ACTIVITY_PER_GPU", "GPU_SM_OCCUPANCY_PER_GPU",
	"GPU_TENSOR_ACTIVITY_PER_GPU", "GPU_FP64_ENGINE_ACTIVITY_PER_GPU", "GPU_FP32_ENGINE_ACTIVITY_PER_GPU",
	"GPU_FP16_ENGINE_ACTIVITY_PER_GPU", "GPU_MEMORY_BANDWIDTH_UTILIZATION_PER_GPU",
	"GPU_NVLINK_TRANSMITTED_BANDWIDTH_PER_GPU", "GPU_NVLINK_RECEIVED_BANDWIDTH_PER_GPU",
	"GPU_PCIE_TRANSMITTED_BANDWIDTH_PER_GPU", "GPU_PCIE_RECEIVED_BANDWIDTH_PER_GPU",
	"GPU_SWAP_MEMORY_BYTES_PER_GPU",
	"NIM_NUM_REQUESTS_RUNNING", "NIM_NUM_REQUESTS_WAITING", "NIM_NUM_REQUEST_MAX",
	"NIM_REQUEST_SUCCESS_TOTAL", "NIM_REQUEST_FAILURE_TOTAL", "NIM_GPU_CACHE_USAGE_PERC",
	"NIM_TIME_TO_FIRST_TOKEN_SECONDS", "NIM_E2E_REQUEST_LATENCY_SECONDS",
	"NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES", "NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES",
	"NVLINK_BANDWIDTH_TOTAL", "NVLINK_BANDWIDTH_TOTAL_PER_GPU",
}

// IsMetricType reports whether t is in Run:ai's enum.
func IsMetricType(t string) bool { return oneOf(t, MetricTypes) }

// KindOf says how type t is stored and answered.
func KindOf(t string) MetricKind {
	switch {
	case strings.HasSuffix(t, "_PERCENTILES"):
		return Percentiles
	case t == "NIM_TIME_TO_FIRST_TOKEN_SECONDS", t == "NIM_E2E_REQUEST_LATENCY_SECONDS":
		return Histogram
	default:
		return Gauge
	}
}

// IsNIM reports whether t exists only for pods that serve NVIDIA NIM.
func IsNIM(t string) bool { return strings.HasPrefix(t, "NIM_") }
