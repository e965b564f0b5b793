package compute_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// createFleet: two online H100 nodes of cluster c1 (pools p1, p2), an
// offline A100 node of cluster c2, B200 in the catalog on no node; org-a
// (InfiniBand) and org-b with an operator key each, org-a a reader too.
const createFleet = `{
 "gpuModels": [{"id": "h100", "name": "NVIDIA H100", "manufacturer": "NVIDIA", "memoryGb": 80},
               {"id": "a100", "name": "NVIDIA A100", "manufacturer": "NVIDIA", "memoryGb": 80},
               {"id": "b200", "name": "NVIDIA B200", "manufacturer": "NVIDIA", "memoryGb": 192}],
 "instanceTypes": [
  {"name": "gpu_1x_h100", "gpuModelId": "h100", "gpuCount": 1, "cpuCores": 16, "ramGb": 128, "diskSizeGb": 500, "volumeGb": 250, "pricePerHourCents": 260},
  {"name": "gpu_2x_h100", "gpuModelId": "h100", "gpuCount": 2, "cpuCores": 32, "ramGb": 256, "diskSizeGb": 1000, "volumeGb": 500, "pricePerHourCents": 500},
  {"name": "gpu_2x_h100_cheap", "gpuModelId": "h100", "gpuCount": 2, "cpuCores": 32, "ramGb": 256, "diskSizeGb": 1000, "volumeGb": 500, "pricePerHourCents": 480},
  {"name": "cpu_only", "cpuCores": 8, "ramGb": 32, "diskSizeGb": 100, "pricePerHourCents": 20}],
 "fabrics": [{"id": "ib-1", "ipCapacity": 1}],
 "nodes": [
  {"id": "n1", "name": "node-1", "clusterId": "c1", "nodePool": "p1", "status": "online", "agentVersion": "2.6.1", "fabricId": "ib-1",
   "cpuCores": 64, "ramGb": 512, "diskGb": 4000, "gpus": [
    {"id": "n1-g0", "index": 0, "uuid": "GPU-n1-0", "address": "0000:18:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "n1-g1", "index": 1, "uuid": "GPU-n1-1", "address": "0000:2A:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "n1-g2", "index": 2, "uuid": "GPU-n1-2", "address": "0000:3A:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "n1-g3", "index": 3, "uuid": "GPU-n1-3", "address": "0000:5D:00.0", "modelId": "h100", "health": "healthy"}]},
  {"id": "n2", "name": "node-2", "clusterId": "c1", "nodePool": "p2", "status": "online", "agentVersion": "2.6.1",
   "cpuCores": 64, "ramGb": 512, "diskGb": 4000, "gpus": [
    {"id": "n2-g0", "index": 0, "uuid": "GPU-n2-0", "address": "0000:18:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "n2-g1", "index": 1, "uuid": "GPU-n2-1", "address": "0000:2A:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "n2-g2", "index": 2, "uuid": "GPU-n2-2", "address": "0000:3A:00.0", "modelId": "h100", "health": "healthy"},
    {"id": "n2-g3", "index": 3, "uuid": "GPU-n2-3", "address": "0000:5D:00.0", "modelId": "h100", "health": "failed", "failedReason": "XID 79"}]},
  {"id": "n3", "name": "node-3", "clusterId": "c2", "nodePool": "p1", "status": "offline", "agentVersion": "2.6.1",
   "cpuCores": 64, "ramGb": 512, "diskGb": 4000, "gpus": [
    {"id": "n3-g0", "index": 0, "uuid": "GPU-n3-0", "address": "0000:18:00.0", "modelId": "a100", "health": "healthy"},
    {"id": "n3-g1", "index": 1, "uuid": "GPU-n3-1", "address": "0000:2A:00.0", "modelId": "a100", "health": "healthy"}]}],
 "organizations": [{"id": "org-a", "name": "A", "tenantId": 1, "infinibandEnabled": true}, {"id": "org-b", "name": "B", "tenantId": 2}],
 "apiKeys": [{"token": "a-op", "organizationId": "org-a", "permissions": ["compute.operate"]},
             {"token": "a-read", "organizationId": "org-a", "permissions": ["compute.read"]},
             {"token": "b-op", "organizationId": "org-b", "permissions": ["compute.operate"]}]
}`

