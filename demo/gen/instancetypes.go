package main

import "fmt"

// typeOffer is how one GPU model is sold: the name Lambda Cloud would give
// its types, the price of one GPU-hour and the server the GPUs are in.
type typeOffer struct {
	model, suffix, label string
	centsPerGPU          int
	shape                hostShape
}

// offers price each model per GPU-hour in the range of the public GPU
// clouds in 2025 (Lambda, RunPod, CoreWeave on demand), the same prices the
// demo's VMs carry.
var offers = []typeOffer{
	{model: "a100-80gb", suffix: "a100_80gb_sxm4", label: "A100 80GB SXM4", centsPerGPU: 139, shape: dgxA100},
	{model: "h100-80gb", suffix: "h100_sxm5", label: "H100 80GB SXM5", centsPerGPU: 249, shape: dgxH100},
	{model: "h200-141gb", suffix: "h200_sxm5", label: "H200 141GB SXM5", centsPerGPU: 329, shape: dgxH200},
	{model: "mi300x-192gb", suffix: "mi300x", label: "MI300X 192GB", centsPerGPU: 219, shape: mi300x},
}

// podVolumePerGPU is the /workspace a pod gets per GPU, as the demo's pods have.
const podVolumePerGPU = 250

// addInstanceTypes sells 1, 2, 4 and 8 GPUs of each model, each with the
// same share of its server's CPU cores, RAM and NVMe as of its GPUs, so
// that eight of the 1x type fill a server exactly as one 8x does.
func (g *gen) addInstanceTypes() {
	for _, o := range offers {
		for _, n := range []int{1, 2, 4, 8} {
			cpu, ram, disk := o.shape.cpu*n/gpusPerNode, o.shape.ram*n/gpusPerNode, o.shape.disk*n/gpusPerNode
			g.f.InstanceTypes = append(g.f.InstanceTypes, InstanceType{
				Name:       fmt.Sprintf("gpu_%dx_%s", n, o.suffix),
				GPUModelID: new(o.model), GPUCount: n,
				CPUCores: cpu, RAMGb: ram, DiskSizeGb: disk, VolumeGb: podVolumePerGPU * n,
				PricePerHourCents: o.centsPerGPU * n,
				Description: fmt.Sprintf("%dx %s, %d CPU cores, %d GB RAM, %s NVMe",
					n, o.label, cpu, ram, terabytes(disk)),
			})
		}
	}
}

// terabytes writes a disk size as a cloud's type list does: 3.84 TB.
func terabytes(gb int) string {
	s := fmt.Sprintf("%.2f", float64(gb)/1000)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s + " TB"
}
