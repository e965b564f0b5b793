package models

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestInstanceTypeProblem(t *testing.T) {
	h100 := "h100-80gb"
	empty := ""
	for _, c := range []struct {
		t    InstanceType
		want string
	}{
		{InstanceType{Name: "gpu_8x_h100_sxm5", GPUModelID: &h100, GPUCount: 8, CPUCores: 112}, ""},
		{InstanceType{Name: "cpu_4c", CPUCores: 4}, ""},
		{InstanceType{Name: "cpu_4c", GPUModelID: &empty, CPUCores: 4}, ""}, // an empty model is none
		{InstanceType{Name: strings.Repeat("a", 65), CPUCores: 1}, `name "` + strings.Repeat("a", 65) + `" is not 1 to 64 lowercase letters, digits or underscores (e.g. gpu_8x_h100_sxm5)`},
		{InstanceType{Name: "gpu-1x", CPUCores: 1}, `name "gpu-1x" is not 1 to 64 lowercase letters, digits or underscores (e.g. gpu_8x_h100_sxm5)`},
		{InstanceType{CPUCores: 1}, "name is missing"},
		{InstanceType{Name: "x", CPUCores: 1, DiskSizeGb: -1}, "diskSizeGb must not be negative, got -1"},
		{InstanceType{Name: "x", CPUCores: 1, VolumeGb: 1 << 31}, "volumeGb must be at most 2147483647, got 2147483648"},
		{InstanceType{Name: "x", GPUModelID: &h100, CPUCores: 1}, `gpuCount must be at least 1 for a type of gpuModelId "h100-80gb" (a CPU-only type has no gpuModelId)`},
		{InstanceType{Name: "x", CPUCores: 1, Description: "a\x00b"}, "description and gpuModelId must not contain a NUL character"},
		{InstanceType{Name: "x", CPUCores: 1, Description: strings.Repeat("d", 1025)}, "description is longer than 1024 bytes"},
	} {
		if got := c.t.Problem(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}

// Whatever a body holds, Problem answers, and a type it passes has a valid
// name and numbers that fit an integer column.
func FuzzInstanceTypeProblem(f *testing.F) {
	f.Add(`{"name":"gpu_1x_h100_sxm5","gpuModelId":"h100-80gb","gpuCount":1,"cpuCores":14}`)
	f.Add(`{"name":"cpu","cpuCores":-3}`)
	f.Add(`{"name":"","gpuModelId":"","description":"\u0000"}`)
	f.Fuzz(func(t *testing.T, body string) {
		var it InstanceType
		if json.Unmarshal([]byte(body), &it) != nil {
			return
		}
		if it.Problem() != "" {
			return
		}
		if !ValidInstanceTypeName(it.Name) {
			t.Fatalf("passed a bad name %q", it.Name)
		}
		for _, n := range []int{it.GPUCount, it.CPUCores, it.RAMGb, it.DiskSizeGb, it.VolumeGb, it.PricePerHourCents} {
			if n < 0 || n > 1<<31-1 {
				t.Fatalf("passed %d", n)
			}
		}
		if (it.GPUModelID == nil) != (it.GPUCount == 0) {
			t.Fatalf("passed model %v with %d GPUs", it.GPUModelID, it.GPUCount)
		}
	})
}