// vmReq is a plain VM of n H100 GPUs with a small host share.
func vmReq(name string, n int) compute.CreateRequest {
	return compute.CreateRequest{Name: name, GPUModelID: new("h100"), GPUCount: new(n),
		CPUCores: new(8), RAMGb: new(64), DiskSizeGb: new(100)}
}

func eachFleet(t *testing.T, fn func(t *testing.T, st *store.Store, cs *compute.Service)) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		datasettest.Load(t, st, createFleet)
		fn(t, st, compute.New(st))
	})
}

func events(t *testing.T, cs *compute.Service, st *store.Store, id string) []*models.VMEvent {
	t.Helper()
	evs, _, err := cs.EventPage(context.Background(), datasettest.Caller(t, st, "a-read"), id, compute.EventQuery{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func gpuIDs(res *compute.Result) []string {
	var out []string
	for _, g := range res.GPUs {
		out = append(out, g.ID)
	}
	return out
}

func TestCreatePlacesAcrossTheFleet(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		op := datasettest.Caller(t, st, "a-op")
		res, err := cs.Create(ctx, op, vmReq("train-1", 2))
		if err != nil {
			t.Fatal(err)
		}
		vm := res.VM
		// MostAllocated: node-2's failed GPU makes it the fuller one.
		if vm.Status != models.VMDeploying || vm.NodeID == nil || *vm.NodeID != "n2" || vm.StatusReason != "" {
			t.Fatalf("placed %s on %v (%q), want deploying on n2", vm.Status, vm.NodeID, vm.StatusReason)
		}
		if got := gpuIDs(res); len(got) != 2 || got[0] != "n2-g0" || got[1] != "n2-g1" {
			t.Errorf("gpus %v, want n2-g0 n2-g1", got)
		}
		if vm.OrganizationID != "org-a" || vm.ComputeClass != "on_demand" || vm.CreatedAt == nil || vm.ResourceSize != "2x-h100" ||
			vm.ProvisioningStage != "scheduled" || vm.Tier != "standard" || vm.CPUCores != 8 || vm.RAMGb != 64 || vm.DiskSizeGb != 100 ||
			res.Model.Manufacturer != "NVIDIA" {
			t.Errorf("filled fields: %+v", vm)
		}
		evs := events(t, cs, st, vm.ID)
		if len(evs) != 1 || evs[0].Transition != models.CreatePlaced || evs[0].From != models.VMPending ||
			evs[0].To != models.VMDeploying || evs[0].ActorKind != models.ActorUser {
			t.Errorf("events %+v, want one create-placed pending → deploying by the user", evs)
		}
		// 3 no longer fit on node-2 (1 healthy free): node-1.
		res, err = cs.Create(ctx, op, vmReq("train-2", 3))
		if err != nil {
			t.Fatal(err)
		}
		if *res.VM.NodeID != "n1" || len(res.GPUs) != 3 || res.GPUs[0].ID != "n1-g0" {
			t.Errorf("second create on %s with %v, want n1 with n1-g0..2", *res.VM.NodeID, gpuIDs(res))
		}
		// The node pool keeps it within: p2 is node-2, with one left.
		r := vmReq("in-p2", 1)
		r.NodePool, r.Queue = new("p2"), new(false)
		if res, err = cs.Create(ctx, op, r); err != nil || *res.VM.NodeID != "n2" || res.GPUs[0].ID != "n2-g2" {
			t.Fatalf("in p2: %+v %v", res, err)
		}
		_, err = cs.Create(ctx, op, r)
		datasettest.WantError(t, err, http.StatusServiceUnavailable, "VM_NO_CAPACITY",
			"0/1 nodes can take it: 1 too few free NVIDIA H100 GPUs")
	})
}

func TestCreateQueuesWhenNothingFitsNow(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		op := datasettest.Caller(t, st, "a-op")
		for _, n := range []int{4, 3} {
			if _, err := cs.Create(ctx, op, vmReq("full", n)); err != nil {
				t.Fatal(err)
			}
		}
		const summary = "0/3 nodes can take it: 2 too few free NVIDIA H100 GPUs, 1 offline"
		r := vmReq("waits", 2)
		r.Queue = new(false)
		_, err := cs.Create(ctx, op, r)
		datasettest.WantError(t, err, http.StatusServiceUnavailable, "VM_NO_CAPACITY", summary)
		if e, _ := asAPI(err); e.RetryAfter != 60 {
			t.Errorf("Retry-After %d, want 60", e.RetryAfter)
		}
		vms, total, err := cs.List(ctx, datasettest.Caller(t, st, "a-read"), compute.ListQuery{Count: true})
		if _ = vms; err != nil || total != 2 {
			t.Fatalf("a refused create left a row: %d rows, %v", total, err)
		}

		res, err := cs.Create(ctx, op, vmReq("waits", 2))
		if err != nil {
			t.Fatal(err)
		}
		vm := res.VM
		if vm.Status != models.VMPending || vm.StatusReason != summary || vm.NodeID != nil || len(res.GPUs) != 0 ||
			vm.ProvisioningStage != "queued" {
			t.Fatalf("queued %s %q on %v holding %d, want pending with the summary", vm.Status, vm.StatusReason, vm.NodeID, len(res.GPUs))
		}
		evs := events(t, cs, st, vm.ID)
		if len(evs) != 1 || evs[0].Transition != models.CreateQueued || evs[0].From != models.VMPending ||
			evs[0].To != models.VMPending || evs[0].Reason != summary {
			t.Errorf("events %+v, want one create-queued", evs)
		}
		pos, err := cs.QueuePosition(ctx, datasettest.Caller(t, st, "a-read"), vm)
		if err != nil || pos == nil || *pos != 1 {
			t.Errorf("queue position %v, %v; want 1", pos, err)
		}
		// A pending VM reads like any VM, and is terminated (its cancel).
		got, err := cs.Get(ctx, datasettest.Caller(t, st, "a-read"), vm.ID)
		if err != nil || got.VM.Status != models.VMPending {
			t.Fatalf("get: %v %v", got, err)
		}
		_, err = cs.Stop(ctx, op, vm.ID)
		datasettest.WantError(t, err, http.StatusConflict, "VM_NOT_RUNNING", "")
		_, err = cs.Restart(ctx, op, vm.ID)
		datasettest.WantError(t, err, http.StatusConflict, "VM_NOT_READY", "")
		end, err := cs.Terminate(ctx, op, vm.ID)
		if err != nil || end.VM.Status != models.VMTerminated || end.VM.StatusReason != models.ReasonUserTerminated {
			t.Fatalf("terminate a pending VM: %+v %v", end, err)
		}
		if pos, _ := cs.QueuePosition(ctx, datasettest.Caller(t, st, "a-read"), end.VM); pos != nil {
			t.Errorf("a terminated VM has queue position %d", *pos)
		}
	})
}

