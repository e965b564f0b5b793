package store

import (
	"context"
	"errors"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"gpugraph/models"
)

// The catalog: GPU models and instance types. Models are read by every
// caller (GPUModel is the one reader of a model by id) and added by a node
// agent's report naming a model not yet known; instance types are written
// by the data set loader (WriteDataSet) and by an operator.

// GPUModelsByName reads, by id, the catalog entries named one of names.
func (s *Store) GPUModelsByName(tx *Txn, names []string) ([]models.GPUModel, error) {
	var known []models.GPUModel
	err := tx.db.Where("name IN ?", names).Order("id").Find(&known).Error
	return known, err
}

// GPUModel reads the catalog entry id inside tx; nil when there is none.
// It is the one reader of a model by id: the placing, stopping and quota
// transactions and a report naming its GPUs all read it in the
// transaction whose decision it feeds; a read outside any transaction (a
// quota's answer) batches through GPUModelsByIDs, as the loaders do.
func (s *Store) GPUModel(tx *Txn, id string) (*models.GPUModel, error) {
	var m []models.GPUModel
	if err := tx.db.Where("id = ?", id).Limit(1).Find(&m).Error; err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return &m[0], nil
}

// AddGPUModel inserts a catalog entry unless its id is taken: a concurrent
// report may add the same entry, and its row is then the caller's.
func (s *Store) AddGPUModel(tx *Txn, m *models.GPUModel) error {
	return tx.db.Clauses(clause.OnConflict{DoNothing: true}).Create(m).Error
}

// GPUModelsByIDs reads these catalog entries.
func (s *Store) GPUModelsByIDs(ctx context.Context, ids []string) ([]*models.GPUModel, error) {
	cond, arg := s.in("id", ids)
	return gpuModels.read(ctx, s, nil, nil, cond, arg)
}

// ErrNoInstanceType says that no instance type has the name asked for.
var ErrNoInstanceType = errors.New("store: no such instance type")

// ErrNoGPUModel says that a row names a GPU model the catalog lacks.
var ErrNoGPUModel = errors.New("store: no such GPU model")

// InstanceType reads the type name; ErrNoInstanceType when there is none.
func (s *Store) InstanceType(ctx context.Context, name string) (models.InstanceType, error) {
	var t models.InstanceType
	err := s.WithContext(ctx).Where("name = ?", name).Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return t, ErrNoInstanceType
	}
	return t, err
}

// InstanceTypes lists the catalog by name; never nil.
func (s *Store) InstanceTypes(ctx context.Context) ([]models.InstanceType, error) {
	out := []models.InstanceType{}
	return out, s.WithContext(ctx).Order("name").Find(&out).Error
}

// PutInstanceType writes t, replacing the type of that name, and reports
// whether it is new. A GPU model the catalog lacks is ErrNoGPUModel.
func (s *Store) PutInstanceType(ctx context.Context, t models.InstanceType) (created bool, err error) {
	err = s.InTx(ctx, func(tx *Txn) error {
		if t.GPUModelID != nil {
			ok, err := gpuModelExists(tx.db, *t.GPUModelID)
			if err != nil {
				return err
			}
			if !ok {
				return ErrNoGPUModel
			}
		}
		// Insert unless the name is taken, then replace: a racing writer's
		// row is either seen here or waited for (PostgreSQL's conflict
		// check), never a unique violation.
		res := tx.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&t)
		if res.Error != nil {
			return res.Error
		}
		created = res.RowsAffected == 1
		if created {
			return nil
		}
		return tx.db.Model(&models.InstanceType{}).Where("name = ?", t.Name).
			Select("*").Omit("name").Updates(&t).Error
	})
	return created, err
}

// DeleteInstanceType deletes the type name; ErrNoInstanceType when there
// is none. VMs created from it keep what they were given.
func (s *Store) DeleteInstanceType(ctx context.Context, name string) error {
	res := s.WithContext(ctx).Where("name = ?", name).Delete(&models.InstanceType{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNoInstanceType
	}
	return nil
}

func gpuModelExists(db *gorm.DB, id string) (bool, error) {
	var n int64
	err := db.Model(&models.GPUModel{}).Where("id = ?", id).Count(&n).Error
	return n > 0, err
}

// GPUModels lists the catalog by name.
func (s *Store) GPUModels(ctx context.Context) ([]*models.GPUModel, error) {
	out := []*models.GPUModel{}
	return out, s.WithContext(ctx).Order("name, id").Find(&out).Error
}
