// Package nodeid is node identity for agents, in the manner of kubelet
// TLS bootstrapping: an operator (auth.NodesAdmin) enrolls a node name and
// cluster and gets a one-time bootstrap token, valid for BootstrapTTL; the
// agent exchanges it once (POST /v1/agent/register) for a node credential
// bound to that name and cluster, and reports with it from then on. Both
// secrets are random, shown once, and stored as SHA-256 hashes only.
//
// The credential is a bearer secret, not a client certificate: every
// agent already speaks bearer tokens over the server's TLS, the server
// keeps no CA or certificate lifetimes to manage, and revocation is a row
// (enrolling the node again replaces its credential). What mTLS would add
// — a secret that never crosses the wire — is left for later.
package nodeid
