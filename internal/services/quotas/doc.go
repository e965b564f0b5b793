// Package quotas is the organizations' GPU quotas: per organization and
// GPU model, the most GPUs its VMs and pods may hold or wait for at once
// (models.QuotaStatuses: pending, deploying, running, interrupted). An
// operator (auth.NodesAdmin) sets and lifts them; an organization reads its
// own (compute.read), and another organization's does not exist for it. An
// organization with no quota for a model has no limit on it.
//
// [Check] is the quota check of a placement, run inside the transaction that
// places (restart now, create too): it locks the quota row after the VM row
// and before any node row (the lock order of internal/store/locks.go), counts what
// the organization uses under that lock, and refuses with 409
// QUOTA_EXCEEDED naming the quota, the use and the ask.
package quotas
