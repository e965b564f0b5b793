package rest

import "net/http"

func (api *API) openRelayRoutes() []route {
	return []route{
		{"POST /v1/vms/{id}/restart", http.HandlerFunc(api.restartVM)},
	}
}

func (api *API) restartVM(w http.ResponseWriter, r *http.Request) {
	vm, err := api.Resolver.Mutation().RestartVM(r.Context(), r.PathValue("id"))
	if err != nil {
		WriteOpenRelayError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, vm)
}
