package rest

import (
	"context"
	"errors"
	"io"
	"net/http"

	"gpugraph/internal/agent/agentapi"
	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/services/nodes"
)

// The node agent's report paths, answered by package nodes. They answer errors in
// OpenRelay's shape, {"error": {"code", "message"}}, like the other /v1
// path; the agent re-sends its inventory on a 404 from the heartbeat.

// maxReportBytes bounds a report body; a full inventory of 8 GPUs is ~2 KiB.
const maxReportBytes = 1 << 20

// infrastructure is the agents' paths' policy: reports keep their own
// path around the public budget and the tenants' rate limits.
var infrastructure = route.Policy{MaxBody: maxReportBytes, Infrastructure: true, API: route.OpenRelay}

func (api *API) agentRoutes() []endpoint {
	return []endpoint{
		{"POST /v1/agent/inventory", Costs(infrastructure, api.reporting(api.agentInventory))},
		{"POST /v1/agent/heartbeat", Costs(infrastructure, api.reporting(api.agentHeartbeat))},
		{"POST " + agentapi.RegisterPath, Costs(infrastructure, http.HandlerFunc(api.agentRegister))},
		{"PUT /v1/agent/vms/{id}/console", Costs(infrastructure, api.reporting(api.agentConsole))},
	}
}

type reporterKey struct{}

// reporting serves a report path: package nodes resolves a node
// credential, and refuses anything else (an API key) unless the server
// runs in legacy mode and it holds nodes.report. Both are checked before
// the body is read (401/403 before 400).
func (api *API) reporting(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		c, keyErr := auth.Authenticate(ctx)
		who, err := api.Services.Nodes.Identify(ctx, auth.BearerToken(r), c, keyErr)
		if err != nil {
			route.WriteOpenRelayError(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(ctx, reporterKey{}, who))
		if err := h(w, r); err != nil {
			route.WriteOpenRelayError(w, r, err)
		}
	})
}

func reporterOf(r *http.Request) nodes.Reporter {
	who, _ := r.Context().Value(reporterKey{}).(nodes.Reporter)
	return who
}

// agentRegister exchanges the bootstrap token (the bearer token) for a
// node credential; the body, if any, is ignored.
func (api *API) agentRegister(w http.ResponseWriter, r *http.Request) {
	out, err := api.Services.NodeID.Register(r.Context(), auth.BearerToken(r))
	if err != nil {
		route.WriteOpenRelayError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (api *API) agentInventory(w http.ResponseWriter, r *http.Request) error {
	var in agentapi.InventoryRequest
	if err := decodeAgentReport(w, r, &in); err != nil {
		return err
	}
	rep, err := api.Services.Nodes.ReportInventory(r.Context(), reporterOf(r), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if rep.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, reportBodyOf(rep))
	return nil
}

func (api *API) agentHeartbeat(w http.ResponseWriter, r *http.Request) error {
	var in agentapi.HeartbeatRequest
	if err := decodeAgentReport(w, r, &in); err != nil {
		return err
	}
	rep, err := api.Services.Nodes.ReportHeartbeat(r.Context(), reporterOf(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reportBodyOf(rep))
	return nil
}

// reportBodyOf is the answer to either report: the node, and what
// should run on it (an agent that predates the list ignores it).
func reportBodyOf(rep nodes.Report) agentapi.ReportResponse {
	return agentapi.ReportResponse{NodeID: rep.NodeID, Status: string(rep.Status), Workloads: rep.Workloads}
}

// decodeAgentReport reads an agent's inventory or heartbeat: one JSON
// object (edge.DecodeJSON: a name given twice, data after the object, a
// name in another case are refused). Fields it does not know are ignored,
// so a newer agent can report to an older server.
func decodeAgentReport(w http.ResponseWriter, r *http.Request, into any) error {
	return decodeBody(w, r, into, maxReportBytes, 0)
}

// agentConsole keeps the tail of a VM's serial console its node pushed:
// the body is the raw bytes (any content type), of which the last
// agentapi.ConsoleBytes are kept. 204 when kept.
func (api *API) agentConsole(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReportBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return apierr.New(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "the request body is larger than %d bytes", maxReportBytes)
	case err != nil:
		return err
	}
	if err := api.Services.Nodes.PutConsole(r.Context(), reporterOf(r), r.PathValue("id"), body); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
