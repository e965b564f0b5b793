package compute_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/dataset/datasettest"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
	"gpugraph/placement"
)

// mixedFleet is 60 nodes of every kind placement tells apart: online,
// offline and removed; agents too old for InfiniBand or AMD; fabrics with
// few addresses; nodes of one model, of two, with failed GPUs; small and
// large hosts; some of their GPUs and host shares held by running VMs and
// pods. org-ib is InfiniBand-enabled, org-plain is not.
func mixedFleet(seed uint64) *dataset.File {
	rng := rand.New(rand.NewPCG(seed, 26))
	catalog := []models.GPUModel{
		{ID: "h100", Name: "NVIDIA H100", Manufacturer: models.NVIDIA, MemoryGb: 80},
		{ID: "a100", Name: "NVIDIA A100", Manufacturer: models.NVIDIA, MemoryGb: 80},
		{ID: "mi300x", Name: "AMD Instinct MI300X", Manufacturer: models.AMD, MemoryGb: 192},
	}
	f := &dataset.File{GPUModels: catalog,
		Fabrics: []models.Fabric{{ID: "ib-0", IPCapacity: 3}, {ID: "ib-1", IPCapacity: 40}},
		Organizations: []models.Organization{{ID: "org-ib", Name: "IB", TenantID: 1, InfinibandEnabled: true},
			{ID: "org-plain", Name: "Plain", TenantID: 2}},
		APIKeys: []dataset.APIKey{{Token: "ib-op", OrganizationID: "org-ib", Permissions: []string{"compute.operate", "compute.read"}},
			{Token: "plain-op", OrganizationID: "org-plain", Permissions: []string{"compute.operate", "compute.read"}}},
	}
	statuses := []models.NodeStatus{models.NodeOnline, models.NodeOnline, models.NodeOnline, models.NodeOnline,
		models.NodeOnline, models.NodeOnline, models.NodeOnline, models.NodeOffline, models.NodeRemoved}
	agents := []string{"2.6.1", "2.6.1", "2.6.1", "2.5.0", "2.3.0"}
	addresses := map[string]int{}
	for i := range 60 {
		id := fmt.Sprintf("n%02d", i)
		n := dataset.Node{Node: models.Node{ID: id, Name: fmt.Sprintf("node-%02d", (i*37)%60), ClusterID: []string{"c1", "c2"}[i%2],
			NodePool: []string{"p1", "p2", "p3"}[i%3], Status: statuses[rng.IntN(len(statuses))], AgentVersion: agents[rng.IntN(len(agents))],
			CPUCores: []int{32, 64, 128}[rng.IntN(3)], RAMGb: []int{256, 512, 1024}[rng.IntN(3)], DiskGb: []int{1000, 4000}[rng.IntN(2)]}}
		if k := rng.IntN(3); k < 2 {
			fab := fmt.Sprintf("ib-%d", k)
			n.FabricID = &fab
		}
		model, other := catalog[rng.IntN(3)].ID, catalog[rng.IntN(3)].ID
		for j := range 4 + rng.IntN(5) {
			g := models.GPU{ID: fmt.Sprintf("%s-g%d", id, j), Index: j, UUID: fmt.Sprintf("GPU-%s-%d", id, j),
				Address: fmt.Sprintf("0000:%02X:00.0", 16+j), ModelID: model, Health: models.GPUHealthy}
			if j >= 6 {
				g.ModelID = other
			}
			if rng.IntN(12) == 0 {
				reason := "XID 79"
				g.Health, g.FailedReason = models.GPUFailed, &reason
			}
			n.GPUs = append(n.GPUs, g)
		}
		f.Nodes = append(f.Nodes, n)
		if n.Status == models.NodeRemoved {
			continue
		}
		// Running workloads holding some of the node's healthy GPUs.
		free := []string{}
		for _, g := range n.GPUs {
			if g.Health == models.GPUHealthy && g.ModelID == model {
				free = append(free, g.ID)
			}
		}
		cpu, ram, disk := n.CPUCores, n.RAMGb, n.DiskGb
		for w := range rng.IntN(3) {
			take := min(len(free), 1+rng.IntN(3))
			if take == 0 {
				break
			}
			m := model
			vm := dataset.VM{VM: models.VM{ID: fmt.Sprintf("held-%s-%d", id, w), Name: "held", OrganizationID: f.Organizations[rng.IntN(2)].ID,
				Status: models.VMRunning, GPUModelID: &m, GPUCount: take, NodeID: &n.ID, ResourceSize: "x", Tier: "standard",
				ComputeClass: models.ComputeClassOnDemand, ProvisioningStage: "ready"}, GPUIDs: free[:take]}
			if rng.IntN(3) == 0 {
				vm.CapabilityTier, vm.ImageURL, vm.VolumeGb = models.TierPod, "busybox", 10
				if vm.OrganizationID == "org-ib" && n.FabricID != nil {
					if addresses[*n.FabricID]++; addresses[*n.FabricID] > f.Fabrics[0].IPCapacity {
						continue // ib-0 is full; ib-1 never fills here
					}
				}
			} else {
				vm.CPUCores, vm.RAMGb, vm.DiskSizeGb = 8*(1+rng.IntN(3)), 64*(1+rng.IntN(4)), 500*(1+rng.IntN(2))
				if vm.CPUCores > cpu || vm.RAMGb > ram || vm.DiskSizeGb > disk {
					continue
				}
				cpu, ram, disk = cpu-vm.CPUCores, ram-vm.RAMGb, disk-vm.DiskSizeGb
			}
			free = free[take:]
			f.VMs = append(f.VMs, vm)
		}
	}
	return f
}

