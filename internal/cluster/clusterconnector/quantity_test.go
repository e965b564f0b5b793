package clusterconnector

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"gpugraph/internal/cluster/clusterbatch"
)

func TestQuantities(t *testing.T) {
	for in, want := range map[string]float64{"250m": 0.25, "2": 2, "1500m": 1.5, "0.1": 0.1, "1m": 0.001} {
		if got := Cores(resource.MustParse(in)); got != want {
			t.Errorf("Cores(%s) = %v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]string{"16Gi": "16Gi", "17179869184": "17179869184", "1536Mi": "1536Mi", "500M": "500M", "1G": "1G"} {
		if got, err := Amount(resource.MustParse(in)); err != nil || got != want {
			t.Errorf("Amount(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]float64{"0.5": 0.5, " 0.25 ": 0.25, "1": 1} {
		if got, err := ParseGPUFraction(in); err != nil || got != want {
			t.Errorf("ParseGPUFraction(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "1.5", "-0.5", "half", "", "NaN"} {
		if _, err := ParseGPUFraction(in); err == nil {
			t.Errorf("ParseGPUFraction(%q) accepted", in)
		}
	}
	for in, want := range map[string]string{"4000": "4000Mi", "4Gi": "4Gi", "512Mi": "512Mi"} {
		if got, err := ParseGPUMemory(in); err != nil || got != want {
			t.Errorf("ParseGPUMemory(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-5", "lots", "", "1E30"} {
		if _, err := ParseGPUMemory(in); err == nil {
			t.Errorf("ParseGPUMemory(%q) accepted", in)
		}
	}
	if n, err := ParseDevices("2"); n != 2 || err != nil {
		t.Errorf("ParseDevices(2) = %d, %v", n, err)
	}
	for _, in := range []string{"0", "1025", "1.5", "two"} {
		if _, err := ParseDevices(in); err == nil {
			t.Errorf("ParseDevices(%q) accepted", in)
		}
	}
}

// FuzzQuantities: whatever an annotation or a resource list holds, the
// parsers answer an error or a value the server takes (a quantity in
// Run:ai's pattern, a fraction in (0, 1]), never a panic.
func FuzzQuantities(f *testing.F) {
	for _, s := range []string{"0.5", "4000", "4Gi", "250m", "1e3", "-1", "", "0x10", "9999999999999999999Ei", ".5", "1.5Mi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseGPUFraction(s); err == nil && !(v > 0 && v <= 1) {
			t.Fatalf("fraction %q read as %v", s, v)
		}
		if q, err := ParseGPUMemory(s); err == nil {
			if err := clusterbatch.Quantity("gpuMemory", &q); err != nil {
				t.Fatalf("GPU memory %q read as %q, which the server refuses: %v", s, q, err)
			}
		}
		if n, err := ParseDevices(s); err == nil && (n < 1 || n > clusterbatch.MaxGPUs) {
			t.Fatalf("devices %q read as %d", s, n)
		}
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() < 0 {
			return
		}
		a, err := Amount(q)
		if err != nil {
			return
		}
		if err := clusterbatch.Quantity("cpuMemory", &a); err != nil {
			t.Fatalf("quantity %q written as %q, which the server refuses: %v", s, a, err)
		}
		if back := resource.MustParse(a); back.Cmp(q) != 0 {
			t.Fatalf("quantity %q written as %q reads back as %s", s, a, back.String())
		}
		if c := Cores(q); c < 0 {
			t.Fatalf("cores of %q: %v", s, c)
		}
	})
}
