// Package podmetrics is the pod metrics service under both faces:
// Service.Query answers Run:ai's pod metrics (GET …/pods/{podId}/metrics
// and the podMetrics GraphQL field) and Service.Ingest stores a batch of
// samples (POST /api/v1/metrics/samples). Its parameters and results are
// plain Go; the faces turn them into GraphQL types, JSON or CSV.
//
// It owns what a sample is: the entries a batch and a data set file spell
// (MetricSeries, HistogramSeries) and their checks (CheckSamples,
// SampleChecker), which the data set loader (package dataset) uses too.
//
// Each call checks the caller's permission first (MayRead, MayIngest),
// then its parameters, then the pod's tenancy, and answers *apierr.Error
// for anything the caller can fix: a face checks nothing of its own, and
// asks the same gates when it must refuse before it reads its request.
package podmetrics
