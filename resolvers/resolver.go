// Package resolvers answers the GraphQL schema. Every root field calls a
// service of the Services it is handed (package services), which checks
// the caller's permission first; a root field that reads through the
// loaders asks the service's gate (MayRead) itself. Every nested field goes
// through the request's dataloaders, which are scoped to the caller, as
// package fieldmodel declares it.
package resolvers

import (
	"context"

	"gpugraph/graph"
	"gpugraph/internal/auth"
	"gpugraph/internal/services"
)

// Resolver is the root of the resolver tree.
type Resolver struct {
	// Services are the services the resolvers call, built once per
	// process by the command and shared with the REST face. Its Live serves the
	// subscriptions (nil: subscriptions answer unavailable).
	Services *services.Services
}

func (r *Resolver) Query() graph.QueryResolver       { return &queryResolver{r} }
func (r *Resolver) Mutation() graph.MutationResolver { return &mutationResolver{r} }
func (r *Resolver) VM() graph.VMResolver             { return &vmResolver{svc: r.Services} }
func (r *Resolver) Node() graph.NodeResolver         { return &nodeResolver{} }
func (r *Resolver) Gpu() graph.GpuResolver           { return &gpuResolver{} }
func (r *Resolver) Pod() graph.PodResolver           { return &podResolver{} }
func (r *Resolver) Workload() graph.WorkloadResolver { return &workloadResolver{} }
func (r *Resolver) Volume() graph.VolumeResolver     { return &volumeResolver{} }

type queryResolver struct{ *Resolver }
type mutationResolver struct{ *Resolver }

// The nested fields package fieldmodel declares Plain are answered by the
// generated <Type>Loads each resolver embeds; the methods here are the
// fields that derive their value.
type vmResolver struct {
	graph.VMLoads
	svc *services.Services // queuePosition asks the compute service
}
type nodeResolver struct{ graph.NodeLoads }
type gpuResolver struct{ graph.GpuLoads }
type podResolver struct{ graph.PodLoads }
type workloadResolver struct{ graph.WorkloadLoads }
type volumeResolver struct{ graph.VolumeLoads }

// may answers whether the request's caller passes may, a service's gate
// (compute.Service.MayRead, …), for a field that reads through the
// request's loaders rather than through a method of the service: the 401
// of a missing or refused credential, else may's 403.
func (r *Resolver) may(ctx context.Context, may func(*auth.Caller) error) error {
	c, err := auth.Authenticate(ctx)
	if err != nil {
		return err
	}
	return may(c)
}
