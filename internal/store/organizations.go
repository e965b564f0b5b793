package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"gpugraph/models"
)

// Organizations: their rows, their tenant ids, and the lock and state an
// operator's fleet paths take on one.

// OrganizationExists reports whether organization id is stored.
func (s *Store) OrganizationExists(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.DB.WithContext(ctx).Table("organizations").Where("id = ?", id).Count(&n).Error
	return n > 0, err
}

// ListOrganizations reads every organization, by id.
func (s *Store) ListOrganizations(ctx context.Context) ([]models.Organization, error) {
	var out []models.Organization
	err := s.DB.WithContext(ctx).Order("id").Find(&out).Error
	return out, err
}

// TenantTakenError is an organization refused because another one holds
// its Run:ai tenant: each tenant's pods are read by one organization's keys.
type TenantTakenError struct {
	TenantID int
	Holder   models.Organization // its id and name
}

func (e *TenantTakenError) Error() string {
	return fmt.Sprintf("store: tenant %d is held by organization %s", e.TenantID, e.Holder.ID)
}

// CreateOrganization stores a new active organization: ErrDuplicate when
// its id is taken, *TenantTakenError when another organization holds its
// tenant (the unique index organizations_tenant_unique keeps both true when two
// creations race; the loser is told which holds it).
func (s *Store) CreateOrganization(ctx context.Context, id, name string, tenantID int, infiniband bool) error {
	db := s.DB.WithContext(ctx)
	err := db.Exec(`INSERT INTO organizations (id, name, tenant_id, infiniband_enabled, state)
		VALUES (?, ?, ?, ?, 'active')`, id, name, tenantID, infiniband).Error
	if err == nil || !IsUniqueViolation(err) {
		return err
	}
	// Which key was taken: the id first, as the caller named it first.
	if ok, rerr := s.OrganizationExists(ctx, id); rerr != nil || ok {
		return cmp.Or(rerr, ErrDuplicate)
	}
	holders, rerr := tenantHolders(db, []int{tenantID})
	if rerr != nil {
		return rerr
	}
	if h, ok := holders[tenantID]; ok {
		return &TenantTakenError{TenantID: tenantID, Holder: h}
	}
	return err
}

// TenantHolders answers the stored organizations that hold the tenants
// tenantIDs, by tenant (each tenant has at most one).
func (s *Store) TenantHolders(tx *Txn, tenantIDs []int) (map[int]models.Organization, error) {
	return tenantHolders(tx.db, tenantIDs)
}

func tenantHolders(db *gorm.DB, tenantIDs []int) (map[int]models.Organization, error) {
	out := map[int]models.Organization{}
	for part := range slices.Chunk(tenantIDs, dataSetBatch) {
		var rows []models.Organization
		if err := db.Table("organizations").Select("id", "name", "tenant_id").Where("tenant_id IN ?", part).Find(&rows).Error; err != nil {
			return nil, err
		}
		for _, o := range rows {
			out[o.TenantID] = o
		}
	}
	return out, nil
}

// LockOrganization locks and reads organization id; nil when there is none.
func (s *Store) LockOrganization(tx *Txn, id string) (*models.Organization, error) {
	var o models.Organization
	err := s.forUpdate(tx.db.Where("id = ?", id)).Take(&o).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// SetOrganizationState writes organization id's state, and tells open
// streams (at commit) to check their credentials again: a suspended or
// deleted organization's streams close.
func (s *Store) SetOrganizationState(tx *Txn, id string, state models.OrgState) error {
	if err := tx.db.Model(&models.Organization{}).Where("id = ?", id).Update("state", state).Error; err != nil {
		return err
	}
	return s.note(tx.db, TopicCredentials, 0)
}

// ErrNoOrganization says that a row names an organization that does not exist.
var ErrNoOrganization = errors.New("store: no such organization")

// Organization reads one organization, which must exist.
func (s *Store) Organization(tx *Txn, id string) (*models.Organization, error) {
	var o models.Organization
	if err := tx.db.Where("id = ?", id).Take(&o).Error; err != nil {
		return nil, err
	}
	return &o, nil
}
