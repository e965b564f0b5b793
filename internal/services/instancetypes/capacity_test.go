package instancetypes_test

import (
	"context"
	"fmt"
	"testing"

	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/instancetypes"
	"gpugraph/internal/store"
)

const east = "71f69d83-ba66-4822-adf5-55ce55efd210"

// capacities writes each offer's capacity as name=cluster/pool:n.
func capacities(offers []instancetypes.Offer) map[string]string {
	out := map[string]string{}
	for _, o := range offers {
		s := ""
		for _, c := range o.Capacity {
			s += fmt.Sprintf("%s/%s:%d ", c.ClusterID, c.NodePool, c.Available)
		}
		out[o.Name] = s
	}
	return out
}

// The fixture's fleet: n1 (online, 8 H100, g0–g4 held, g7 failed; 80 cores,
// 1664 GB RAM, 28500 GB disk free) and n2 (offline, 4 MI300X), one pool.
// Capacity counts what placement would take now, and drops when a restart
// claims GPUs and host share.
func TestCapacityPerPool(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := instancetypes.New(st)
		acme := datasettest.Caller(t, st, "acme-operator")
		offers, err := svc.Offers(ctx, acme)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"cpu_16c_64gb":     east + "/default:5 ", // 80 free cores / 16
			"gpu_1x_h100_sxm5": east + "/default:2 ", // the 2 free healthy H100 (g5, g6)
			"gpu_2x_h100_sxm5": east + "/default:1 ",
			"gpu_8x_h100_sxm5": east + "/default:0 ",
			"gpu_4x_mi300x":    east + "/default:0 ", // n2 is offline
		}
		if got := capacities(offers); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("capacity:\n got %v\nwant %v", got, want)
		}
		if offers[1].Model == nil || offers[1].Model.Name != "NVIDIA H100 80GB HBM3" || offers[0].Model != nil {
			t.Errorf("models: %+v %+v", offers[1].Model, offers[0].Model)
		}

		// vm-acme-2 (1 H100, 8 cores, 64 GB, 200 GB) starts on n1.
		if _, err := compute.New(st).Restart(ctx, acme, "vm-acme-2"); err != nil {
			t.Fatal(err)
		}
		o, err := svc.Offer(ctx, datasettest.Caller(t, st, "globex-operator"), "gpu_1x_h100_sxm5")
		if err != nil || len(o.Capacity) != 1 || o.Capacity[0].Available != 1 {
			t.Fatalf("1x after the restart: %+v %v", o.Capacity, err)
		}
		o, _ = svc.Offer(ctx, acme, "gpu_2x_h100_sxm5")
		if o.Capacity[0].Available != 0 {
			t.Errorf("2x after the restart: %+v", o.Capacity)
		}
		o, _ = svc.Offer(ctx, acme, "cpu_16c_64gb")
		if o.Capacity[0].Available != 4 { // 72 free cores / 16
			t.Errorf("cpu after the restart: %+v", o.Capacity)
		}
	})
}

// A pool without the type's GPU model is not listed for it; every pool
// with a node that is not removed is listed for a CPU-only type; pools
// are by cluster, then name.
func TestCapacityListsPoolsOfTheModel(t *testing.T) {
	datasettest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		datasettest.Load(t, st, `{"nodes": [
		  {"id": "n5", "name": "a-node", "clusterId": "aaa", "nodePool": "mi", "status": "online", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 1024, "diskGb": 10000,
		   "gpus": [{"id": "n5-g0", "index": 0, "uuid": "GPU-n5-0", "address": "0000:18:00.0", "modelId": "mi300x"}]},
		  {"id": "n6", "name": "gone", "clusterId": "aaa", "nodePool": "old", "status": "removed", "agentVersion": "2.6.1", "cpuCores": 64, "ramGb": 1024, "diskGb": 10000,
		   "gpus": [{"id": "n6-g0", "index": 0, "uuid": "GPU-n6-0", "address": "0000:18:00.0", "modelId": "h100-80gb"}]}]}`)
		offers, err := instancetypes.New(st).Offers(ctx, datasettest.Caller(t, st, "acme-reader"))
		if err != nil {
			t.Fatal(err)
		}
		got := capacities(offers)
		if want := east + "/default:5 aaa/mi:4 "; got["cpu_16c_64gb"] != want {
			t.Errorf("cpu: %q, want %q", got["cpu_16c_64gb"], want)
		}
		if want := east + "/default:0 aaa/mi:0 "; got["gpu_4x_mi300x"] != want {
			t.Errorf("4x mi300x: %q, want %q", got["gpu_4x_mi300x"], want)
		}
		if want := east + "/default:2 "; got["gpu_1x_h100_sxm5"] != want {
			t.Errorf("1x h100: %q, want %q", got["gpu_1x_h100_sxm5"], want)
		}
	})
}
