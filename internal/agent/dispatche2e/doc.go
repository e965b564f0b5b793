// Package dispatche2e holds the end-to-end test of a node that runs both
// kinds: the agent binary (built with containerd in it) with --runtime
// qemu and --containerd-address, pods in a private containerd and VMs in
// QEMU. Its own package: a test binary that links containerd's client
// and the agent's NVML does not start (cmd/agent's containerd.go says
// why), so this one runs the agent as a process and links neither.
package dispatche2e
