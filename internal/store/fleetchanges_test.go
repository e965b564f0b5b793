package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// fleetChangeFleet: nodes n1 (on fabric f1) and n2 of 8 H100s each, a
// spare A100 model, and on n1 a running VM (GPU 0, a host share) and a
// running pod (GPU 1).
func fleetChangeFleet() *dataset.File {
	f := &dataset.File{
		GPUModels: []models.GPUModel{{ID: "h100", Name: "NVIDIA H100", Manufacturer: models.NVIDIA, MemoryGb: 80},
			{ID: "a100", Name: "NVIDIA A100", Manufacturer: models.NVIDIA, MemoryGb: 80}},
		Organizations: []models.Organization{{ID: "org-a", Name: "A", TenantID: 1}},
		Fabrics:       []models.Fabric{{ID: "f1", IPCapacity: 8}, {ID: "f2", IPCapacity: 8}},
	}
	for _, id := range []string{"n1", "n2"} {
		n := dataset.Node{Node: models.Node{ID: id, Name: id, Status: models.NodeOnline, AgentVersion: "2.7.0",
			CPUCores: 128, RAMGb: 2048, DiskGb: 30000}}
		if id == "n1" {
			n.FabricID = new("f1")
		}
		for i := range 8 {
			n.GPUs = append(n.GPUs, models.GPU{ID: fmt.Sprintf("%s-g%d", id, i), Index: i, UUID: fmt.Sprintf("GPU-%s-%d", id, i),
				Address: fmt.Sprintf("0000:%02X:00.0", 16+i), ModelID: "h100", Health: models.GPUHealthy})
		}
		f.Nodes = append(f.Nodes, n)
	}
	for i, pod := range []bool{false, true} {
		vm := dataset.VM{VM: models.VM{ID: fmt.Sprintf("row-%d", i), Name: fmt.Sprintf("row-%d", i), OrganizationID: "org-a",
			NodeID: new("n1"), Status: models.VMRunning, GPUModelID: new("h100"), GPUCount: 1, ProvisioningStage: "ready"},
			GPUIDs: []string{fmt.Sprintf("n1-g%d", i)}}
		if pod {
			vm.CapabilityTier, vm.ImageURL, vm.VolumeGb = models.TierPod, "busybox", 10
		} else {
			vm.CPUCores, vm.RAMGb, vm.DiskSizeGb = 8, 64, 100
		}
		f.VMs = append(f.VMs, vm)
	}
	return f
}

