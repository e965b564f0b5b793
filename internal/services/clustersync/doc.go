// Package clustersync is the server side of a cluster connector: the
// component in a Kubernetes cluster that watches its pods, workloads and
// projects and reports them, so that the Run:ai Pods API answers a live
// cluster rather than a fixture.
//
// A cluster credential is bound to one clusterId and one tenant. An
// operator (auth.NodesAdmin, as for node enrollment) enrolls the cluster
// and is shown the credential once; it is stored as a SHA-256 hash only.
// Enrolling the cluster again rotates it (the old one stops working at
// once); revoking drops it. The credential's one capability is writing
// its own cluster's pods: it is no API key and reads nothing.
//
// A batch (POST /api/v1/clusters/{clusterId}/sync) carries a sequence the
// connector increases: a batch is applied once, in one transaction, in
// order. A replay of the last batch answers what it answered; an older
// sequence is refused with the current one. A snapshot, sent in one or
// more parts, replaces the cluster's set: at its last part the cluster's
// pods no part named are marked deleted (never removed).
package clustersync
