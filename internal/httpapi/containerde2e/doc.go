// Package containerde2e holds the end-to-end test of pods in containerd:
// the gpugraph server, two nodes each running the real agent binary with
// --runtime containerd, and a private containerd (containerdtest) running
// what the API asks for.
//
// It is a package of its own, not one more file of httpapi's agent tests,
// because a test binary cannot link containerd's client beside go-nvml
// (which httpapi's tests link through internal/agent/sim): containerd's client
// links Go's plugin loader, which makes the binary bind every C symbol at
// start, and NVML's lazily resolved symbols then stop it from starting
// (cmd/agent's static_build tag is the same story for the agent).
package containerde2e
