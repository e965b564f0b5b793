package fleetgen_test

import (
	"context"
	"encoding/json"
	"testing"

	"gpugraph/bench/fleetgen"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
)

func encode(t *testing.T, o fleetgen.Options) []byte {
	t.Helper()
	b, err := json.Marshal(fleetgen.Generate(o))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSameSeedSameFixture(t *testing.T) {
	o := fleetgen.Options{Nodes: 30, Pods: 250, Samples: 1000, Tenants: 3, Seed: 7, VMsPerNode: 2, VMGPUs: 2}
	a, b := encode(t, o), encode(t, o)
	if string(a) != string(b) {
		t.Fatal("two runs with one seed differ")
	}
	o.Seed = 8
	if string(encode(t, o)) == string(a) {
		t.Fatal("another seed gives the same fixture")
	}
}

func TestSizes(t *testing.T) {
	f := fleetgen.Generate(fleetgen.Options{Nodes: 1001, Pods: 1234, Samples: 5000, Tenants: 4, Seed: 1, VMsPerNode: 3, VMGPUs: 2})
	gpus := 0
	clusters := map[string]bool{}
	for _, n := range f.Nodes {
		gpus += len(n.GPUs)
		clusters[n.ClusterID] = true
	}
	samples := 0
	for _, s := range f.PodMetrics {
		samples += len(s.Samples)
		if len(s.Samples) > fleetgen.SeriesLength {
			t.Fatalf("series of %d samples", len(s.Samples))
		}
	}
	if len(f.Nodes) != 1001 || gpus != 1001*8 || len(clusters) != 2 || len(f.Pods) != 1234 || samples != 5000 ||
		len(f.VMs) != 3003 || len(f.Organizations) != 4 || len(f.APIKeys) != 4 || len(f.Projects) != 16 {
		t.Fatalf("nodes %d, gpus %d, clusters %d, pods %d, samples %d, vms %d, orgs %d, keys %d, projects %d",
			len(f.Nodes), gpus, len(clusters), len(f.Pods), samples, len(f.VMs), len(f.Organizations), len(f.APIKeys), len(f.Projects))
	}
	perTenant := map[int]int{}
	nodeCluster := map[string]string{}
	for _, n := range f.Nodes {
		nodeCluster[n.Name] = n.ClusterID
	}
	for _, p := range f.Pods {
		perTenant[p.TenantID]++
		if p.NodeName != nil && nodeCluster[*p.NodeName] != p.ClusterID {
			t.Fatalf("pod %s on %s, a node of another cluster", p.Name, *p.NodeName)
		}
	}
	if perTenant[1001] != 309 || perTenant[1002] != 309 || perTenant[1003] != 308 || perTenant[1004] != 308 {
		t.Fatalf("pods per tenant = %v", perTenant)
	}
}

// A generated fleet is a valid fixture: the loader takes it whole.
func TestLoads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := encode(t, fleetgen.Options{Nodes: 40, Pods: 300, Samples: 2000, Tenants: 2, Seed: 3, VMsPerNode: 1, VMGPUs: 4})
		stats, err := dataset.LoadFile(context.Background(), st, b)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Nodes != 40 || stats.GPUs != 320 || stats.Pods != 300 || stats.Samples != 2000 || stats.VMs != 40 {
			t.Fatalf("stats = %+v", stats)
		}
		running := storetest.Count(t, st, "pods", "k8s_phase = ? AND node_name IS NOT NULL", "Running")
		var series int64
		storetest.Scan(t, st, &series, "SELECT count(DISTINCT pod_id) FROM metric_samples")
		if running == 0 || series != min(running, 9) { // 2000 samples = 9 series of 240 and one of 80, over the running pods
			t.Fatalf("%d running pods, samples on %d", running, series)
		}
	})
}
