package peer

import (
	"strings"
	"testing"
	"time"
)

func TestSameReadsPostGraphileInGpugraphsShape(t *testing.T) {
	q := Queries()[2] // Q3
	ours := `{"vms":{"vms":[{"name":"a","status":"STOPPED","node":{"name":"n","status":"ONLINE","gpus":[{"index":0,"address":"x","health":"HEALTHY","model":{"name":"H100"}}]}}]}}`
	peer := `{"allVms":{"nodes":[{"name":"a","status":"stopped","fleetNodeByNodeId":{"name":"n","status":"online","gpusesByNodeId":{"nodes":[{"idx":0,"address":"x","health":"healthy","gpuModelByModelId":{"name":"H100"}}]}}}]}}`
	if ok, why := q.Same([]byte(ours), []byte(peer)); !ok {
		t.Fatalf("same objects read as different: %s", why)
	}
	other := strings.Replace(peer, `"idx":0`, `"idx":1`, 1)
	if ok, _ := q.Same([]byte(ours), []byte(other)); ok {
		t.Fatal("a different GPU index read as the same")
	}
	if ok, _ := q.Same([]byte(`{"vms":{"vms":[]}}`), []byte(`{"allPods":{"nodes":[]}}`)); ok {
		t.Fatal("answers of different fields read as the same")
	}
}

func TestSameComparesCounts(t *testing.T) {
	q := Queries()[3] // Q4
	if ok, why := q.Same([]byte(`{"podsCount":4133}`), []byte(`{"allPods":{"totalCount":4133}}`)); !ok {
		t.Fatal(why)
	}
	if ok, _ := q.Same([]byte(`{"podsCount":4133}`), []byte(`{"allPods":{"totalCount":4134}}`)); ok {
		t.Fatal("different counts read as the same")
	}
}

func TestMedians(t *testing.T) {
	if got := median([]time.Duration{5, 1, 3}); got != 3 {
		t.Fatalf("median = %v, want 3", got)
	}
	if got := medianF([]float64{9, 1, 4, 7}); got != 7 {
		t.Fatalf("medianF = %v, want 7 (the upper of the two middle values)", got)
	}
}