// TestCandidatesAgreeWithPlace creates 120 VMs and pods of random shapes,
// one at a time, on the mixed fleet, and checks each against
// placement.Place run over a snapshot of every node just before it: the
// create lands on the node Place picks (the candidates the database
// prefilters and orders never change the choice), or queues pending with
// Place's summary over every node, or is refused as Unresolvable says.
func TestCandidatesAgreeWithPlace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := mixedFleet(7)
		if _, err := dataset.Load(ctx, st, f); err != nil {
			t.Fatal(err)
		}
		cs := compute.New(st)
		callers := map[string]string{"org-ib": "ib-op", "org-plain": "plain-op"}
		catalog := map[string]models.GPUModel{}
		for _, m := range f.GPUModels {
			catalog[m.ID] = m
		}
		rng := rand.New(rand.NewPCG(11, 26))
		placed, queued, refused, goOnly := 0, 0, 0, 0
		for i := range 120 {
			org := f.Organizations[rng.IntN(2)]
			model := f.GPUModels[rng.IntN(3)]
			r := compute.CreateRequest{Name: fmt.Sprintf("c-%03d", i), GPUModelID: new(model.ID), GPUCount: new(1 + rng.IntN(4))}
			if rng.IntN(15) == 0 {
				r.GPUCount = new(9) // more than any node has
			}
			pod := rng.IntN(3) == 0
			if pod {
				r.CapabilityTier, r.ImageURL, r.VolumeGb = new(models.TierPod), new("busybox"), new(10)
			} else {
				r.CPUCores, r.RAMGb, r.DiskSizeGb = new(8*(1+rng.IntN(4))), new(64*(1+rng.IntN(6))), new(250*(1+rng.IntN(4)))
			}
			switch rng.IntN(6) {
			case 0:
				r.ClusterID = new("c2")
			case 1:
				r.NodePool = new("p3")
			}
			req := &placement.Request{OrganizationID: org.ID, Pod: pod, GPUCount: *r.GPUCount, InfiniBand: org.InfinibandEnabled,
				GPUModel: placement.Model{ID: model.ID, Name: model.Name, Manufacturer: string(model.Manufacturer)}}
			if !pod {
				req.CPUCores, req.RAMGb, req.DiskGb = *r.CPUCores, *r.RAMGb, *r.DiskSizeGb
			}
			snap, err := st.ReadSnapshot(ctx, store.SnapshotScope{AddressHolders: true})
			if err != nil {
				t.Fatal(err)
			}
			var nodes []*placement.NodeInfo
			rows := map[string]models.Node{}
			for _, n := range snap.Nodes {
				rows[n.ID] = n
			}
			for _, n := range compute.NodeInfos(snap) {
				if (r.ClusterID == nil || rows[n.ID].ClusterID == *r.ClusterID) && (r.NodePool == nil || rows[n.ID].NodePool == *r.NodePool) {
					nodes = append(nodes, n)
				}
			}
			want, refusal := placement.Default().Place(req, nodes)
			never := placement.Unresolvable(req, nodes, "")

			res, err := cs.Create(ctx, datasettest.Caller(t, st, callers[org.ID]), r)
			switch {
			case never != nil:
				var e *apierr.Error
				if !errors.As(err, &e) || e.Status != http.StatusConflict || e.Code != "UNSCHEDULABLE" {
					t.Fatalf("create %d (%+v): %v, want 409 UNSCHEDULABLE (%s)", i, req, err, never.Message)
				}
				refused++
			case err != nil:
				t.Fatalf("create %d (%+v): %v", i, req, err)
			case refusal != nil:
				if res.VM.Status != models.VMPending || res.VM.StatusReason != refusal.Message {
					t.Fatalf("create %d (%+v): %s %q on %v, want pending %q", i, req, res.VM.Status, res.VM.StatusReason, res.VM.NodeID, refusal.Message)
				}
				queued++
			default:
				if res.VM.Status != models.VMDeploying || res.VM.NodeID == nil || *res.VM.NodeID != want.Node.ID {
					t.Fatalf("create %d (%+v): %s on %v, want deploying on %s (score %+v)", i, req, res.VM.Status, res.VM.NodeID, want.Node.ID, want.Score)
				}
				if got := gpuIDs(res); fmt.Sprint(got) != fmt.Sprint(want.GPUIDs) {
					t.Fatalf("create %d: GPUs %v, want %v", i, got, want.GPUIDs)
				}
				placed++
				for _, st := range want.Diagnosis.Rejected {
					if st.Code == placement.NoInfiniBand || st.Code == placement.NoAMDGrant || st.Code == placement.NoIPCapacity {
						goOnly++ // a filter the database does not run refused a node
						break
					}
				}
			}
		}
		// Every outcome was met, or the fleet is not the test it claims.
		if placed < 30 || goOnly < 5 || queued < 10 || refused < 1 {
			t.Errorf("%d placed (%d past an agent or address refusal), %d queued, %d refused: the fleet no longer covers every answer",
				placed, goOnly, queued, refused)
		}
		if v := storetest.Violations(t, st); len(v) > 0 {
			t.Errorf("violations: %v", v)
		}
	})
}

