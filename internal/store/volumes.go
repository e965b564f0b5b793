package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"gpugraph/models"
)

// Volumes (models.Volume) follow the lifecycle: Apply binds one to every
// run it starts (a transition to deploying) and deletes a row's when its
// disk goes with it (a transition marked DiskGone); a data set's rows get
// theirs when written. Nothing else writes the table.

// volumeBinding is what binding a run to a volume did, for its event and
// the restart's answer.
type volumeBinding struct {
	ID string
	// Fresh: the binding made the volume (empty). Gone: the row had one
	// before, elsewhere or deleted with its node: the disk is gone.
	Fresh, Gone bool
}

// bindVolume binds the run of vm that gen starts on node nodeID to its
// volume: the row's live one when it is on that node, else a fresh one
// made there (a live one elsewhere is deleted first: one node holds it,
// and the row left it). A row without a disk or volume binds none. A
// fresh row (inserted in this transaction) has none: nothing is read.
func bindVolume(db *gorm.DB, vm *models.VM, nodeID string, gen int, now time.Time, fresh bool) (volumeBinding, error) {
	size := vm.VolumeSizeGb()
	if size <= 0 || nodeID == "" {
		return volumeBinding{}, nil
	}
	var held []models.Volume
	if !fresh { // a row inserted in this transaction has no volume yet
		if err := db.Where("vm_id = ?", vm.ID).Order("created_at, id").Find(&held).Error; err != nil {
			return volumeBinding{}, err
		}
		for _, v := range held {
			if v.DeletedAt == nil && v.NodeID == nodeID {
				return volumeBinding{ID: v.ID}, nil
			}
		}
		if err := db.Model(&models.Volume{}).Where("vm_id = ? AND deleted_at IS NULL", vm.ID).
			Update("deleted_at", now).Error; err != nil {
			return volumeBinding{}, err
		}
	}
	id := volumeName(vm.ID, gen, held)
	v := models.Volume{ID: id, OrganizationID: vm.OrganizationID, VMID: vm.ID, NodeID: nodeID, SizeGb: size,
		Fresh: true, CreatedAt: now}
	if err := db.Create(&v).Error; err != nil {
		return volumeBinding{}, err
	}
	return volumeBinding{ID: id, Fresh: true, Gone: len(held) > 0}, nil
}

// volumeName names the volume a row's run gen is the first on:
// vol-<row>-<generation>, which no other volume of the row has (a row's
// generations only grow), unless a data set wrote the row back to an
// earlier generation; then the next free suffix.
func volumeName(vmID string, gen int, held []models.Volume) string {
	taken := make(map[string]bool, len(held))
	for _, v := range held {
		taken[v.ID] = true
	}
	id := fmt.Sprintf("vol-%s-%d", vmID, gen)
	for n := 2; taken[id]; n++ {
		id = fmt.Sprintf("vol-%s-%d-%d", vmID, gen, n)
	}
	return id
}

// deleteVolumes marks the live volumes of the rows vmIDs deleted: their
// disk is gone (the row terminated, expired, or its node removed).
func deleteVolumes(db *gorm.DB, vmIDs []string, now time.Time) error {
	for part := range slices.Chunk(vmIDs, 500) {
		if err := db.Model(&models.Volume{}).Where("vm_id IN ? AND deleted_at IS NULL", part).
			Update("deleted_at", now).Error; err != nil {
			return err
		}
	}
	return nil
}

// volumeUsed marks row vmID's live volume as holding data: a run on it
// reached running, so it is no longer fresh.
func volumeUsed(db *gorm.DB, vmID string) error {
	return db.Model(&models.Volume{}).Where("vm_id = ? AND deleted_at IS NULL AND fresh", vmID).
		Update("fresh", false).Error
}

// Volume is the live volume of row vmID, nil when it has none.
func (s *Store) Volume(ctx context.Context, vmID string) (*models.Volume, error) {
	var vs []models.Volume
	if err := s.WithContext(ctx).Where("vm_id = ? AND deleted_at IS NULL", vmID).Limit(1).Find(&vs).Error; err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, nil
	}
	return &vs[0], nil
}

// Volumes are every volume row vmID has had, oldest first: the live one
// last, with those deleted before it.
func (s *Store) Volumes(ctx context.Context, vmID string) ([]models.Volume, error) {
	var vs []models.Volume
	err := s.WithContext(ctx).Where("vm_id = ?", vmID).Order("created_at, id").Find(&vs).Error
	return vs, err
}

// writeVolumes gives every row of a data set that holds a disk or volume
// on a node (not terminated, pending or removed with its node) its volume
// there, as a first run would; a row written back onto another node moves
// on to a fresh one.
func writeVolumes(db *gorm.DB, vms []models.VM, now time.Time) error {
	for i := range vms {
		vm := &vms[i]
		if vm.NodeID == nil || vm.DeletedAt != nil || vm.Status == models.VMTerminated || vm.Status == models.VMPending ||
			vm.StatusReason == models.ReasonNodeRemoved {
			continue
		}
		b, err := bindVolume(db, vm, *vm.NodeID, vm.Generation, now, false)
		if err != nil {
			return err
		}
		// A data set's running rows have run: their volume holds data.
		if b.Fresh && vm.Status != models.VMDeploying {
			if err := volumeUsed(db, vm.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// VolumesOfVMs reads the live volume of each of the organization's rows
// vmIDs, with the mount path its tier gives it: one statement for a page
// of VMs (GraphQL's VM.volume). Another organization's rows, deleted rows
// and rows with no live volume have none.
func (s *Store) VolumesOfVMs(ctx context.Context, orgID string, vmIDs []string) ([]*models.Volume, error) {
	cond, arg := s.in("vo.vm_id", vmIDs)
	return rowsOf(ctx, s, scanVolume,
		`SELECT vo.id, vo.organization_id, vo.vm_id, vo.node_id, vo.size_gb, vo.fresh, vo.created_at, vm.capability_tier
		 FROM volumes vo JOIN vms vm ON vm.id = vo.vm_id
		 WHERE vo.organization_id = ? AND vm.organization_id = ? AND vo.deleted_at IS NULL AND vm.deleted_at IS NULL AND `+cond,
		orgID, orgID, arg)
}

// scanVolume scans a row of VolumesOfVMs; a pod's volume is mounted at
// its /workspace.
func scanVolume(r rowScanner, v *models.Volume) error {
	var tier string
	if err := r.Scan(&v.ID, &v.OrganizationID, &v.VMID, &v.NodeID, &v.SizeGb, &v.Fresh, &v.CreatedAt, &tier); err != nil {
		return err
	}
	if tier == models.TierPod {
		mount := models.WorkspaceMount
		v.MountPath = &mount
	}
	return nil
}
