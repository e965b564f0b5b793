package store

import (
	"fmt"
	"strings"

	"gorm.io/gorm"

	"gpugraph/models"
)

// The guards every report passes under its node's row lock, before it
// writes anything: its sequence must be above the node's last one, and an
// inventory may not shrink or move a node under the workloads it holds.

// StaleReportError refuses a report whose sequence is not above the last
// one the node's reports carried: a replay, or a report overtaken.
type StaleReportError struct{ Sequence, Last int64 }

func (e *StaleReportError) Error() string {
	return fmt.Sprintf("report sequence %d is not above the last accepted %d", e.Sequence, e.Last)
}

// InventoryShrinkError refuses an inventory that would take from the node
// what its workloads hold; Problems names each.
type InventoryShrinkError struct {
	NodeName string
	Problems []string
}

func (e *InventoryShrinkError) Error() string {
	return "the inventory of node " + e.NodeName + " would take what its workloads hold: " + strings.Join(e.Problems, "; ")
}

// advanceSequence records seq as the node's last report sequence, or
// refuses it when it is not above the last. Zero is a report without a
// sequence (an agent that predates it, on a legacy key): not checked.
func advanceSequence(tx *gorm.DB, nodeID string, seq int64) error {
	if seq == 0 {
		return nil
	}
	res := tx.Exec("UPDATE nodes SET report_sequence = ? WHERE id = ? AND report_sequence < ?", seq, nodeID, seq)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 1 {
		return nil
	}
	var last []int64
	if err := tx.Table("nodes").Where("id = ?", nodeID).Pluck("report_sequence", &last).Error; err != nil {
		return err
	}
	if len(last) == 0 {
		return ErrUnknownNode
	}
	return &StaleReportError{Sequence: seq, Last: last[0]}
}

// checkShrink refuses an inventory of a known node that would move it to
// another cluster while workloads hold it, put its CPU, RAM or disk below
// what its VMs hold, or leave out a GPU a workload holds. Refused whole:
// nothing of it is written, the node keeps its last accepted inventory,
// and an operator drains the node (stop, reclaim, leavingAt) first.
func checkShrink(tx *gorm.DB, node *models.Node, inv Inventory) error {
	var holders []struct {
		ID             string
		CapabilityTier string
		CPUCores       int
		RAMGb          int
		DiskSizeGb     int
	}
	if err := tx.Table("vms").Select("id, capability_tier, cpu_cores, ram_gb, disk_size_gb").
		Where("node_id = ? AND status IN ? AND deleted_at IS NULL", node.ID, models.HoldingStatuses).
		Order("id").Scan(&holders).Error; err != nil {
		return err
	}
	if len(holders) == 0 {
		return nil
	}
	var problems []string
	if inv.ClusterID != "" && inv.ClusterID != node.ClusterID {
		problems = append(problems, fmt.Sprintf("clusterId %q would move it out of cluster %q while %d workloads are placed on it",
			inv.ClusterID, node.ClusterID, len(holders)))
	}
	// Pods hold GPUs only; a plain VM holds its CPU, RAM and disk too
	// (the placement snapshot's host shares).
	var cpu, ram, disk int
	for _, h := range holders {
		if h.CapabilityTier != string(models.TierPod) {
			cpu, ram, disk = cpu+h.CPUCores, ram+h.RAMGb, disk+h.DiskSizeGb
		}
	}
	for _, f := range []struct {
		name           string
		reported, held int
	}{{"cpuCores", inv.CPUCores, cpu}, {"ramGb", inv.RAMGb, ram}, {"diskGb", inv.DiskGb, disk}} {
		if f.reported > 0 && f.reported < f.held {
			problems = append(problems, fmt.Sprintf("%s %d is below the %d its VMs hold", f.name, f.reported, f.held))
		}
	}
	// A held GPU is named by itself, never by its holder: the refusal goes
	// to whoever reports the node, who is told what the node runs only
	// through its assignments, not which VM of which organization holds what.
	var held []struct {
		ID   string
		UUID string
		Idx  int
	}
	if err := tx.Table("gpus").Select("id, uuid, idx").
		Where("node_id = ? AND holder_vm_id IS NOT NULL", node.ID).Order("idx").Scan(&held).Error; err != nil {
		return err
	}
	reported := map[string]bool{}
	reportedIdx := map[int]bool{}
	for _, g := range inv.GPUs {
		reported[g.UUID] = true
		reportedIdx[g.Index] = true
	}
	for _, g := range held {
		// A row without a UUID is matched by its index (reconcileGPUs).
		if (g.UUID != "" && !reported[g.UUID]) || (g.UUID == "" && !reportedIdx[g.Idx]) {
			problems = append(problems, fmt.Sprintf("GPU %s (index %d), which a workload holds, is missing from it", orID(g.UUID, g.ID), g.Idx))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &InventoryShrinkError{NodeName: node.Name, Problems: problems}
}

func orID(uuid, id string) string {
	if uuid != "" {
		return uuid
	}
	return id
}
