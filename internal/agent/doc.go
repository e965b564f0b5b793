// Package agent is gpugraph's node agent: it reads the node's GPUs through
// go-nvml, judges their health the way NVIDIA's k8s-device-plugin does, and
// reports inventory and heartbeats to the gpugraph server over HTTP.
//
// Every NVML call goes through an nvml.Interface so that the same code runs
// on a real driver and on the simulated DGX servers of package internal/agent/sim,
// which this package does not import: the agent links go-nvml's mock
// packages only where cmd/agent's --mock flag asks for a simulation.
package agent
