package rest

func (api *API) agentRoutes() []route { return nil }
