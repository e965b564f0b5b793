package store

import (
	"context"
	"errors"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// GPU quotas: an organization's most GPUs of one model at once, set by an
// operator. The check that places a VM (LockGPUQuota, then QuotaGPUsUsed)
// runs inside the placing transaction, after the VM row's lock and before
// any node's (see locks.go's lock order).

// ErrNoGPUQuota says that the organization has no quota for the model.
var ErrNoGPUQuota = errors.New("store: no such GPU quota")

// QuotaUse is a quota with the GPUs its organization's VMs of that model
// hold or await now.
type QuotaUse struct {
	models.GPUQuota
	Used int
}

// GPUQuotas lists the organization's quotas by model, each with what it
// uses now (one grouped read); never nil.
func (s *Store) GPUQuotas(ctx context.Context, orgID string) ([]QuotaUse, error) {
	var qs []models.GPUQuota
	db := s.WithContext(ctx)
	if err := db.Where("organization_id = ?", orgID).Order("gpu_model_id").Find(&qs).Error; err != nil {
		return nil, err
	}
	out := make([]QuotaUse, len(qs))
	if len(qs) == 0 {
		return out, nil
	}
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.GPUModelID
	}
	var used []struct {
		GPUModelID string
		Used       int
	}
	err := quotaScope(db, orgID).Where("gpu_model_id IN ?", ids).
		Select("gpu_model_id, COALESCE(SUM(gpu_count), 0) AS used").Group("gpu_model_id").Find(&used).Error
	if err != nil {
		return nil, err
	}
	by := make(map[string]int, len(used))
	for _, u := range used {
		by[u.GPUModelID] = u.Used
	}
	for i, q := range qs {
		out[i] = QuotaUse{GPUQuota: q, Used: by[q.GPUModelID]}
	}
	return out, nil
}

// PutGPUQuota writes q, replacing the organization's quota for the model,
// and reports whether it is new. An organization or model that does not
// exist is ErrNoOrganization or ErrNoGPUModel.
func (s *Store) PutGPUQuota(ctx context.Context, q models.GPUQuota) (created bool, err error) {
	err = s.InTx(ctx, func(tx *Txn) error {
		var n int64
		if err := tx.db.Model(&models.Organization{}).Where("id = ?", q.OrganizationID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return ErrNoOrganization
		}
		ok, err := gpuModelExists(tx.db, q.GPUModelID)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNoGPUModel
		}
		res := tx.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&q)
		if res.Error != nil {
			return res.Error
		}
		created = res.RowsAffected == 1
		if created {
			return nil
		}
		return tx.db.Model(&models.GPUQuota{}).Where("organization_id = ? AND gpu_model_id = ?", q.OrganizationID, q.GPUModelID).
			Updates(map[string]any{"gpu_limit": q.Limit, "updated_at": q.UpdatedAt}).Error
	})
	return created, err
}

// DeleteGPUQuota lifts the organization's quota for the model;
// ErrNoGPUQuota when it has none.
func (s *Store) DeleteGPUQuota(ctx context.Context, orgID, modelID string) error {
	res := s.WithContext(ctx).Where("organization_id = ? AND gpu_model_id = ?", orgID, modelID).Delete(&models.GPUQuota{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNoGPUQuota
	}
	return nil
}

// LockGPUQuota locks and reads the organization's quota for the model;
// nil when it has none (no limit, and nothing to lock). Every placement of
// the organization's VMs of that model takes this lock before it counts
// (QuotaGPUsUsed), so two of them never both fit the quota's last GPUs; an
// operator's change of the quota waits for them, or they for it.
func (s *Store) LockGPUQuota(tx *Txn, orgID, modelID string) (*models.GPUQuota, error) {
	var qs []models.GPUQuota
	err := s.forUpdate(tx.db.Where("organization_id = ? AND gpu_model_id = ?", orgID, modelID)).Limit(1).Find(&qs).Error
	if err != nil || len(qs) == 0 {
		return nil, err
	}
	return &qs[0], nil
}

// QuotaGPUsUsed sums the GPUs of the model that the organization's VMs and
// pods other than exceptVMID hold or await (models.QuotaStatuses).
func (s *Store) QuotaGPUsUsed(tx *Txn, orgID, modelID, exceptVMID string) (int, error) {
	var used int
	err := quotaScope(tx.db, orgID).Where("gpu_model_id = ? AND id <> ?", modelID, exceptVMID).
		Select("COALESCE(SUM(gpu_count), 0)").Find(&used).Error
	return used, err
}

// quotaScope is what counts against an organization's quotas: its rows in
// a quota status, and its rows still tearing down on a node an agent
// reports for (they hold their GPUs until the node says they are gone,
// deleted ones included).
func quotaScope(db *gorm.DB, orgID string) *gorm.DB {
	return db.Model(&models.VM{}).Where("organization_id = ?", orgID).
		Where("((vms.deleted_at IS NULL AND vms.status IN ?) OR "+tearingDownHolds("vms")+")", models.QuotaStatuses)
}
