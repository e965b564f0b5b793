package rest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"

	"gpugraph/agentapi"
	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/nodeid"
	"gpugraph/nodes"
)

// The node agent's report paths, answered by package nodes. They answer errors in
// OpenRelay's shape, {"error": {"code", "message"}}, like the other /v1
// path; the agent re-sends its inventory on a 404 from the heartbeat.

// maxReportBytes bounds a report body; a full inventory of 8 GPUs is ~2 KiB.
const maxReportBytes = 1 << 20

func (api *API) agentRoutes() []route {
	return []route{
		{"POST /v1/agent/inventory", api.reporting(api.agentInventory)},
		{"POST /v1/agent/heartbeat", api.reporting(api.agentHeartbeat)},
		{"POST " + agentapi.RegisterPath, http.HandlerFunc(api.agentRegister)},
	}
}

type reporterKey struct{}

// reporting serves a report path: a node credential is resolved here
// (nodeid); anything else is an API key, which package nodes refuses
// unless the server runs in legacy mode and it holds nodes.report. Both
// are checked before the body is read (401/403 before 400).
func (api *API) reporting(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		who := nodes.Reporter{KeysAccepted: api.NodeReportKeys, Caller: auth.FromContext(ctx)}
		if token := auth.BearerToken(r); nodeid.IsCredential(token) {
			id, err := nodeid.Authenticate(ctx, api.Store, token)
			if err != nil {
				WriteOpenRelayError(w, r, err)
				return
			}
			who.Node, who.Caller = id, nil
		} else if _, err := auth.Authenticate(ctx); err != nil && api.NodeReportKeys {
			// Legacy mode answers a bad key as every key path does.
			WriteOpenRelayError(w, r, err)
			return
		}
		if err := who.MayReport(); err != nil {
			WriteOpenRelayError(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(ctx, reporterKey{}, who))
		if err := h(w, r); err != nil {
			WriteOpenRelayError(w, r, err)
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
	out, err := nodeid.Register(r.Context(), api.Store, auth.BearerToken(r))
	if err != nil {
		WriteOpenRelayError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (api *API) agentInventory(w http.ResponseWriter, r *http.Request) error {
	var in agentapi.InventoryRequest
	if err := decodeReport(w, r, &in); err != nil {
		return err
	}
	rep, err := nodes.ReportInventory(r.Context(), api.Store, reporterOf(r), in)
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
	if err := decodeReport(w, r, &in); err != nil {
		return err
	}
	rep, err := nodes.ReportHeartbeat(r.Context(), api.Store, reporterOf(r), in)
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

// decodeReport reads one JSON object. Fields it does not know are ignored,
// so a newer agent can report to an older server.
func decodeReport(w http.ResponseWriter, r *http.Request, into any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReportBytes))
	err := dec.Decode(into)
	var tooLarge *http.MaxBytesError
	var badType *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooLarge):
		return apierr.New(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "the report is larger than %d bytes", maxReportBytes)
	case errors.Is(err, io.EOF):
		return apierr.BadRequest("the request body is empty; send a JSON object")
	case errors.As(err, &badType):
		return apierr.BadRequest("%s: want a %s, got %s", badType.Field, jsonKind(badType.Type.Kind()), badType.Value)
	case err != nil:
		return apierr.BadRequest("the request body is not a JSON object: %v", err)
	case dec.More():
		return apierr.BadRequest("the request body holds more than one JSON value")
	}
	return nil
}

// jsonKind names a Go kind as JSON calls it.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "non-negative whole number"
	default:
		return "number"
	}
}
