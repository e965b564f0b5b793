// Package resolvers answers the GraphQL schema. Every root field checks the
// caller's permission first; every nested field goes through the request's
// dataloaders, which are scoped to the caller.
package resolvers

import (
	"gpugraph/graph"
	"gpugraph/live"
	"gpugraph/podmetrics"
	"gpugraph/store"
)

// Resolver is the root of the resolver tree.
type Resolver struct {
	Store *store.Store
	// Metrics is where pod metrics are read (the store when nil).
	Metrics podmetrics.Source
	// Live serves the subscriptions (nil: subscriptions answer unavailable).
	Live *live.Feed
}

func (r *Resolver) Query() graph.QueryResolver       { return &queryResolver{r} }
func (r *Resolver) Mutation() graph.MutationResolver { return &mutationResolver{r} }
func (r *Resolver) VM() graph.VMResolver             { return &vmResolver{r} }
func (r *Resolver) Node() graph.NodeResolver         { return &nodeResolver{r} }
func (r *Resolver) Gpu() graph.GpuResolver           { return &gpuResolver{r} }
func (r *Resolver) Pod() graph.PodResolver           { return &podResolver{r} }
func (r *Resolver) Workload() graph.WorkloadResolver { return &workloadResolver{r} }

type queryResolver struct{ *Resolver }
type mutationResolver struct{ *Resolver }
type vmResolver struct{ *Resolver }
type nodeResolver struct{ *Resolver }
type gpuResolver struct{ *Resolver }
type podResolver struct{ *Resolver }
type workloadResolver struct{ *Resolver }
