package quotas

import (
	"context"
	"errors"
	"net/http"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// The codes the quota paths answer besides the generic ones.
const (
	CodeQuotaExceeded        = "QUOTA_EXCEEDED"
	CodeQuotaNotFound        = "QUOTA_NOT_FOUND"
	CodeOrganizationNotFound = "ORGANIZATION_NOT_FOUND"
	CodeGPUModelNotFound     = "GPU_MODEL_NOT_FOUND"
)

// Service is the GPU quota paths for both faces.
type Service struct{ store *store.Store }

// New is the quota service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// Quota is one quota as it is read: the limit, the model it is of and the
// GPUs of that model the organization holds or awaits now.
type Quota struct {
	OrganizationID string
	Model          *models.GPUModel
	Limit          int
	Used           int
	UpdatedAt      time.Time
}

// MayAdminister is what setting and lifting a quota needs: nodes.admin.
// A face that reads a body first asks it first.
func (s *Service) MayAdminister(caller *auth.Caller) error { return caller.Require(auth.NodesAdmin) }

// MayRead is what reading quotas needs: compute.read for the caller's own
// organization; an operator (nodes.admin) reads any. Which organization is
// asked for is checked by List, where it is known.
func (s *Service) MayRead(caller *auth.Caller) error {
	if caller.Can(auth.NodesAdmin) {
		return nil
	}
	return caller.Require(auth.ComputeRead)
}

// List answers the quotas of organization orgID by model id. Another
// organization's quotas are not there for a caller that is not an
// operator: 404, as for an organization that does not exist.
func (s *Service) List(ctx context.Context, caller *auth.Caller, orgID string) ([]Quota, error) {
	if err := s.MayRead(caller); err != nil {
		return nil, err
	}
	if err := s.organization(ctx, caller, orgID); err != nil {
		return nil, err
	}
	rows, err := s.store.GPUQuotas(ctx, orgID)
	if err != nil {
		return nil, err
	}
	cat, err := s.catalog(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Quota, len(rows))
	for i, r := range rows {
		out[i] = quotaOf(r, cat[r.GPUModelID])
	}
	return out, nil
}

// Set sets organization orgID's quota for model modelID to limit GPUs and
// reports whether it is new. An organization or model that does not exist
// is a 404 naming it; limit must be 0 or more (0: none of that model).
func (s *Service) Set(ctx context.Context, caller *auth.Caller, orgID, modelID string, limit int) (Quota, bool, error) {
	if err := s.MayAdminister(caller); err != nil {
		return Quota{}, false, err
	}
	if err := bounds.Text("organization id", orgID, bounds.MaxID); err != nil {
		return Quota{}, false, err
	}
	if err := bounds.Text("gpuModelId", modelID, bounds.MaxID); err != nil {
		return Quota{}, false, err
	}
	if err := bounds.Int32("limit", int64(limit)); err != nil {
		return Quota{}, false, err
	}
	q := models.GPUQuota{OrganizationID: orgID, GPUModelID: modelID, Limit: limit, UpdatedAt: store.Now()}
	created, err := s.store.PutGPUQuota(ctx, q)
	switch {
	case errors.Is(err, store.ErrNoOrganization):
		return Quota{}, false, orgNotFound(orgID)
	case errors.Is(err, store.ErrNoGPUModel):
		return Quota{}, false, modelNotFound(modelID)
	case err != nil:
		return Quota{}, false, err
	}
	rows, err := s.store.GPUQuotas(ctx, orgID)
	if err != nil {
		return Quota{}, false, err
	}
	ms, err := s.store.GPUModelsByIDs(ctx, []string{modelID})
	if err != nil {
		return Quota{}, false, err
	}
	var m *models.GPUModel // nil: removed from the catalog since the write
	if len(ms) > 0 {
		m = ms[0]
	}
	for _, r := range rows {
		if r.GPUModelID == modelID {
			return quotaOf(r, m), created, nil
		}
	}
	// Lifted by another operator between the write and this read.
	return quotaOf(store.QuotaUse{GPUQuota: q}, m), created, nil
}

// Delete lifts organization orgID's quota for model modelID: no limit on
// that model from now on. One it does not have is a 404.
func (s *Service) Delete(ctx context.Context, caller *auth.Caller, orgID, modelID string) error {
	if err := s.MayAdminister(caller); err != nil {
		return err
	}
	if err := s.organization(ctx, caller, orgID); err != nil {
		return err
	}
	if err := bounds.Text("gpuModelId", modelID, bounds.MaxID); err != nil {
		return err
	}
	err := s.store.DeleteGPUQuota(ctx, orgID, modelID)
	if errors.Is(err, store.ErrNoGPUQuota) {
		return apierr.NotFound(CodeQuotaNotFound, "organization %s has no GPU quota for %q", orgID, modelID)
	}
	return err
}

// organization refuses an organization that does not exist or, for a
// caller that is not an operator, is not its own: the same 404 for both.
func (s *Service) organization(ctx context.Context, caller *auth.Caller, orgID string) error {
	if err := bounds.Text("organization id", orgID, bounds.MaxID); err != nil {
		return err
	}
	if !caller.Can(auth.NodesAdmin) && orgID != caller.OrganizationID {
		return orgNotFound(orgID)
	}
	ok, err := s.store.OrganizationExists(ctx, orgID)
	if err != nil {
		return err
	}
	if !ok {
		return orgNotFound(orgID)
	}
	return nil
}

func (s *Service) catalog(ctx context.Context) (map[string]*models.GPUModel, error) {
	ms, err := s.store.GPUModels(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*models.GPUModel, len(ms))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out, nil
}

func quotaOf(r store.QuotaUse, m *models.GPUModel) Quota {
	if m == nil {
		m = &models.GPUModel{ID: r.GPUModelID, Name: r.GPUModelID}
	}
	return Quota{OrganizationID: r.OrganizationID, Model: m, Limit: r.Limit, Used: r.Used, UpdatedAt: r.UpdatedAt.UTC()}
}

func orgNotFound(id string) error {
	return apierr.NotFound(CodeOrganizationNotFound, "there is no organization %q", id)
}

func modelNotFound(id string) error {
	return apierr.NotFound(CodeGPUModelNotFound, "there is no GPU model %q in the catalog", id)
}

// Ask is what a placement would add to its organization's use: gpus GPUs
// of model modelID for VM vmID (whose own row, in whatever status, is not
// counted as used: it is what asks).
type Ask struct {
	OrganizationID string
	VMID           string
	GPUModelID     string
	GPUs           int
}

// Check refuses, inside the placing transaction tx, a placement that would
// take the organization past its quota for the model: 409 QUOTA_EXCEEDED,
// "GPU quota for NVIDIA H100 80GB HBM3 is 8; 6 in use, 4 asked". No quota
// is no limit, and then nothing is locked or counted.
//
// Call it after the VM row's lock and before any node row's (the lock
// order of internal/store/locks.go): it locks the quota row, so the count it
// makes holds until tx ends, and two placements of one organization never
// both take the quota's last GPUs. The placement must write the VM's new
// status (one of models.QuotaStatuses) in tx.
func Check(st *store.Store, tx *store.Txn, a Ask) error {
	if a.GPUs <= 0 || a.GPUModelID == "" {
		return nil
	}
	q, err := st.LockGPUQuota(tx, a.OrganizationID, a.GPUModelID)
	if err != nil || q == nil {
		return err
	}
	used, err := st.QuotaGPUsUsed(tx, a.OrganizationID, a.GPUModelID, a.VMID)
	if err != nil {
		return err
	}
	if used+a.GPUs <= q.Limit {
		return nil
	}
	name := a.GPUModelID
	if m, err := st.GPUModel(tx, a.GPUModelID); err == nil && m != nil && m.Name != "" {
		name = m.Name
	}
	return apierr.New(http.StatusConflict, CodeQuotaExceeded, "GPU quota for %s is %d; %d in use, %d asked", name, q.Limit, used, a.GPUs)
}
