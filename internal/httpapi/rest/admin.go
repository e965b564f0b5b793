package rest

import (
	"encoding/json"
	"net/http"
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/services/fleet"
	"gpugraph/models"
)

// The fleet operator's paths (nodes.admin), in OpenRelay's error shape.
func (api *API) adminRoutes() []endpoint {
	admin := api.Services.Fleet.MayAdminister
	return []endpoint{
		{"PUT /v1/admin/nodes/{id}/leaving-at", openRelay(admin, api.setLeavingAt)},
		{"POST /v1/admin/nodes/{id}/reclaim", openRelay(admin, api.reclaimNode)},
		{"PUT /v1/admin/organizations/{id}/state", openRelay(admin, api.setOrganizationState)},
		{"POST /v1/admin/nodes/enroll", openRelay(api.Services.NodeID.MayEnroll, api.enrollNode)},
	}
}

// maxAdminBody bounds an operator's request body.
const maxAdminBody = 4 << 10

// decodeAdminBody reads an operator's request body (the /v1/admin paths
// and the credential administration): a member the path does not take is
// refused, naming it (a misspelt permissions would otherwise create a key
// holding none).
func decodeAdminBody(w http.ResponseWriter, r *http.Request, into any) error {
	return decodeBody(w, r, into, maxAdminBody, bounds.KnownMembers)
}

// adminNodeJSON answers a node change: the node's decommission state and
// how many of its workloads the change moved.
type adminNodeJSON struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Status    models.NodeStatus `json:"status"`
	LeavingAt *string           `json:"leavingAt"`
	Workloads int64             `json:"workloadsChanged"`
}

func nodeChangeJSON(c *fleet.NodeChange) adminNodeJSON {
	n := c.Node
	return adminNodeJSON{ID: n.ID, Name: n.Name, Status: n.Status, LeavingAt: timeOrNil(n.LeavingAt), Workloads: c.Workloads}
}

// setLeavingAt reads {"leavingAt": "<RFC 3339>"} (null clears it).
func (api *API) setLeavingAt(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		LeavingAt json.RawMessage `json:"leavingAt"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	var at *time.Time
	switch raw := string(body.LeavingAt); raw {
	case "":
		return apierr.BadRequest(`leavingAt is required: an RFC 3339 instant, or null to clear it`)
	case "null":
	default:
		var s string
		if err := json.Unmarshal(body.LeavingAt, &s); err != nil {
			return apierr.BadRequest("leavingAt %s is not a string; send an RFC 3339 instant such as 2026-12-03T00:00:00Z", raw)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return apierr.BadRequest("leavingAt %q is not an RFC 3339 instant with a zone (2026-12-03T00:00:00Z)", s)
		}
		at = &t
	}
	c, err := api.Services.Fleet.SetLeavingAt(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"), at)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nodeChangeJSON(c))
	return nil
}

// reclaimNode stops the node's interruptible workloads for its owner.
func (api *API) reclaimNode(w http.ResponseWriter, r *http.Request) error {
	c, err := api.Services.Fleet.Reclaim(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nodeChangeJSON(c))
	return nil
}

// setOrganizationState reads {"state": "suspended"}: active, suspended,
// balance_exhausted or deleted.
func (api *API) setOrganizationState(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		State *string `json:"state"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	if body.State == nil {
		return apierr.BadRequest("state is required: active, suspended, balance_exhausted or deleted")
	}
	state, err := fleet.ParseOrgState(*body.State)
	if err != nil {
		return err
	}
	c, err := api.Services.Fleet.SetOrganizationState(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"), state)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": c.Organization.ID, "state": c.Organization.State, "workloadsStopped": c.Stopped,
	})
	return nil
}

// enrollNode reads {"nodeName", "clusterId"} and answers the one-time
// bootstrap token, 201; it is shown only here.
func (api *API) enrollNode(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		NodeName  string `json:"nodeName"`
		ClusterID string `json:"clusterId"`
	}
	if err := decodeAdminBody(w, r, &body); err != nil {
		return err
	}
	e, err := api.Services.NodeID.Enroll(r.Context(), auth.FromContext(r.Context()), body.NodeName, body.ClusterID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"nodeName": e.NodeName, "clusterId": e.ClusterID,
		"bootstrapToken": e.BootstrapToken, "expiresAt": models.FormatTime(e.ExpiresAt)})
	return nil
}