func TestCreateRefusesWhatNoNodeCouldEverHold(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		op := datasettest.Caller(t, st, "a-op")
		big := vmReq("big", 1)
		big.CPUCores = new(65)
		inC2 := vmReq("c2", 1)
		inC2.ClusterID = new("c2")
		b200 := vmReq("b200", 1)
		b200.GPUModelID = new("b200")
		for _, c := range []struct {
			req  compute.CreateRequest
			want string
		}{
			{vmReq("eight", 5), "no node of the fleet has 5 NVIDIA H100 GPUs: the most one node has is 4"},
			{b200, "no node of the fleet has NVIDIA B200 GPUs"},
			{inC2, "no node of cluster c2 has NVIDIA H100 GPUs"},
			{big, "no node of the fleet with 1 NVIDIA H100 GPU has 65 CPU cores, 64 GB of RAM and 100 GB of disk in all: the largest has 64, 512 GB and 4000 GB"},
		} {
			_, err := cs.Create(ctx, op, c.req)
			datasettest.WantError(t, err, http.StatusConflict, "UNSCHEDULABLE", c.want)
		}
		// An offline node may come back: two A100 GPUs queue, never refused.
		a := vmReq("a100", 2)
		a.GPUModelID = new("a100")
		res, err := cs.Create(ctx, op, a)
		if err != nil || res.VM.Status != models.VMPending || res.VM.StatusReason != "0/3 nodes can take it: 2 too few free NVIDIA A100 GPUs, 1 offline" {
			t.Fatalf("a100 on an offline node: %+v %v", res, err)
		}
	})
}

