package auth

import (
	"net/http"

	"gpugraph/internal/lib/apierr"
	"gpugraph/models"
)

// The codes a key of an organization that is not active answers.
const (
	CodeOrganizationSuspended        = "ORGANIZATION_SUSPENDED"
	CodeOrganizationDeleted          = "ORGANIZATION_DELETED"
	CodeOrganizationBalanceExhausted = "ORGANIZATION_BALANCE_EXHAUSTED"
)

// OrganizationRefused is the 403 a key of a suspended or deleted
// organization answers on every path, saying why; nil for an active or
// balance-exhausted one (whose keys keep read access).
func OrganizationRefused(orgID string, state models.OrgState) *apierr.Error {
	switch state {
	case models.OrgStateSuspended:
		return apierr.New(http.StatusForbidden, CodeOrganizationSuspended,
			"organization %s is suspended; its API keys are refused until an operator reinstates it", orgID)
	case models.OrgStateDeleted:
		return apierr.New(http.StatusForbidden, CodeOrganizationDeleted,
			"organization %s is deleted; its API keys no longer work", orgID)
	}
	return nil
}

// OrganizationCannotStart is the answer to starting a workload (restartVm)
// in an organization that is not active: 402 for an exhausted balance,
// the 403 of OrganizationRefused otherwise; nil when it is active.
func OrganizationCannotStart(orgID string, state models.OrgState) *apierr.Error {
	if state == models.OrgStateBalanceExhausted {
		return apierr.New(http.StatusPaymentRequired, CodeOrganizationBalanceExhausted,
			"organization %s has exhausted its balance; its workloads cannot start until it is topped up (reads still work)", orgID)
	}
	return OrganizationRefused(orgID, state)
}
