package rest

func (api *API) runaiRoutes() []route { return nil }
