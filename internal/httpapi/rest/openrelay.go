package rest

import (
	"net/http"
	"strconv"

	"gpugraph/internal/auth"
	"gpugraph/internal/httpapi/route"
	"gpugraph/internal/lib/ratelimit"
)

func (api *API) openRelayRoutes() []endpoint {
	return []endpoint{
		{"POST /v1/vms/{id}/restart", Costs(route.Policy{Rate: ratelimit.Restart}, openRelay(api.Services.Compute.MayOperate, api.idempotent(api.restartVM)))},
	}
}

// restartVM is OpenRelay's "Restart a VM": package compute decides, this
// only renders the seed's VM object or its {"error": {...}} body.
func (api *API) restartVM(w http.ResponseWriter, r *http.Request) error {
	res, err := api.Services.Compute.Restart(r.Context(), auth.FromContext(r.Context()), r.PathValue("id"))
	if err != nil {
		return err
	}
	if msg := res.Warning(); msg != "" {
		w.Header().Set("Warning", "299 - "+strconv.Quote(msg))
	}
	writeJSON(w, http.StatusOK, encodeVM(res))
	return nil
}