// TestFleetChangesNameEveryWriteAPlacementReads: a change of any column a
// fleet's Snapshot reads of a node or a GPU, or of a VM row's host share,
// names its node (both, when it moves) to the next ReadFleet, on both
// engines; what a heartbeat writes (its time, its readings, the agent's
// report time once set) and a change rolled back name none. Every column
// the Snapshot reads has its case, so a column added to it without a
// trigger fails here.
func TestFleetChangesNameEveryWriteAPlacementReads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.Load(ctx, st, fleetChangeFleet()); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		n1, n2 := []string{"n1"}, []string{"n2"}
		type change struct {
			name, sql string
			args      []any
			want      []string
		}
		nodeCases := []change{
			{"name", "UPDATE nodes SET name = 'n1b' WHERE id = 'n1'", nil, n1},
			{"cluster_id", "UPDATE nodes SET cluster_id = 'c2' WHERE id = 'n1'", nil, n1},
			{"node_pool", "UPDATE nodes SET node_pool = 'p2' WHERE id = 'n2'", nil, n2},
			{"status", "UPDATE nodes SET status = 'offline' WHERE id = 'n2'", nil, n2},
			{"agent_version", "UPDATE nodes SET agent_version = '2.8.0' WHERE id = 'n1'", nil, n1},
			{"fabric_id", "UPDATE nodes SET fabric_id = 'f2' WHERE id = 'n1'", nil, n1},
			{"cpu_cores", "UPDATE nodes SET cpu_cores = 64 WHERE id = 'n2'", nil, n2},
			{"ram_gb", "UPDATE nodes SET ram_gb = 1024 WHERE id = 'n2'", nil, n2},
			{"disk_gb", "UPDATE nodes SET disk_gb = 100 WHERE id = 'n2'", nil, n2},
			{"leaving_at", "UPDATE nodes SET leaving_at = ? WHERE id = 'n1'", []any{at}, n1},
		}
		gpuCases := []change{
			{"node_id", "UPDATE gpus SET node_id = 'n2', idx = 9 WHERE id = 'n1-g7'", nil, []string{"n1", "n2"}},
			{"idx", "UPDATE gpus SET idx = 10 WHERE id = 'n2-g6'", nil, n2},
			{"address", "UPDATE gpus SET address = '0000:99:00.0' WHERE id = 'n2-g5'", nil, n2},
			{"model_id", "UPDATE gpus SET model_id = 'a100' WHERE id = 'n2-g4'", nil, n2},
			{"health", "UPDATE gpus SET health = 'failed' WHERE id = 'n1-g3'", nil, n1},
			{"failed_reason", "UPDATE gpus SET failed_reason = 'XID 79' WHERE id = 'n1-g3'", nil, n1},
			{"holder_vm_id", "UPDATE gpus SET holder_vm_id = NULL WHERE id = 'n1-g1'", nil, n1},
		}
		nodeCols, gpuCols := store.SnapshotColumns()
		for _, c := range []struct {
			table string
			cols  []string
			cases []change
		}{{"nodes", nodeCols, nodeCases}, {"gpus", gpuCols, gpuCases}} {
			for _, col := range c.cols {
				if col != "id" && !slices.ContainsFunc(c.cases, func(ch change) bool { return ch.name == col }) {
					t.Errorf("a Snapshot reads %s.%s, which no case here changes", c.table, col)
				}
			}
		}
		cases := append(append(nodeCases, gpuCases...),
			change{"a report's first time", "UPDATE nodes SET agent_reported_at = ? WHERE id = 'n1'", []any{at}, n1},
			change{"a report's later time", "UPDATE nodes SET agent_reported_at = ?, last_heartbeat_at = ? WHERE id = 'n1'",
				[]any{at.Add(time.Minute), at.Add(time.Minute)}, nil},
			change{"readings", "UPDATE gpus SET utilization = 50, memory_used_bytes = 7, sampled_at = ? WHERE node_id = 'n1'", []any{at}, nil},
			change{"a write of the same values", "UPDATE nodes SET status = status, name = name, agent_version = agent_version", nil, nil},
			change{"vm status", "UPDATE vms SET status = 'stopped' WHERE id = 'row-0'", nil, n1},
			change{"vm tearing_down", "UPDATE vms SET tearing_down = ? WHERE id = 'row-0'", []any{true}, n1},
			change{"vm handed_over", "UPDATE vms SET handed_over = ? WHERE id = 'row-0'", []any{true}, n1},
			change{"vm capability_tier", "UPDATE vms SET capability_tier = '' WHERE id = 'row-1'", nil, n1},
			change{"vm cpu_cores", "UPDATE vms SET cpu_cores = 4 WHERE id = 'row-1'", nil, n1},
			change{"vm ram_gb", "UPDATE vms SET ram_gb = 4 WHERE id = 'row-1'", nil, n1},
			change{"vm disk_size_gb", "UPDATE vms SET disk_size_gb = 4 WHERE id = 'row-1'", nil, n1},
			change{"vm node_id", "UPDATE vms SET node_id = 'n2' WHERE id = 'row-1'", nil, []string{"n1", "n2"}},
			change{"vm of no node", "UPDATE vms SET node_id = NULL, status = 'pending' WHERE id = 'row-1'", nil, n2},
			change{"vm name", "UPDATE vms SET name = 'renamed' WHERE id = 'row-0'", nil, nil},
			change{"vm inserted on a node", "INSERT INTO vms (id, name, organization_id, status, node_id, cpu_cores, ram_gb, disk_size_gb) " +
				"VALUES ('row-2', 'row-2', 'org-a', 'running', 'n2', 1, 1, 1)", nil, n2},
			change{"vm inserted on none", "INSERT INTO vms (id, name, organization_id, status) VALUES ('row-3', 'row-3', 'org-a', 'pending')", nil, nil},
			change{"vms deleted", "DELETE FROM vms WHERE id IN ('row-2', 'row-3')", nil, n2},
		)
		mark := fleetRead(t, st, nil).Mark
		for _, c := range cases {
			before := fleetChangeRows(t, st)
			storetest.Exec(t, st, c.sql, c.args...)
			var wrote []string
			for k, node := range fleetChangeRows(t, st) {
				if _, ok := before[k]; !ok && !slices.Contains(wrote, node) {
					wrote = append(wrote, node)
				}
			}
			slices.Sort(wrote)
			if !slices.Equal(wrote, c.want) {
				t.Errorf("%s: wrote changes of %v, want %v", c.name, wrote, c.want)
			}
			// A read from the last mark names them (on PostgreSQL perhaps
			// more: the server's oldest transaction, of any database,
			// holds the mark back) and reads those nodes.
			read := fleetRead(t, st, &mark)
			for _, n := range c.want {
				if read.Full || !slices.Contains(read.Changed, n) {
					t.Errorf("%s: read changed %v (full %t), want %s among them", c.name, read.Changed, read.Full, n)
				}
			}
			var ids []string
			for _, n := range read.Snapshot.Nodes {
				ids = append(ids, n.ID)
			}
			if !slices.Equal(ids, read.Changed) {
				t.Errorf("%s: the snapshot read nodes %v, want those changed, %v", c.name, ids, read.Changed)
			}
			mark = read.Mark
		}
		// A change rolled back was never made.
		before := fleetChangeRows(t, st)
		_ = st.InTx(ctx, func(tx *store.Txn) error {
			if err := st.ExecIn(tx, "UPDATE nodes SET cpu_cores = 1 WHERE id = ?", "n2"); err != nil {
				t.Fatal(err)
			}
			return errRollBack
		})
		if after := fleetChangeRows(t, st); len(after) != len(before) {
			t.Errorf("a rolled-back change left %d changes, want %d", len(after), len(before))
		}
	})
}

