package rest

import "net/http"

func (api *API) openRelayRoutes() []route {
	return []route{
		{"POST /v1/vms/{id}/restart", http.HandlerFunc(api.restartVM)},
	}
}

// restartVM is OpenRelay's "Restart a VM": the resolver decides, this only
// renders the seed's VM object or its {"error": {...}} body.
func (api *API) restartVM(w http.ResponseWriter, r *http.Request) {
	vm, err := api.Resolver.Mutation().RestartVM(r.Context(), r.PathValue("id"))
	if err != nil {
		WriteOpenRelayError(w, r, err)
		return
	}
	body, err := encodeVM(r.Context(), vm)
	if err != nil {
		WriteOpenRelayError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}
