package rest

import (
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"strings"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/lib/bounds"
	"gpugraph/internal/lib/paging"
	"gpugraph/internal/services/compute"
	"gpugraph/models"
)

// The OpenRelay VM paths besides restart: reads, stop, terminate and the
// event log. Package compute decides; these parse and render the seed's
// VM object (encodeVM) or its {"error": {...}} body.
func (api *API) vmRoutes() []endpoint {
	read, operate := api.Services.Compute.MayRead, api.Services.Compute.MayOperate
	return []endpoint{
		{"GET /v1/vms", openRelay(read, api.listVMs)},
		{"POST /v1/vms", openRelay(operate, api.idempotent(api.createVM))},
		{"GET /v1/vms/{id}", openRelay(read, api.getVM)},
		{"GET /v1/vms/{id}/events", openRelay(read, api.vmEvents)},
		{"GET /v1/vms/{id}/console", openRelay(read, api.vmConsole)},
		{"POST /v1/vms/{id}/stop", openRelay(operate, api.idempotent(api.stopVM))},
		{"DELETE /v1/vms/{id}", openRelay(operate, api.idempotent(api.terminateVM))},
	}
}

// createVM is "Create a VM": 201 with the new VM object and its Location,
// deploying on its node or pending in the queue.
func (api *API) createVM(w http.ResponseWriter, r *http.Request) error {
	var req compute.CreateRequest
	if err := decodeBody(w, r, &req, route.MaxBody, bounds.KnownMembers); err != nil {
		return err
	}
	res, err := api.Services.Compute.Create(r.Context(), auth.FromContext(r.Context()), req)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/vms/"+res.VM.ID)
	writeJSON(w, http.StatusCreated, encodeVM(res))
	return nil
}

func (api *API) getVM(w http.ResponseWriter, r *http.Request) error {
	res, err := api.Services.Compute.Get(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, encodeVM(res))
	return nil
}

// vmListJSON is a page of VMs; next, the offset of the following page, is
// absent on the last one.
type vmListJSON struct {
	VMs  []vmJSON `json:"vms"`
	Next *int     `json:"next,omitempty"`
}

func (api *API) listVMs(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	statuses, err := compute.ParseStatuses(v["status"])
	if err != nil {
		return err
	}
	offset, err := intParam(v, "offset")
	if err != nil {
		return err
	}
	limit, err := intParam(v, "limit")
	if err != nil {
		return err
	}
	page, err := paging.Parse(offset, limit)
	if err != nil {
		return err
	}
	vms, total, err := api.Services.Compute.List(r.Context(), auth.FromContext(r.Context()), compute.ListQuery{Statuses: statuses, Page: page, Count: true})
	if err != nil {
		return err
	}
	details, err := api.Services.Compute.Details(r.Context(), vms)
	if err != nil {
		return err
	}
	out := vmListJSON{VMs: make([]vmJSON, len(details)), Next: page.Next(total)}
	for i, d := range details {
		out.VMs[i] = encodeVM(d)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// eventJSON is one event of a VM's log, as GraphQL's VmEvent writes it
// (the id a string, statuses in lower case).
type eventJSON struct {
	ID         string `json:"id"`
	VMID       string `json:"vmId"`
	From       string `json:"from"`
	To         string `json:"to"`
	Reason     string `json:"reason"`
	Transition string `json:"transition"`
	// Generation is absent on events recorded before it was kept.
	Generation *int   `json:"generation,omitempty"`
	Actor      string `json:"actor"`
	At         string `json:"at"`
	// ProvisioningStage after the event; VolumeID and FreshVolume on an
	// event that started a run (models.VMEvent).
	ProvisioningStage string `json:"provisioningStage"`
	VolumeID          string `json:"volumeId,omitempty"`
	FreshVolume       bool   `json:"freshVolume,omitempty"`
}

// eventsJSON is a page of the log; next, the after of the following page,
// is absent when the log has nothing more (yet).
type eventsJSON struct {
	Events []eventJSON `json:"events"`
	Next   string      `json:"next,omitempty"`
}

func (api *API) vmEvents(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	var after *int64
	if s := v.Get("after"); s != "" {
		n, ok := bounds.ParseInt(s)
		if !ok {
			return apierr.BadRequest("after must be an event id (a whole number), got %q", s)
		}
		after = &n
	}
	limit, err := intParam(v, "limit")
	if err != nil {
		return err
	}
	q, err := compute.ParseEventQuery(after, limit)
	if err != nil {
		return err
	}
	events, more, err := api.Services.Compute.EventPage(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"), q)
	if err != nil {
		return err
	}
	out := eventsJSON{Events: make([]eventJSON, len(events))}
	for i, e := range events {
		out.Events[i] = encodeEvent(e)
	}
	if more {
		out.Next = out.Events[len(out.Events)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func encodeEvent(e *models.VMEvent) eventJSON {
	return eventJSON{ID: strconv.FormatInt(e.Seq, 10), VMID: e.VMID, From: string(e.From), To: string(e.To),
		Reason: e.Reason, Transition: string(e.Transition), Generation: e.Generation, Actor: e.Actor().String(),
		At: models.FormatTime(e.At), ProvisioningStage: e.ProvisioningStage, VolumeID: e.VolumeID, FreshVolume: e.FreshVolume}
}

func (api *API) stopVM(w http.ResponseWriter, r *http.Request) error {
	res, err := api.Services.Compute.Stop(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, encodeVM(res))
	return nil
}

func (api *API) terminateVM(w http.ResponseWriter, r *http.Request) error {
	res, err := api.Services.Compute.Terminate(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, encodeVM(res))
	return nil
}

// consoleJSON is a VM's serial console, as EC2's GetConsoleOutput answers
// it: the bytes base64 (they are the guest's, not necessarily UTF-8), the
// same as text (as GraphQL's VM.console.text), their count, and when its
// node pushed them (null, with no output, while nothing was captured).
type consoleJSON struct {
	VMID       string  `json:"vmId"`
	Output     string  `json:"output"`
	Text       string  `json:"text"`
	Bytes      int     `json:"bytes"`
	CapturedAt *string `json:"capturedAt"`
}

func (api *API) vmConsole(w http.ResponseWriter, r *http.Request) error {
	c, err := api.Services.Compute.ConsoleOf(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	text := strings.ToValidUTF8(string(c.Output), "\uFFFD")
	if prefersOverJSON(r.Header.Get("Accept"), "text/plain") {
		// What a terminal shows: the text alone, as `aws ec2
		// get-console-output --output text` prints it.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, text)
		return nil
	}
	out := consoleJSON{VMID: c.VMID, Output: base64.StdEncoding.EncodeToString(c.Output), Text: text, Bytes: len(c.Output)}
	if c.CapturedAt != nil {
		at := models.FormatTime(*c.CapturedAt)
		out.CapturedAt = &at
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