func TestCreateRefusesBadInput(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		op := datasettest.Caller(t, st, "a-op")
		pod := func(f func(r *compute.CreateRequest)) compute.CreateRequest {
			r := compute.CreateRequest{Name: "p", CapabilityTier: new("pod"), GPUModelID: new("h100"), GPUCount: new(1),
				ImageURL: new("nvcr.io/nvidia/pytorch:24.05-py3"), VolumeGb: new(100)}
			f(&r)
			return r
		}
		vm := func(f func(r *compute.CreateRequest)) compute.CreateRequest {
			r := vmReq("v", 1)
			f(&r)
			return r
		}
		for _, c := range []struct {
			req  compute.CreateRequest
			want string
		}{
			{vm(func(r *compute.CreateRequest) { r.Name = "" }), "name is required"},
			{vm(func(r *compute.CreateRequest) { r.Name = "-x" }), `name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, got "-x"`},
			{vm(func(r *compute.CreateRequest) { r.CapabilityTier = new("gpu") }), `capabilityTier must be "pod" (a pod) or absent (a VM), got "gpu"`},
			{vm(func(r *compute.CreateRequest) { r.GPUModelID = nil }), "gpuModelId is required (or instanceType): a model of the catalog (gpuModels)"},
			{vm(func(r *compute.CreateRequest) { r.GPUCount = nil }), "gpuCount is required (1 to 64)"},
			{vm(func(r *compute.CreateRequest) { r.GPUCount = new(0) }), "gpuCount must be between 1 and 64, got 0"},
			{vm(func(r *compute.CreateRequest) { r.CPUCores = nil }), "cpuCores is required (1 to 4096)"},
			{vm(func(r *compute.CreateRequest) { r.RAMGb = new(-1) }), "ramGb must be between 1 and 65536, got -1"},
			{vm(func(r *compute.CreateRequest) { r.DiskSizeGb = nil }), "diskSizeGb is required (1 to 1048576)"},
			{vm(func(r *compute.CreateRequest) { r.VolumeGb = new(10) }), `volumeGb is a pod's /workspace volume (capabilityTier "pod"); a VM's disk is diskSizeGb`},
			{vm(func(r *compute.CreateRequest) { r.ClusterID = new("") }), "clusterId is empty: leave it out to place anywhere"},
			{vm(func(r *compute.CreateRequest) { r.Priority = new(1001) }), "priority must be between 0 and 1000, got 1001"},
			{pod(func(r *compute.CreateRequest) { r.ImageURL = nil }), "imageUrl is required for a pod: the container image it runs"},
			{pod(func(r *compute.CreateRequest) { r.VolumeGb = nil }), "volumeGb is required (1 to 1048576)"},
		} {
			_, err := cs.Create(ctx, op, c.req)
			datasettest.WantError(t, err, http.StatusBadRequest, "BAD_REQUEST", c.want)
		}
		for _, c := range []struct {
			req        compute.CreateRequest
			code, want string
		}{
			{vm(func(r *compute.CreateRequest) { r.GPUModelID = new("h900") }), "GPU_MODEL_NOT_FOUND", `there is no GPU model "h900" in the catalog`},
			{vm(func(r *compute.CreateRequest) { r.ClusterID = new("c9") }), "CLUSTER_NOT_FOUND", `there is no cluster "c9"`},
			{vm(func(r *compute.CreateRequest) { r.ClusterID, r.NodePool = new("c2"), new("p2") }), "NODE_POOL_NOT_FOUND", `cluster c2 has no node pool "p2"`},
		} {
			_, err := cs.Create(ctx, op, c.req)
			datasettest.WantError(t, err, http.StatusNotFound, c.code, c.want)
		}
		_, err := cs.Create(ctx, datasettest.Caller(t, st, "a-read"), vmReq("v", 1))
		datasettest.WantError(t, err, http.StatusForbidden, "FORBIDDEN", "")
		// A pod holds none of its node's host share, and takes the
		// fabric's one address for its InfiniBand-enabled organization.
		res, err := cs.Create(ctx, op, pod(func(r *compute.CreateRequest) { r.ClusterID, r.NodePool = new("c1"), new("p1") }))
		if err != nil || res.VM.Status != models.VMDeploying || *res.VM.NodeID != "n1" || res.VM.VolumeGb != 100 || !res.VM.IsPod() {
			t.Fatalf("pod: %+v %v", res, err)
		}
		r := pod(func(r *compute.CreateRequest) { r.NodePool, r.Queue = new("p1"), new(false) })
		_, err = cs.Create(ctx, op, r)
		datasettest.WantError(t, err, http.StatusServiceUnavailable, "VM_NO_CAPACITY", "0/2 nodes can take it: 1 no free InfiniBand address, 1 offline")
	})
}

