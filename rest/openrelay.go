package rest

import (
	"net/http"

	"gpugraph/auth"
)

func (api *API) openRelayRoutes() []route {
	return []route{
		{"POST /v1/vms/{id}/restart", openRelay(auth.ComputeOperate, api.restartVM)},
	}
}

// restartVM is OpenRelay's "Restart a VM": the resolver decides, this only
// renders the seed's VM object or its {"error": {...}} body.
func (api *API) restartVM(w http.ResponseWriter, r *http.Request) error {
	vm, err := api.Resolver.Mutation().RestartVM(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	body, err := encodeVM(r.Context(), vm)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}
