package rest

import (
	"errors"
	"io"
	"net/http"

	"gpugraph/internal/auth"
	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
	"gpugraph/models"
)

// Cluster connectors: the operator enrolls and revokes a cluster
// (OpenRelay's error shape, as every /v1/admin path), and the cluster's
// connector writes its pods, workloads and projects (Run:ai's shape, as
// every /api/v1 path).

// clusterSync is the sync path's policy: a connector's batches keep
// their own path around the public budget and the tenants' rate limits,
// as the node agents' reports do.
var clusterSync = route.Policy{MaxBody: clusterbatch.MaxBody, Infrastructure: true, API: route.Runai}

func (api *API) clusterRoutes() []endpoint {
	may := api.Services.Clusters.MayEnroll
	return []endpoint{
		{"POST /v1/admin/clusters/enroll", openRelay(may, api.enrollCluster)},
		{"POST /v1/admin/clusters/{clusterId}/revoke", openRelay(may, api.revokeCluster)},
		{"POST /api/v1/clusters/{clusterId}/sync", Costs(clusterSync, http.HandlerFunc(api.syncCluster))},
	}
}

// enrollCluster reads {"clusterId", "tenantId"} and answers the cluster's
// credential, 201; it is shown only here.
func (api *API) enrollCluster(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ClusterID string `json:"clusterId"`
		TenantID  int    `json:"tenantId"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	e, err := api.Services.Clusters.Enroll(r.Context(), auth.FromContext(r.Context()), body.ClusterID, body.TenantID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"clusterId": e.ClusterID, "tenantId": e.TenantID,
		"credential": e.Credential, "enrolledAt": models.FormatTime(e.EnrolledAt)})
	return nil
}

// revokeCluster drops the cluster's credential; its pods stay.
func (api *API) revokeCluster(w http.ResponseWriter, r *http.Request) error {
	id, err := api.Services.Clusters.Revoke(r.Context(), auth.FromContext(r.Context()), r.PathValue("clusterId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"clusterId": id, "revoked": true})
	return nil
}

// syncCluster applies one batch: the credential is checked before the
// body is read (401/403 before 400 and 413).
func (api *API) syncCluster(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := api.Services.Clusters.Authenticate(ctx, auth.BearerToken(r))
	if err != nil {
		route.WriteRunaiError(w, r, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, clusterbatch.MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		err = apierr.New(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
			"the batch is larger than %d bytes: send a snapshot in parts (\"more\": true) and deltas of at most %d pods", clusterbatch.MaxBody, clusterbatch.MaxPods)
	}
	if err != nil {
		route.WriteRunaiError(w, r, err)
		return
	}
	out, err := api.Services.Clusters.Sync(ctx, id, r.PathValue("clusterId"), body)
	if err != nil {
		route.WriteRunaiError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}
