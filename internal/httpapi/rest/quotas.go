package rest

import (
	"net/http"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/quotas"
	"gpugraph/models"
)

// An organization's GPU quotas: read by the operator and by the
// organization itself, set and lifted by the operator (nodes.admin).
func (api *API) quotaRoutes() []endpoint {
	svc := api.Services.Quotas
	return []endpoint{
		{"GET /v1/organizations/{org}/gpu-quotas", openRelay(svc.MayRead, api.listQuotas)},
		{"PUT /v1/organizations/{org}/gpu-quotas/{gpuModelId}", openRelay(svc.MayAdminister, api.putQuota)},
		{"DELETE /v1/organizations/{org}/gpu-quotas/{gpuModelId}", openRelay(svc.MayAdminister, api.deleteQuota)},
	}
}

type quotaJSON struct {
	OrganizationID string `json:"organizationId"`
	GPUModelID     string `json:"gpuModelId"`
	GPUModelName   string `json:"gpuModelName"`
	Limit          int    `json:"limit"`
	Used           int    `json:"used"`
	UpdatedAt      string `json:"updatedAt"`
}

func encodeQuota(q quotas.Quota) quotaJSON {
	return quotaJSON{OrganizationID: q.OrganizationID, GPUModelID: q.Model.ID, GPUModelName: q.Model.Name,
		Limit: q.Limit, Used: q.Used, UpdatedAt: models.FormatTime(q.UpdatedAt)}
}

func (api *API) listQuotas(w http.ResponseWriter, r *http.Request) error {
	list, err := api.Services.Quotas.List(r.Context(), auth.FromContext(r.Context()), r.PathValue("org"))
	if err != nil {
		return err
	}
	out := struct {
		GPUQuotas []quotaJSON `json:"gpuQuotas"`
	}{make([]quotaJSON, len(list))}
	for i, q := range list {
		out.GPUQuotas[i] = encodeQuota(q)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// putQuota reads {"limit": 8}: 201 when the organization had no quota for
// the model, 200 when it replaced one.
func (api *API) putQuota(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Limit *int64 `json:"limit"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	if body.Limit == nil {
		return apierr.BadRequest("limit is required: the most GPUs of the model the organization may hold or await at once")
	}
	q, created, err := api.Services.Quotas.Set(r.Context(), auth.FromContext(r.Context()), r.PathValue("org"), r.PathValue("gpuModelId"), int(*body.Limit))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, encodeQuota(q))
	return nil
}

func (api *API) deleteQuota(w http.ResponseWriter, r *http.Request) error {
	if err := api.Services.Quotas.Delete(r.Context(), auth.FromContext(r.Context()), r.PathValue("org"), r.PathValue("gpuModelId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