// fleetChangeRows are the fleet's changes: the node of each, by its key
// (transaction and node on PostgreSQL, number on SQLite).
func fleetChangeRows(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	key := "CAST(seq AS text)"
	if st.Dialect == store.Postgres {
		key = "xid::text || '/' || node_id"
	}
	var rows []struct{ K, NodeID string }
	storetest.Scan(t, st, &rows, "SELECT "+key+" AS k, node_id FROM fleet_changes")
	out := map[string]string{}
	for _, r := range rows {
		out[r.K] = r.NodeID
	}
	return out
}

// TestFleetChangesPrunedBehindTheMark: DeleteFleetChangesBefore a mark
// leaves what a reader from that mark reads (n2's change, made after it),
// and a reader from an older mark still reads it.
func TestFleetChangesPrunedBehindTheMark(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := dataset.Load(ctx, st, fleetChangeFleet()); err != nil {
			t.Fatal(err)
		}
		first := fleetRead(t, st, nil).Mark
		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n1'")
		second, err := st.FleetMarkNow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		storetest.Exec(t, st, "UPDATE nodes SET status = 'offline' WHERE id = 'n2'")
		before := fleetChangeRows(t, st)
		n, err := st.DeleteFleetChangesBefore(ctx, second)
		if err != nil {
			t.Fatal(err)
		}
		after := fleetChangeRows(t, st)
		if int(n) != len(before)-len(after) {
			t.Errorf("answered %d deleted, but %d went", n, len(before)-len(after))
		}
		// SQLite's marks are exact; PostgreSQL's server-wide oldest
		// transaction may hold the mark back, and then less goes.
		if st.Dialect == store.SQLite && len(after) != 1 {
			t.Errorf("%d changes left, want n2's alone", len(after))
		}
		if got := fleetRead(t, st, &second).Changed; !slices.Contains(got, "n2") {
			t.Errorf("read from the prune's mark: %v, want n2 among them", got)
		}
		if got := fleetRead(t, st, &first).Changed; !slices.Contains(got, "n2") {
			t.Errorf("read from before it: %v, want n2 among them", got)
		}
	})
}

func fleetRead(t *testing.T, st *store.Store, since *store.FleetMark) *store.FleetRead {
	t.Helper()
	var read *store.FleetRead
	err := st.InTx(context.Background(), func(tx *store.Txn) error {
		var err error
		read, err = st.ReadFleet(tx, since)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return read
}
