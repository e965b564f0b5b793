// Package services builds, once per process, every service the faces, the
// background jobs and the command line call, over one store: the command
// (the root's server.go and admin.go) calls New once and hands the value to
// the HTTP layer, which gives it to the REST face (rest.API) and the
// GraphQL face (resolvers.Resolver), as pkgsite's server hands its
// handlers one DataSource, and to the jobs (the scheduler places with its
// Compute). A face never builds a service and never sees the store; it reads its request, calls a service with the caller and
// plain Go values, and writes the answer in its own shape.
//
// Every service has one shape: a struct over the store, made by its
// package's New, whose methods take the caller and check its permission
// first, through a May… method of the service (compute.Service.MayRead,
// pods.Service.MayRead, credentials.Service.MayAdminister, …) that says
// caller.Require(perm) once. A face that reads parameters or a body of its
// own before it calls a method (the REST routes) asks the same May… method
// first, so that 401 and 403 answer before 400 without the face naming a
// permission.
package services

import (
	"time"

	"gpugraph/internal/auth"
	"gpugraph/internal/services/clustersync"
	"gpugraph/internal/services/compute"
	"gpugraph/internal/services/credentials"
	"gpugraph/internal/services/fleet"
	"gpugraph/internal/services/hardware"
	"gpugraph/internal/services/idempotency"
	"gpugraph/internal/services/instancetypes"
	"gpugraph/internal/services/live"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/services/nodeid"
	"gpugraph/internal/services/nodes"
	"gpugraph/internal/services/podmetrics"
	"gpugraph/internal/services/pods"
	"gpugraph/internal/services/quotas"
	"gpugraph/internal/store"
)

// Services are the services of one process, each built once.
type Services struct {
	// Authenticator resolves a request's API key or access token into its
	// caller (the edge's middleware runs it before either face).
	Authenticator *auth.Authenticator
	// Compute restarts, stops and terminates VMs and pods and reads them.
	Compute *compute.Service
	// Hardware reads nodes, GPUs and the GPU model catalog.
	Hardware *hardware.Service
	// InstanceTypes is the instance type catalog: types, prices, capacity.
	InstanceTypes *instancetypes.Service
	// Quotas sets, lifts and reads the organizations' GPU quotas.
	Quotas *quotas.Service
	// Pods lists and counts Run:ai's pods, workloads and projects.
	Pods *pods.Service
	// Metrics reads and ingests pod metrics.
	Metrics *podmetrics.Service
	// Nodes takes the node agents' reports.
	Nodes *nodes.Service
	// NodeID enrolls nodes and exchanges their bootstrap tokens.
	NodeID *nodeid.Service
	// Clusters enrolls clusters and applies their connectors' batches.
	Clusters *clustersync.Service
	// Fleet is the fleet operator's: decommission, reclaim, organization state.
	Fleet *fleet.Service
	// Credentials administers keys and applications and issues access tokens.
	Credentials *credentials.Service
	// Idempotency keeps the answers of requests sent with an Idempotency-Key.
	Idempotency *idempotency.Service
	// Live serves the subscriptions.
	Live *live.Feed
	// Metering closes usage (its pass, run by the command's runner) and
	// answers balances, usage and operators' credits.
	Metering *metering.Service
}

// Config is what the command line chooses of the services; the zero
// Config is a server reading everything from its store.
type Config struct {
	// Metrics is where pod metrics are read (the store when nil).
	Metrics podmetrics.Source
	// Tokens signs and verifies access tokens; nil signs with the key
	// stored in the database, shared by every replica.
	Tokens *auth.Tokens
	// Live serves the subscriptions (a fresh feed with default limits
	// when nil); the command keeps its own to shut the streams down.
	Live *live.Feed
	// NodeReportKeys is the legacy mode (--node-credentials-required=false):
	// agent reports made with any organization's nodes.report API key are
	// accepted for nodes that have no credential. The zero value accepts
	// node credentials only.
	NodeReportKeys bool
	// MaxPendingPerOrg is the most VMs and pods one organization may have
	// pending (compute.Service.MaxPending); zero is
	// compute.DefaultMaxPending.
	MaxPendingPerOrg int
	// SpendLimitCentsPerHour is the platform's default spend limit of an
	// organization without one of its own (--spend-limit-cents-per-hour;
	// compute.DefaultSpendLimitCentsPerHour there): a create or restart
	// that would pass it answers 402. 0, the zero Config's, is none.
	SpendLimitCentsPerHour int64
	// Clock is the metering's clock (store.Now when nil); tests simulate
	// time with it.
	Clock func() time.Time
}

// New builds every service over st.
func New(st *store.Store, cfg Config) *Services {
	if cfg.Tokens == nil {
		cfg.Tokens, _ = auth.NewTokens(st, nil, nil) // no key given: cannot fail
	}
	if cfg.Live == nil {
		cfg.Live = live.New(st, live.Limits{})
	}
	cs := compute.New(st)
	if cfg.MaxPendingPerOrg > 0 {
		cs.MaxPending = cfg.MaxPendingPerOrg
	}
	cs.SpendLimitCentsPerHour = cfg.SpendLimitCentsPerHour
	ms := metering.New(st, cfg.Clock)
	ms.SpendLimitCentsPerHour = cfg.SpendLimitCentsPerHour
	ms.Feed = cfg.Live
	ids := nodeid.New(st)
	return &Services{
		Authenticator: &auth.Authenticator{Store: st, Tokens: cfg.Tokens},
		Compute:       cs,
		Hardware:      hardware.New(st),
		InstanceTypes: instancetypes.New(st),
		Pods:          pods.New(st),
		Quotas:        quotas.New(st),
		Metrics:       podmetrics.New(st, cfg.Metrics),
		Nodes:         nodes.New(st, cs, ids, nodes.Options{KeysAccepted: cfg.NodeReportKeys}),
		NodeID:        ids,
		Clusters:      clustersync.New(st),
		Fleet:         fleet.New(st),
		Credentials:   credentials.New(st, cfg.Tokens),
		Idempotency:   idempotency.New(st),
		Live:          cfg.Live,
		Metering:      ms,
	}
}
