package clusterconnector

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpugraph/internal/cluster/clusterbatch"
)

// Cores is a CPU quantity in cores, to the millicore ("250m" is 0.25), as
// Run:ai writes cpu requests and limits.
// One beyond what the server takes stays beyond it (and is refused by
// name) rather than wrapping around as a millicore count would.
func Cores(q resource.Quantity) float64 {
	if q.Cmp(maxExactCores) > 0 {
		return q.AsApproximateFloat64()
	}
	return float64(q.MilliValue()) / 1000
}

// maxExactCores is where a millicore count still fits an int64, and far
// beyond clusterbatch.MaxCores.
var maxExactCores = resource.MustParse("1T")

// Amount is a quantity as Run:ai writes memory and extended resources: the
// Kubernetes canonical form ("1536Mi", "2"), which Run:ai's pattern takes.
// Beyond an exabyte (no memory or device count comes near) it is refused:
// apimachinery's canonical form loses the exponent there ("1000E" is
// written "1").
func Amount(q resource.Quantity) (string, error) {
	if q.Cmp(maxAmount) > 0 || q.Sign() < 0 {
		return "", fmt.Errorf("%s is out of range: 0 to %s", q.String(), maxAmount.String())
	}
	return q.String(), nil
}

var maxAmount = resource.MustParse("1E")

// ParseGPUFraction reads the gpu-fraction annotation: the portion of one
// GPU a pod asks for, a decimal above 0 and at most 1 ("0.5").
func ParseGPUFraction(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f > 1 {
		return 0, fmt.Errorf("%q is no GPU fraction: a decimal above 0 and at most 1, 0.5 for half a GPU", s)
	}
	return f, nil
}

// ParseGPUMemory reads the gpu-memory annotation: the GPU memory a pod
// asks for, a whole number of MiB as Run:ai writes it ("4000"), or a
// Kubernetes quantity with its unit ("4Gi"). It answers it as a quantity.
func ParseGPUMemory(s string) (string, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 || n > 1<<30 {
			return "", fmt.Errorf("%q MiB of GPU memory is out of range: above 0 and at most %d", s, 1<<30)
		}
		return strconv.FormatInt(n, 10) + "Mi", nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() <= 0 || q.Cmp(maxGPUMemory) > 0 {
		return "", fmt.Errorf("%q is no amount of GPU memory: MiB (4000) or a quantity (4Gi), above 0", s)
	}
	return Amount(q)
}

// maxGPUMemory bounds a gpu-memory annotation: a PiB, far beyond any GPU.
var maxGPUMemory = resource.MustParse("1Pi")

// ParseDevices reads the gpu-fraction-num-devices annotation: on how many
// GPUs the fraction is taken, a whole number from 1 to MaxGPUs.
func ParseDevices(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > clusterbatch.MaxGPUs {
		return 0, fmt.Errorf("%q is no number of GPUs: a whole number from 1 to %d", s, clusterbatch.MaxGPUs)
	}
	return n, nil
}
