package main

import "gpugraph/internal/dataset/format"

// The generator writes the fixture format's own types (package
// internal/dataset/format); these names keep its code short.
type (
	Instant            = format.Instant
	Fixture            = format.Fixture
	GPUModel           = format.GPUModel
	InstanceType       = format.InstanceType
	Fabric             = format.Fabric
	Node               = format.Node
	GPU                = format.GPU
	Organization       = format.Organization
	APIKey             = format.APIKey
	Credit             = format.Credit
	VM                 = format.VM
	Project            = format.Project
	Workload           = format.Workload
	Revision           = format.Revision
	Pod                = format.Pod
	Container          = format.Container
	RequestedResources = format.RequestedResources
	Cores              = format.Cores
	Quantity           = format.Quantity
	ExtendedResource   = format.ExtendedResource
	AllocatedResources = format.AllocatedResources
	Toleration         = format.Toleration
	NodeAffinity       = format.NodeAffinity
	RequiredTerms      = format.RequiredTerms
	PreferredTerms     = format.PreferredTerms
	SelectorTerm       = format.SelectorTerm
	PreferredTerm      = format.PreferredTerm
	MatchExpression    = format.MatchExpression
	MetricSeries       = format.MetricSeries
	HistogramSeries    = format.HistogramSeries
	HistogramSample    = format.HistogramSample
	Buckets            = format.Buckets
	Bucket             = format.Bucket
)
