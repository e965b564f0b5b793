package main

import (
	"fmt"
	"strings"
	"time"

	"gpugraph/models"
)

// vmSpec is one OpenRelay VM or pod. Which GPUs it holds is spelled out by
// index, so the occupancy of each node can be read off this file.
type vmSpec struct {
	name, org, node, status, reason string
	pod                             bool
	gpus                            []int // indexes it holds (running, deploying, interrupted)
	count                           int   // GPUs it asks for when it holds none
	cpu, ram, disk                  int   // a VM's share of its host; a pod's container limits
	managedBy                       string
	tearingDown                     bool
	computeClass                    string        // pods only; "" is on_demand
	age                             time.Duration // anchor − createdAt
	interrupted                     time.Duration // anchor − interruptedAt
	model                           string        // for a VM placed on no node yet
}

// The offline node went dark three hours before the anchor; the VM on an
// online node was interrupted when its supervisor restarted.
const (
	offlineSince   = 3 * time.Hour
	supervisorLost = 40 * time.Minute
)

// restartScenarios are Acme's VMs and pods, one per outcome of the restart
// table (docs/contract.md#restart); the name says what POST /v1/vms/vm-<name>/restart does.
// demo/README.md lists them with the answer each gives.
func restartScenarios() []vmSpec {
	const day = 24 * time.Hour
	return []vmSpec{
		{name: "restart-ok-running", node: "dgx-h100-01", status: "running", gpus: []int{0, 1}, cpu: 28, ram: 448, disk: 2000, age: 9 * day},
		{name: "serving-readonly", node: "dgx-h100-01", status: "running", pod: true, gpus: []int{2, 3}, cpu: 24, ram: 384, managedBy: "serving", age: 6 * day},
		{name: "terminated", node: "dgx-h100-01", status: "terminated", reason: "user_terminated", count: 2, cpu: 28, ram: 448, disk: 2000, age: 20 * day},
		{name: "busy-failed-gpu", node: "dgx-h100-02", status: "running", gpus: []int{2, 3}, cpu: 28, ram: 512, disk: 2000, age: 4 * day},
		{name: "no-ip-capacity", node: "dgx-h100-03", status: "stopped", reason: "user_stopped", pod: true, count: 2, cpu: 24, ram: 384, age: 3 * day},
		{name: "no-infiniband", node: "dgx-h100-04", status: "stopped", reason: "user_stopped", pod: true, count: 1, cpu: 12, ram: 192, age: 11 * day},
		{name: "restart-ok-stopped", node: "dgx-h200-01", status: "stopped", reason: "user_stopped", count: 2, cpu: 28, ram: 512, disk: 2000, age: 5 * day},
		{name: "restart-ok-failed", node: "dgx-h200-01", status: "failed", reason: "vm_exited", count: 1, cpu: 14, ram: 256, disk: 1000, age: 2 * day},
		{name: "deploying", node: "dgx-h200-02", status: "deploying", reason: "user_restarted", gpus: []int{6}, cpu: 8, ram: 128, disk: 500, age: 1 * day},
		{name: "busy-host-resources", node: "dgx-h200-02", status: "stopped", reason: "user_stopped", count: 1, cpu: 16, ram: 512, disk: 1000, age: 8 * day},
		{name: "no-amd-grant", node: "mi300x-01", status: "stopped", reason: "user_stopped", pod: true, count: 2, cpu: 32, ram: 512, age: 6 * day},
		{name: "restart-ok-running-pod", node: "mi300x-02", status: "running", pod: true, gpus: []int{0, 1}, cpu: 32, ram: 512, age: 2 * day},
		{name: "restart-ok-pod-stopped", node: "mi300x-02", status: "stopped", reason: "user_stopped", pod: true, count: 2, cpu: 32, ram: 512, age: 7 * day},
		{name: "interrupted-resumes", node: "dgx-a100-01", status: "interrupted", reason: "node_lost", gpus: []int{5}, cpu: 16, ram: 256, disk: 1000, age: 3 * day, interrupted: supervisorLost},
		{name: "restart-ok-pod-failed", node: "dgx-a100-01", status: "failed", pod: true, count: 1, cpu: 16, ram: 256, age: 1 * day,
			reason: "container failed to start: the image's entrypoint exited with code 1 before its health check passed"},
		{name: "pod-stopping", node: "dgx-a100-01", status: "stopped", reason: "user_stopped", pod: true, count: 1, cpu: 16, ram: 256, tearingDown: true, age: 2 * day},
		{name: "busy-failed-gpu-pod", node: "dgx-a100-02", status: "running", pod: true, gpus: []int{4, 5}, cpu: 32, ram: 512, age: 5 * day},
		{name: "busy-no-free-gpus", node: "dgx-a100-02", status: "stopped", reason: "user_stopped", count: 2, cpu: 32, ram: 256, disk: 1000, age: 10 * day},
		{name: "interrupted", node: "dgx-a100-03", status: "interrupted", reason: "node_lost", gpus: []int{0, 1}, cpu: 32, ram: 512, disk: 2000, age: 4 * day, interrupted: offlineSince},
		{name: "node-offline", node: "dgx-a100-03", status: "stopped", reason: "user_stopped", count: 1, cpu: 16, ram: 256, disk: 1000, age: 12 * day},
		{name: "pod-node-offline", node: "dgx-a100-03", status: "stopped", reason: "user_stopped", pod: true, count: 1, cpu: 16, ram: 256, age: 6 * day},
		{name: "node-removed", node: "dgx-a100-04", status: "stopped", reason: "node_removed", count: 1, cpu: 16, ram: 256, disk: 1000, age: 15 * day},
		{name: "node-removed-no-capacity", node: "dgx-a100-04", status: "stopped", reason: "node_removed", count: 8, cpu: 64, ram: 1024, disk: 4000, age: 18 * day},
		{name: "pending", status: "pending", reason: "", model: "h100-80gb", count: 8, cpu: 112, ram: 1792, disk: 8000, age: 20 * time.Minute},
	}
}

