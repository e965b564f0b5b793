package resolvers

import "gpugraph/internal/auth"

// MutationGates answers, for every mutation, the permission check the
// service behind it makes before anything else: an idempotency key
// (internal/httpapi/extension.Idempotency) is read only after it, as REST reads
// Idempotency-Key after the permission, so a caller who may not make the
// mutation is answered as without a key and is never handed another
// caller's kept answer. A mutation whose answer holds a secret (an API
// key's token, an application's secret, a node's bootstrap token) maps to
// nil: it takes no key, since a kept answer would hold the secret in the
// database for 24 hours.
func (r *Resolver) MutationGates() map[string]func(*auth.Caller) error {
	s := r.Services
	operate, fleet, types, quotas, creds := s.Compute.MayOperate, s.Fleet.MayAdminister,
		s.InstanceTypes.MayAdminister, s.Quotas.MayAdminister, s.Credentials.MayAdminister
	return map[string]func(*auth.Caller) error{
		"createVm":    operate,
		"restartVm":   operate,
		"stopVm":      operate,
		"terminateVm": operate,

		"setNodeLeavingAt":     fleet,
		"reclaimNode":          fleet,
		"setOrganizationState": fleet,
		"enrollNode":           nil, // its bootstrap token

		"createApiKey":       nil, // its token
		"createApplication":  nil, // its secret
		"revokeApiKey":       creds,
		"revokeApplication":  creds,
		"createOrganization": creds, // and nodes.admin, which the service checks next

		"setInstanceType":    types,
		"deleteInstanceType": types,
		"setGpuQuota":        quotas,
		"deleteGpuQuota":     quotas,

		"grantCredits":           s.Metering.MayGrant,
		"setLowBalanceThreshold": s.Metering.MayConfigure,
		"setSpendLimit":          s.Metering.MayConfigure,
	}
}