func asAPI(err error) (*apierr.Error, bool) { return apierr.As(err) }

// A type is its parts and its price; parts are priced from the catalog.
func TestCreateFromTheCatalog(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		op := datasettest.Caller(t, st, "a-op")
		res, err := cs.Create(ctx, op, compute.CreateRequest{Name: "typed", InstanceType: new("gpu_2x_h100")})
		if err != nil {
			t.Fatal(err)
		}
		vm := res.VM
		if vm.GPUCount != 2 || *vm.GPUModelID != "h100" || vm.CPUCores != 32 || vm.RAMGb != 256 || vm.DiskSizeGb != 1000 ||
			vm.PricePerHourCents != 500 || vm.Status != models.VMDeploying {
			t.Errorf("typed: %+v", vm)
		}
		pod, err := cs.Create(ctx, op, compute.CreateRequest{Name: "pod", InstanceType: new("gpu_1x_h100"),
			CapabilityTier: new("pod"), ImageURL: new("img")})
		if err != nil || pod.VM.VolumeGb != 250 || pod.VM.CPUCores != 0 || pod.VM.PricePerHourCents != 260 {
			t.Fatalf("typed pod: %+v %v", pod, err)
		}
		for n, want := range map[int]int{2: 480, 1: 260, 3: 720} {
			res, err := cs.Create(ctx, op, vmReq(fmt.Sprintf("parts-%d", n), n))
			if err != nil || res.VM.PricePerHourCents != want {
				t.Errorf("%d parts: price %d (%v), want %d", n, res.VM.PricePerHourCents, err, want)
			}
		}
		_, err = cs.Create(ctx, op, compute.CreateRequest{Name: "x", InstanceType: new("gpu_9x")})
		datasettest.WantError(t, err, http.StatusNotFound, "INSTANCE_TYPE_NOT_FOUND", `there is no instance type "gpu_9x" in the catalog`)
		_, err = cs.Create(ctx, op, compute.CreateRequest{Name: "x", InstanceType: new("gpu_2x_h100"), GPUCount: new(4)})
		datasettest.WantError(t, err, http.StatusBadRequest, "BAD_REQUEST",
			`gpuCount is given with instanceType "gpu_2x_h100", which sets it: give one or the other`)
		_, err = cs.Create(ctx, op, compute.CreateRequest{Name: "x", InstanceType: new("cpu_only")})
		datasettest.WantError(t, err, http.StatusBadRequest, "BAD_REQUEST",
			`instanceType "cpu_only" is CPU-only; creating CPU-only VMs is not offered`)
	})
}

// A quota counts what is held and what waits: a create past it is 409,
// a pending VM counts.
func TestCreateHonoursTheQuota(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		if _, err := st.PutGPUQuota(ctx, models.GPUQuota{OrganizationID: "org-a", GPUModelID: "h100", Limit: 8, UpdatedAt: store.Now()}); err != nil {
			t.Fatal(err)
		}
		op := datasettest.Caller(t, st, "a-op")
		for _, n := range []int{4, 3} {
			if _, err := cs.Create(ctx, op, vmReq("held", n)); err != nil {
				t.Fatal(err)
			}
		}
		// Nothing is free: it queues, and counts.
		res, err := cs.Create(ctx, op, vmReq("waits", 1))
		if err != nil || res.VM.Status != models.VMPending {
			t.Fatalf("waits: %+v %v", res, err)
		}
		_, err = cs.Create(ctx, op, vmReq("over", 1))
		datasettest.WantError(t, err, http.StatusConflict, "QUOTA_EXCEEDED", "GPU quota for NVIDIA H100 is 8; 8 in use, 1 asked")
		// Another organization's quota is its own.
		if _, err := cs.Create(ctx, datasettest.Caller(t, st, "b-op"), vmReq("theirs", 1)); err != nil {
			t.Fatal(err)
		}
	})
}
