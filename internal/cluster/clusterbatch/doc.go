// Package clusterbatch is the wire of a cluster connector's sync: the
// batch it sends to POST /api/v1/clusters/{clusterId}/sync (projects,
// workloads, Run:ai pod objects, tombstones), its bounds, and Parse, the
// strict reading the server applies. It knows no database, so the
// connector (package clusterconnector) builds its batches with these
// types and checks them with the server's own rules before it sends.
package clusterbatch
