package fleet

import (
	"gpugraph/internal/auth"
	"gpugraph/internal/store"
	"gpugraph/models"
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

// MayAdminister is the permission every operator's path needs:
// nodes.admin. Each method checks it first; a face that reads a body of its
// own before calling one asks it first, so that a refusal answers before a
// bad body does.
func (s *Service) MayAdminister(caller *auth.Caller) error { return caller.Require(auth.NodesAdmin) }

// operator checks the caller and names it as the event log's actor.
func (s *Service) operator(caller *auth.Caller) (models.Actor, error) {
	if err := s.MayAdminister(caller); err != nil {
		return models.Actor{}, err
	}
	return models.Actor{Kind: models.ActorOperator, ID: "key:" + caller.KeyID}, nil
}
