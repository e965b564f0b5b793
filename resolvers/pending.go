package resolvers

import (
	"net/http"

	"gpugraph/apierr"
	"gpugraph/models"
	"gpugraph/store"
)

func storeNodeKey(p *models.Pod) store.NodeKey {
	return store.NodeKey{ClusterID: p.ClusterID, Name: *p.NodeName}
}

// errNotYet answers the fields whose implementation has not landed.
var errNotYet = apierr.New(http.StatusNotImplemented, "NOT_IMPLEMENTED", "not implemented yet")