// fillerVMs are the other organizations' workloads: they fill the nodes so
// GPU counts look like a busy fleet, and keep the scenarios' nodes exactly
// as full as their outcome needs. Those that keep a scenario's node full
// are Globex's, which is postpaid and never stopped by the metering:
// Initech is prepaid (credits) and its running workloads stop when its
// balance runs out, so it runs only where what they free changes no
// answer of demo/README.md or of the README: the MI300X nodes (mi300x-01's
// scenario is refused by its agent check first, mi300x-02's has room
// either way) and a GPU of dgx-a100-01 (whose restarts have room either
// way). TestPrepaidOrganizationRunsOut replays every answer after the stop.
func fillerVMs() []vmSpec {
	const day = 24 * time.Hour
	return []vmSpec{
		{name: "globex-sdxl-h100", org: "globex", node: "dgx-h100-01", status: "running", gpus: []int{4, 5, 6, 7}, cpu: 56, ram: 1024, disk: 8000, age: 13 * day},
		{name: "globex-spot-eval", org: "globex", node: "dgx-h100-01", status: "stopped", pod: true, count: 1, cpu: 12, ram: 192, age: 9 * day,
			reason: "spot_reclaimed_by_capacity_owner", computeClass: "interruptible"},
		{name: "globex-clip-large", org: "globex", node: "dgx-h100-02", status: "running", gpus: []int{0, 1}, cpu: 28, ram: 512, disk: 2000, age: 16 * day},
		{name: "acme-finetune-llama", org: "acme", node: "dgx-h100-02", status: "running", pod: true, gpus: []int{4, 5}, cpu: 24, ram: 384, age: 3 * day},
		{name: "acme-pretrain-shard", org: "acme", node: "dgx-h100-03", status: "running", pod: true, gpus: []int{0, 1, 2, 3}, cpu: 48, ram: 768, age: 5 * day},
		{name: "globex-detectron", org: "globex", node: "dgx-h100-03", status: "running", gpus: []int{4, 5}, cpu: 28, ram: 512, disk: 3000, age: 7 * day},
		{name: "globex-video-diffusion", org: "globex", node: "dgx-h100-04", status: "running", gpus: []int{0, 1, 2, 3}, cpu: 56, ram: 1024, disk: 6000, age: 21 * day},
		{name: "globex-whisper", org: "globex", node: "dgx-h100-04", status: "running", pod: true, gpus: []int{4, 5}, cpu: 24, ram: 384, age: 8 * day,
			computeClass: "reserved"},
		{name: "globex-sdxl-h200", org: "globex", node: "dgx-h200-01", status: "running", gpus: []int{0, 1, 2, 3}, cpu: 56, ram: 1024, disk: 8000, age: 6 * day},
		{name: "globex-vlm-eval", org: "globex", node: "dgx-h200-02", status: "running", gpus: []int{0, 1, 2, 3}, cpu: 56, ram: 1024, disk: 6000, age: 4 * day},
		{name: "globex-rag-index", org: "globex", node: "dgx-h200-02", status: "running", gpus: []int{4, 5}, cpu: 28, ram: 768, disk: 3000, age: 10 * day},
		{name: "initech-rocm-train", org: "initech", node: "mi300x-01", status: "running", gpus: []int{0, 1, 2, 3}, cpu: 96, ram: 1152, disk: 8000, age: 9 * day},
		{name: "globex-mi300x-infer", org: "globex", node: "mi300x-01", status: "running", gpus: []int{4, 5}, cpu: 48, ram: 576, disk: 2000, age: 5 * day},
		{name: "initech-esm2-pod", org: "initech", node: "mi300x-02", status: "running", pod: true, gpus: []int{2, 3, 4, 5}, cpu: 64, ram: 1024, age: 3 * day},
		{name: "globex-resnet", org: "globex", node: "dgx-a100-01", status: "running", gpus: []int{0, 1, 2, 3}, cpu: 64, ram: 1024, disk: 4000, age: 12 * day},
		{name: "initech-notebook", org: "initech", node: "dgx-a100-01", status: "running", pod: true, gpus: []int{4}, cpu: 16, ram: 128, age: 2 * day},
		{name: "globex-dlrm", org: "globex", node: "dgx-a100-02", status: "running", gpus: []int{0, 1, 2, 3}, cpu: 64, ram: 1024, disk: 4000, age: 14 * day},
		{name: "globex-vae", org: "globex", node: "dgx-a100-02", status: "running", gpus: []int{6, 7}, cpu: 32, ram: 512, disk: 2000, age: 6 * day},
		{name: "globex-old-train", org: "globex", node: "dgx-a100-02", status: "stopped", reason: "auto_stopped_insufficient_balance", count: 1, cpu: 16, ram: 256, disk: 1000, age: 30 * day},
		{name: "globex-vit-huge", org: "globex", node: "dgx-a100-03", status: "interrupted", reason: "node_lost", gpus: []int{2, 3, 4, 5}, cpu: 64, ram: 1024, disk: 4000, age: 5 * day, interrupted: offlineSince},
		{name: "globex-legacy-train", org: "globex", node: "dgx-a100-04", status: "terminated", reason: "user_terminated", count: 4, cpu: 64, ram: 1024, disk: 4000, age: 40 * day},
		{name: "initech-archive", org: "initech", node: "dgx-h100-01", status: "stopped", reason: "auto_stopped_account_suspended", count: 1, cpu: 14, ram: 256, disk: 1000, age: 25 * day},
	}
}

