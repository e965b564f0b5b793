package fleet

import (
	"gpugraph/apierr"
	"gpugraph/auth"
	"gpugraph/models"
	"gpugraph/store"
)

// Service is the operator's paths for both faces.
type Service struct{ store *store.Store }

// New is the fleet service over st.
func New(st *store.Store) *Service { return &Service{store: st} }

// The codes the operator's paths answer besides the generic ones.
const (
	CodeNodeNotFound         = "NODE_NOT_FOUND"
	CodeNodeRemoved          = "NODE_REMOVED"
	CodeNodeLeft             = "NODE_LEAVING_AT_PASSED"
	CodeOrganizationNotFound = "ORGANIZATION_NOT_FOUND"
	CodeOrganizationDeleted  = "ORGANIZATION_DELETED"
	CodeOwnOrganization      = "OWN_ORGANIZATION"
)

// operator checks the caller and names it as the event log's actor.
func operator(caller *auth.Caller) (models.Actor, error) {
	if caller == nil {
		return models.Actor{}, apierr.Unauthorized("missing API key: send Authorization: Bearer <API key>")
	}
	if !caller.Can(auth.NodesAdmin) {
		return models.Actor{}, apierr.MissingPermission(auth.NodesAdmin)
	}
	return models.Actor{Kind: models.ActorOperator, ID: "key:" + caller.KeyID}, nil
}
