// Command fleetgen writes a fixture (docs/contract.md#fixture) of a chosen size for
// benchmarks and load tests: N nodes of 8 GPUs, M pods across workloads and
// tenants, K metric samples. The same flags give the same file.
//
//	go run ./cmd/fleetgen --nodes 1500 --pods 30000 --samples 100000 --tenants 4 --seed 1 -o fleet.json
//	go run . --fixtures fleet.json --demo=false
//
// Tenant t's API key is fleet-000, fleet-001, …; it reads that tenant's pods
// and operates its organization's VMs.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"gpugraph/bench/fleetgen"
)

func main() {
	var o fleetgen.Options
	flag.IntVar(&o.Nodes, "nodes", 100, "GPU nodes (8 GPUs each)")
	flag.IntVar(&o.Pods, "pods", 1000, "Run:ai pods, spread over the tenants")
	flag.IntVar(&o.Samples, "samples", 0, "pod metric samples, in series of up to 240 (one hour at 15 s)")
	flag.IntVar(&o.Tenants, "tenants", 4, "organizations, each with one Run:ai tenant and one API key")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed: the same flags and seed give the same file")
	flag.IntVar(&o.VMsPerNode, "vms-per-node", 0, "stopped VMs on every node (restart targets)")
	flag.IntVar(&o.VMGPUs, "vm-gpus", 2, "GPUs each VM wants")
	out := flag.String("o", "", "write to this file instead of standard output")
	flag.Parse()
	if o.Nodes < 0 || o.Pods < 0 || o.Samples < 0 || o.Tenants < 1 || o.VMsPerNode < 0 || o.VMGPUs < 1 || o.VMGPUs > fleetgen.GPUsPerNode {
		fmt.Fprintln(os.Stderr, "fleetgen: sizes must not be negative, --tenants at least 1, --vm-gpus 1–8")
		os.Exit(2)
	}
	if err := write(*out, o); err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
}

func write(path string, o fleetgen.Options) error {
	var w io.Writer = os.Stdout
	if path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := json.NewEncoder(bw).Encode(fleetgen.Generate(o)); err != nil {
		return err
	}
	return bw.Flush()
}