// Hourly list price per GPU, in cents.
var pricePerGPU = map[string]int{"h100-80gb": 249, "h200-141gb": 329, "a100-80gb": 139, "mi300x-192gb": 219}

// Container images of the pods; no registry host, so they read as the
// public images they name.
var podImages = map[string]string{
	"NVIDIA": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
	"AMD":    "rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.4.0",
}

func (g *gen) addVMs() {
	for _, s := range restartScenarios() {
		s.org = "acme"
		g.f.VMs = append(g.f.VMs, g.vm(s))
	}
	for _, s := range fillerVMs() {
		g.f.VMs = append(g.f.VMs, g.vm(s))
	}
}

func (g *gen) vm(s vmSpec) *VM {
	v := &VM{
		ID:             "vm-" + s.name,
		Name:           s.name,
		OrganizationID: orgID(s.org),
		Status:         s.status,
		StatusReason:   s.reason,
		CreatedAt:      msTime(ago(s.age + g.between(0, min(s.age/2, 12*time.Hour)))),
		GPUIDs:         []string{},
		CPUCores:       s.cpu,
		RAMGb:          s.ram,
		ManagedBy:      s.managedBy,
		TearingDown:    s.tearingDown,
		Tier:           "standard",
	}
	model := s.model
	if s.node != "" {
		n := g.nodes[s.node]
		v.NodeID = new(n.ID)
		model = g.nodeFacts[n].model
		for _, i := range s.gpus {
			v.GPUIDs = append(v.GPUIDs, n.GPUs[i].ID)
		}
		// A workload on a leaving node says when it will end (seed).
		if n.LeavingAt != nil && n.Status == "online" && s.status == "running" {
			v.StatusReason = "node leaving at " + string(*n.LeavingAt)
		}
	}
	m := g.models[model]
	v.GPUModelID, v.GPUModelName, v.GPUManufacturer = m.ID, m.Name, m.Manufacturer
	v.GPUCount = max(len(s.gpus), s.count)
	v.PricePerHourCents = pricePerGPU[m.ID] * v.GPUCount
	v.ResourceSize = fmt.Sprintf("%dx-%s", v.GPUCount, m.ID)
	v.ProvisioningStage = provisioningStage(s)
	if s.status != "pending" && s.status != "terminated" {
		v.EndpointURL = fmt.Sprintf("https://%s.%s.openrelay.inc", s.name, s.org)
	}
	if s.interrupted != 0 {
		v.InterruptedAt = new(msTime(ago(s.interrupted)))
	}
	if s.pod {
		v.CapabilityTier = models.TierPod
		v.ComputeClass = s.computeClass
		if v.ComputeClass == "" {
			v.ComputeClass = "on_demand"
		}
		v.ImageURL = podImages[m.Manufacturer]
		v.VolumeGb = 250 * v.GPUCount
	} else {
		v.DiskSizeGb = s.disk
	}
	if s.managedBy == "serving" {
		v.ServiceType = "inference"
		v.Public = true
		v.Tier = "enterprise"
		v.ImageURL = "vllm/vllm-openai:v0.6.4"
	}
	return v
}

// provisioningStage is the last stage of bringing it up that the row reached.
func provisioningStage(s vmSpec) string {
	switch {
	case s.status == "pending":
		return "queued"
	case s.status == "deploying" && s.pod:
		return "pulling_image"
	case s.status == "deploying":
		return "booting"
	case strings.HasPrefix(s.reason, "container failed to start"):
		// It failed as it booted: the stage a failed start keeps.
		return "booting"
	}
	return "ready"
}