// racedFleet is createFleet with a row pending for node-2's 4 GPUs (one
// failed), holding nothing: the holder a racing claim takes node-2's GPUs
// for. A create of 2 GPUs chooses node-2, the fuller.
func racedFleet(t *testing.T, st *store.Store, cs *compute.Service) *models.VM {
	t.Helper()
	if st.Dialect != store.Postgres {
		t.Skip("SQLite has one writer: nothing changes between a create's read and its claim, and no lock is held by another")
	}
	in := vmReq("holder", 4)
	in.NodePool = new("p2")
	holder, err := cs.Create(context.Background(), datasettest.Caller(t, st, "a-op"), in)
	if err != nil || holder.VM.Status != models.VMPending {
		t.Fatalf("holder: %+v %v", holder, err)
	}
	return holder.VM
}

// TestCreateTriesTheNextNodeWhenItsChoiceIsTaken: after the create chose
// node-2 from what it read without locks, another transaction takes
// node-2's free GPUs and commits. The create's check under node-2's lock
// fails; it lets node-2 go and places on node-1 instead of answering 503.
// PostgreSQL only (racedFleet).
func TestCreateTriesTheNextNodeWhenItsChoiceIsTaken(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		holder := racedFleet(t, st, cs)
		var chosen []string
		cs.SetChosenHook(func(node string) {
			if chosen = append(chosen, node); len(chosen) > 1 {
				return
			}
			err := st.InTx(ctx, func(tx *store.Txn) error {
				if err := st.LockNodes(tx, []string{"n2"}); err != nil {
					return err
				}
				return st.ClaimGPUs(tx, holder.ID, "n2", "h100", []string{"n2-g0", "n2-g1", "n2-g2"})
			})
			if err != nil {
				t.Error(err)
			}
		})
		res, err := cs.Create(ctx, datasettest.Caller(t, st, "a-op"), vmReq("racer", 2))
		if err != nil || res.VM.Status != models.VMDeploying || *res.VM.NodeID != "n1" {
			t.Fatalf("create beside a racing claim: %+v %v, want deploying on n1", res, err)
		}
		if fmt.Sprint(chosen) != "[n2 n1]" || fmt.Sprint(gpuIDs(res)) != "[n1-g0 n1-g1]" {
			t.Errorf("chose %v and holds %v, want n2 then n1, holding n1-g0 n1-g1", chosen, gpuIDs(res))
		}
	})
}

// TestCreatePassesOverALockedNode: while another transaction holds
// node-2's lock, a create that chose node-2 does not wait for it: it
// places on node-1 at once (the other still holding its lock).
func TestCreatePassesOverALockedNode(t *testing.T) {
	eachFleet(t, func(t *testing.T, st *store.Store, cs *compute.Service) {
		ctx := context.Background()
		racedFleet(t, st, cs)
		locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- st.InTx(ctx, func(tx *store.Txn) error {
				if err := st.LockNodes(tx, []string{"n2"}); err != nil {
					return err
				}
				close(locked)
				<-release
				return nil
			})
		}()
		<-locked
		var chosen []string
		cs.SetChosenHook(func(node string) { chosen = append(chosen, node) })
		res, err := cs.Create(ctx, datasettest.Caller(t, st, "a-op"), vmReq("beside", 2))
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err != nil || res.VM.Status != models.VMDeploying || *res.VM.NodeID != "n1" || fmt.Sprint(chosen) != "[n2 n1]" {
			t.Fatalf("create beside a held lock: %+v %v (chose %v), want deploying on n1 after n2", res, err, chosen)
		}
	})
}
