package fleet

import (
	"context"
	"strings"

	"gpugraph/internal/auth"
	"gpugraph/internal/lib/apierr"
	"gpugraph/internal/store"
	"gpugraph/models"
)

// OrganizationChange is an organization after an operator changed its
// state, and how many of its workloads stopped.
type OrganizationChange struct {
	Organization *models.Organization
	Stopped      int64
}

// stops names the transition each state applies to the organization's
// running, deploying and interrupted workloads; active stops nothing.
var stops = map[models.OrgState]models.TransitionName{
	models.OrgStateSuspended:        models.OrgSuspended,
	models.OrgStateBalanceExhausted: models.OrgBalance,
	models.OrgStateDeleted:          models.OrgDeleted,
}

// OrgStates lists the states an operator may set, as the REST face spells them.
var OrgStates = []models.OrgState{models.OrgStateActive, models.OrgStateSuspended,
	models.OrgStateBalanceExhausted, models.OrgStateDeleted}

// ParseOrgState reads a state as the REST face spells it.
func ParseOrgState(s string) (models.OrgState, error) {
	for _, st := range OrgStates {
		if s == string(st) {
			return st, nil
		}
	}
	names := make([]string, len(OrgStates))
	for i, st := range OrgStates {
		names[i] = string(st)
	}
	return "", apierr.BadRequest("state %q is not one of %s", s, strings.Join(names, ", "))
}

// SetOrganizationState puts organization id in state: suspended, balance
// exhausted and deleted stop its running, deploying and interrupted
// workloads (GPUs released, disks kept) with their auto_stopped_* reason,
// in the transaction that writes the state; active reinstates it and
// starts nothing. Deleted is final, and an operator cannot take its own
// organization out of active.
func (s *Service) SetOrganizationState(ctx context.Context, caller *auth.Caller, id string, state models.OrgState) (*OrganizationChange, error) {
	actor, err := s.operator(caller)
	if err != nil {
		return nil, err
	}
	if _, err := ParseOrgState(string(state)); err != nil {
		return nil, err
	}
	if id == caller.OrganizationID && state != models.OrgStateActive {
		return nil, apierr.Conflict(CodeOwnOrganization,
			"organization %s is the operator's own; its state stays active so its keys keep working", id)
	}
	now := store.Now()
	var out *OrganizationChange
	err = s.store.InTx(ctx, func(tx *store.Txn) error {
		// Its workloads first, then the organization: a restart locks its
		// VM row and then reads the organization (lock order).
		if err := s.store.LockOrganizationWorkloads(tx, id); err != nil {
			return err
		}
		org, err := s.store.LockOrganization(tx, id)
		if err != nil {
			return err
		}
		if org == nil {
			return apierr.NotFound(CodeOrganizationNotFound, "there is no organization %q", id)
		}
		if org.State == models.OrgStateDeleted && state != models.OrgStateDeleted {
			return apierr.Conflict(CodeOrganizationDeleted, "organization %s is deleted; deletion is final", id)
		}
		out = &OrganizationChange{Organization: org}
		if name, ok := stops[state]; ok {
			if out.Stopped, err = s.store.ApplyToWorkloads(tx, store.Workloads{OrganizationID: id},
				store.Change{Transition: name, Actor: actor}, now); err != nil {
				return err
			}
		}
		org.State = state
		return s.store.SetOrganizationState(tx, id, state)
	})
	return out, err
}
