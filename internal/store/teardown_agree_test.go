package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// teardownFleet: two organizations with the same eight running rows, a
// VM and a pod, each with and without a fixture's tearingDown, on a node
// an agent reports for (n-agent) and on one none does (n-plain), each row
// holding one GPU: org-a's rows for Apply, org-b's for the bulk path.
func teardownFleet() *dataset.File {
	f := &dataset.File{
		GPUModels:     []models.GPUModel{{ID: "h100", Name: "NVIDIA H100", Manufacturer: models.NVIDIA, MemoryGb: 80}},
		Organizations: []models.Organization{{ID: "org-a", Name: "A", TenantID: 1}, {ID: "org-b", Name: "B", TenantID: 2}},
	}
	for _, node := range []string{"n-agent", "n-plain"} {
		n := dataset.Node{Node: models.Node{ID: node, Name: node, Status: models.NodeOnline, AgentVersion: "2.7.0",
			CPUCores: 128, RAMGb: 2048, DiskGb: 30000}}
		for i := range 8 {
			n.GPUs = append(n.GPUs, models.GPU{ID: fmt.Sprintf("%s-g%d", node, i), Index: i, UUID: fmt.Sprintf("GPU-%s-%d", node, i),
				Address: fmt.Sprintf("0000:%02X:00.0", 16+i), ModelID: "h100", Health: models.GPUHealthy})
		}
		f.Nodes = append(f.Nodes, n)
		g := 0
		for _, org := range []string{"org-a", "org-b"} {
			for _, pod := range []bool{false, true} {
				for _, down := range []bool{false, true} {
					nodeID, model := node, "h100"
					vm := dataset.VM{VM: models.VM{ID: rowID(org, node, pod, down), Name: rowID(org, node, pod, down), OrganizationID: org,
						NodeID: &nodeID, Status: models.VMRunning, GPUModelID: &model, GPUCount: 1, ProvisioningStage: "ready", TearingDown: down},
						GPUIDs: []string{fmt.Sprintf("%s-g%d", node, g)}}
					if pod {
						vm.CapabilityTier, vm.ImageURL, vm.VolumeGb = models.TierPod, "busybox", 10
					} else {
						vm.CPUCores, vm.RAMGb, vm.DiskSizeGb = 8, 64, 100
					}
					f.VMs = append(f.VMs, vm)
					g++
				}
			}
		}
	}
	return f
}

func rowID(org, node string, pod, down bool) string {
	return fmt.Sprintf("%s-%s-pod%t-down%t", org, node, pod, down)
}

var errRollBack = errors.New("rolled back on purpose")

// TestApplyAndBulkAgreeOnTeardown: every transition the bulk path takes
// (none that starts a generation), applied from running to one row by
// Apply and to its twin by the bulk path, leaves the two alike: status,
// tearingDown and the GPUs held, for a VM and a pod, with and without a
// fixture's flag, on a node an agent reports for and on one none does.
func TestApplyAndBulkAgreeOnTeardown(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.Load(ctx, st, teardownFleet()); err != nil {
			t.Fatal(err)
		}
		if err := st.DB.Table("nodes").Where("id = ?", "n-agent").Update("agent_reported_at", store.Now()).Error; err != nil {
			t.Fatal(err)
		}
		actor := models.Actor{Kind: models.ActorPlatform, ID: "test"}
		tried := 0
		for _, tr := range models.Lifecycle {
			probe := &models.VM{Status: models.VMRunning}
			if tr.ActionFor(probe) != "" || !slices.Contains(tr.From, models.VMRunning) {
				continue
			}
			tried++
			err := st.InTx(ctx, func(tx *store.Txn) error {
				ch := store.Change{Transition: tr.Name, Actor: actor, Detail: "x"}
				if _, err := st.ApplyToWorkloads(tx, store.Workloads{OrganizationID: "org-b"}, ch, store.Now()); err != nil {
					return err
				}
				for _, node := range []string{"n-agent", "n-plain"} {
					for _, pod := range []bool{false, true} {
						for _, down := range []bool{false, true} {
							one, err := st.LockVM(tx, "org-a", rowID("org-a", node, pod, down))
							if err != nil {
								return err
							}
							if tr.Allows(one) {
								if _, err := st.Apply(tx, one, ch, store.Now()); err != nil {
									return err
								}
							}
							many, err := st.LockVM(tx, "org-b", rowID("org-b", node, pod, down))
							if err != nil {
								return err
							}
							heldOne, err := store.HeldGPUs(tx, one.ID)
							if err != nil {
								return err
							}
							heldMany, err := store.HeldGPUs(tx, many.ID)
							if err != nil {
								return err
							}
							a := fmt.Sprintf("%s tearingDown=%t held=%d", one.Status, one.TearingDown, heldOne)
							b := fmt.Sprintf("%s tearingDown=%t held=%d", many.Status, many.TearingDown, heldMany)
							if a != b {
								t.Errorf("%s on %s (pod %t, fixture flag %t): Apply leaves %s, the bulk path %s", tr.Name, node, pod, down, a, b)
							}
						}
					}
				}
				return errRollBack
			})
			if !errors.Is(err, errRollBack) {
				t.Fatalf("%s: %v", tr.Name, err)
			}
		}
		if tried < 5 {
			t.Fatalf("only %d transitions from running tried", tried)
		}
	})
}

// TestBulkRefusesWhatOnlyApplyDoes: a transition that starts a generation
// (a restart's reboot, a deploy) or hands over what it releases is one
// row's, through Apply; the bulk path refuses it whole, writing nothing.
func TestBulkRefusesWhatOnlyApplyDoes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.Load(ctx, st, teardownFleet()); err != nil {
			t.Fatal(err)
		}
		actor := models.Actor{Kind: models.ActorPlatform, ID: "test"}
		for _, ch := range []store.Change{
			{Transition: models.RestartReboot, Actor: actor},
			{Transition: models.UserStop, Actor: actor, Handover: true},
		} {
			var n int64
			err := st.InTx(ctx, func(tx *store.Txn) error {
				var err error
				n, err = st.ApplyToWorkloads(tx, store.Workloads{OrganizationID: "org-b"}, ch, store.Now())
				return err
			})
			if err == nil || n != 0 {
				t.Errorf("%s (handover %t) on many rows: %d changed, %v; want refused", ch.Transition, ch.Handover, n, err)
			}
		}
		var changed, events int64
		st.DB.Table("vms").Where("status <> ? OR generation <> 0", models.VMRunning).Count(&changed)
		st.DB.Table("vm_events").Count(&events)
		if changed != 0 || events != 0 {
			t.Errorf("after the refusals %d rows changed and %d events written, want none", changed, events)
		}
	})
}
