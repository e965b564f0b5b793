package compute_test

import (
	"context"
	"sync"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/quotas"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// setQuota sets org's quota for model straight in the store (the
// operator's path is package quotas', tested there).
func setQuota(t *testing.T, st *store.Store, org, model string, limit int) {
	t.Helper()
	if _, err := st.PutGPUQuota(context.Background(), models.GPUQuota{OrganizationID: org, GPUModelID: model, Limit: limit, UpdatedAt: store.Now()}); err != nil {
		t.Fatal(err)
	}
}

// A stopped VM whose start would take its organization past its quota is
// refused with the quota, the use and the ask, and nothing changes; at the
// quota exactly it starts. Acme uses 3 H100 (vm-acme-1's 2, pod-acme-1's
// 1); vm-acme-2 asks for 1.
func TestRestartRefusedOverQuota(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := compute.New(st)
		acme := datasettest.Caller(t, st, "acme-operator")
		setQuota(t, st, "org-acme", "h100-80gb", 3)
		_, err := svc.Restart(ctx, acme, "vm-acme-2")
		datasettest.WantError(t, err, 409, quotas.CodeQuotaExceeded, "GPU quota for NVIDIA H100 80GB HBM3 is 3; 3 in use, 1 asked")
		if v, _ := svc.Get(ctx, acme, "vm-acme-2"); v.VM.Status != models.VMStopped || len(v.GPUs) != 0 {
			t.Fatalf("after the refusal: %s, %d GPUs", v.VM.Status, len(v.GPUs))
		}
		// A running VM reboots whatever the quota: it keeps what it holds.
		setQuota(t, st, "org-acme", "h100-80gb", 0)
		if res, err := svc.Restart(ctx, acme, "vm-acme-1"); err != nil || res.VM.Status != models.VMRunning {
			t.Fatalf("reboot under a quota of 0: %v", err)
		}
		// Another organization's quota is not acme's.
		setQuota(t, st, "org-acme", "h100-80gb", 4)
		setQuota(t, st, "org-globex", "h100-80gb", 0)
		res, err := svc.Restart(ctx, acme, "vm-acme-2")
		if err != nil || res.VM.Status != models.VMDeploying || len(res.GPUs) != 1 {
			t.Fatalf("at the quota: %+v %v", res, err)
		}
	})
}

// Pending VMs count against the quota too, and so do interrupted ones;
// stopped, failed and terminated ones do not.
func TestQuotaCountsPendingAndInterrupted(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, `{"vms": [
			{"id": "vm-acme-q", "name": "queued", "organizationId": "org-acme", "status": "pending", "gpuModelId": "h100-80gb", "gpuCount": 4},
			{"id": "vm-acme-i", "name": "paused", "organizationId": "org-acme", "nodeId": "n1", "status": "interrupted", "gpuModelId": "h100-80gb", "gpuCount": 1, "gpuIds": ["n1-g5"]},
			{"id": "vm-acme-f", "name": "broken", "organizationId": "org-acme", "nodeId": "n1", "status": "failed", "gpuModelId": "h100-80gb", "gpuCount": 2},
			{"id": "vm-acme-t", "name": "gone", "organizationId": "org-acme", "status": "terminated", "gpuModelId": "h100-80gb", "gpuCount": 8}]}`)
		setQuota(t, st, "org-acme", "h100-80gb", 8)
		_, err := compute.New(st).Restart(ctx, datasettest.Caller(t, st, "acme-operator"), "vm-acme-2")
		datasettest.WantError(t, err, 409, quotas.CodeQuotaExceeded, "GPU quota for NVIDIA H100 80GB HBM3 is 8; 8 in use, 1 asked")
	})
}

// Two stopped VMs of one organization on two nodes restart at once, with
// room in the quota for one of them: exactly one starts, the other is
// refused over the quota, every time (the quota row's lock, not the
// nodes', serializes them).
func TestQuotaHoldsUnderRacingRestarts(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, `{
		 "nodes": [
		  {"id": "n3", "name": "gpu-node-3", "clusterId": "c", "nodePool": "p", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
		   "gpus": [{"id": "n3-g0", "index": 0, "uuid": "GPU-n3-0", "address": "0000:18:00.0", "modelId": "h100-80gb"},
		            {"id": "n3-g1", "index": 1, "uuid": "GPU-n3-1", "address": "0000:2A:00.0", "modelId": "h100-80gb"}]},
		  {"id": "n4", "name": "gpu-node-4", "clusterId": "c", "nodePool": "p", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 512, "diskGb": 4000,
		   "gpus": [{"id": "n4-g0", "index": 0, "uuid": "GPU-n4-0", "address": "0000:18:00.0", "modelId": "h100-80gb"},
		            {"id": "n4-g1", "index": 1, "uuid": "GPU-n4-1", "address": "0000:2A:00.0", "modelId": "h100-80gb"}]}],
		 "vms": [
		  {"id": "vm-a", "name": "a", "organizationId": "org-acme", "nodeId": "n3", "status": "stopped", "gpuModelId": "h100-80gb", "gpuCount": 2, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100},
		  {"id": "vm-b", "name": "b", "organizationId": "org-acme", "nodeId": "n4", "status": "stopped", "gpuModelId": "h100-80gb", "gpuCount": 2, "cpuCores": 8, "ramGb": 64, "diskSizeGb": 100}]}`)
		svc := compute.New(st)
		acme := datasettest.Caller(t, st, "acme-operator")
		stop := func(id string) {
			if _, err := svc.Stop(ctx, acme, id); err != nil {
				t.Fatalf("stop %s: %v", id, err)
			}
		}
		for round := range 10 {
			setQuota(t, st, "org-acme", "h100-80gb", 5) // 3 in use: room for one of the two
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, id := range []string{"vm-a", "vm-b"} {
				wg.Go(func() { _, errs[i] = svc.Restart(ctx, acme, id) })
			}
			wg.Wait()
			started := 0
			for i, err := range errs {
				switch {
				case err == nil:
					started++
					stop([]string{"vm-a", "vm-b"}[i])
				default:
					datasettest.WantError(t, err, 409, quotas.CodeQuotaExceeded, "GPU quota for NVIDIA H100 80GB HBM3 is 5; 5 in use, 2 asked")
				}
			}
			if started != 1 {
				t.Fatalf("round %d: %d of the two started under a quota with room for one (%v)", round, started, errs)
			}
		}
	})
}
