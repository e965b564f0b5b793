package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Reaching a VM: the SSH public keys its create carried and the tail of
// its serial console its node pushed (migration 0025). Package compute
// checks the keys and reads the console for a tenant; package nodes
// decides which node may write a console.

// sshKeyRow is one row of vm_ssh_keys.
type sshKeyRow struct {
	VMID      string
	Position  int
	PublicKey string
}

func (sshKeyRow) TableName() string { return "vm_ssh_keys" }

// InsertSSHKeys writes VM vmID's keys, in order, in the transaction that
// inserts its row; none is nothing.
func (s *Store) InsertSSHKeys(tx *Txn, vmID string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	rows := make([]sshKeyRow, len(keys))
	for i, k := range keys {
		rows[i] = sshKeyRow{VMID: vmID, Position: i, PublicKey: k}
	}
	return tx.db.Create(&rows).Error
}

// SSHKeysOf answers the keys of the VMs vmIDs, each in its create's
// order; a VM without keys has no entry.
func (s *Store) SSHKeysOf(ctx context.Context, vmIDs []string) (map[string][]string, error) {
	return sshKeysOf(s.WithContext(ctx), vmIDs)
}

func sshKeysOf(db *gorm.DB, vmIDs []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(vmIDs) == 0 {
		return out, nil
	}
	var rows []sshKeyRow
	if err := db.Where("vm_id IN ?", vmIDs).Order("vm_id, position").Find(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.VMID] = append(out[r.VMID], r.PublicKey)
	}
	return out, nil
}

// Console is the stored tail of a VM's serial console.
type Console struct {
	VMID       string
	NodeID     string
	Output     []byte
	CapturedAt time.Time
}

func (Console) TableName() string { return "vm_consoles" }

// PutConsole replaces VM vmID's stored console with output, pushed by
// node nodeID at at (the caller has bounded it and checked the node).
func (s *Store) PutConsole(tx *Txn, vmID, nodeID string, output []byte, at time.Time) error {
	if output == nil {
		output = []byte{}
	}
	return tx.db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "vm_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"node_id", "output", "captured_at"})}).
		Create(&Console{VMID: vmID, NodeID: nodeID, Output: output, CapturedAt: at.UTC()}).Error
}

// ConsolesOf answers the stored consoles of the VMs ids of organization
// orgID (others' and deleted rows' are never read); a VM with none has
// no entry.
func (s *Store) ConsolesOf(ctx context.Context, orgID string, ids []string) ([]*Console, error) {
	out := []*Console{}
	if len(ids) == 0 {
		return out, nil
	}
	err := s.WithContext(ctx).Table("vm_consoles c").Select("c.vm_id, c.node_id, c.output, c.captured_at").
		Joins("JOIN vms v ON v.id = c.vm_id").
		Where("v.organization_id = ? AND v.deleted_at IS NULL AND c.vm_id IN ?", orgID, ids).
		Order("c.vm_id").Find(&out).Error
	return out, err
}

// VMPlacement is what a node's push is checked against: the row's node
// (its id, name and cluster; empty when it has none) and kind.
type VMPlacement struct {
	ID             string
	CapabilityTier string
	NodeID         string
	NodeName       string
	ClusterID      string
}

// VMPlacementOf answers row id's node and kind, nil when there is no
// such row or it is deleted.
func (s *Store) VMPlacementOf(tx *Txn, id string) (*VMPlacement, error) {
	var rows []VMPlacement
	err := tx.db.Table("vms v").
		Select("v.id, v.capability_tier, COALESCE(n.id, '') AS node_id, COALESCE(n.name, '') AS node_name, COALESCE(n.cluster_id, '') AS cluster_id").
		Joins("LEFT JOIN nodes n ON n.id = v.node_id").
		Where("v.id = ? AND v.deleted_at IS NULL", id).Limit(1).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}
