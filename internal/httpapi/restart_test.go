package httpapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"gpugraph/internal/dataset"
	"gpugraph/internal/httpapi/servertest"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// restartCase is one line of the restart contract's table, or one success path.
type restartCase struct {
	name  string
	setup func(f *dataset.File)
	token string // default acme-operator
	vm    string
	// graphql sends the mutation instead of the REST request.
	graphql bool

	status int      // HTTP status (REST) or extensions.status (GraphQL)
	code   string   // error code; "" for a success
	msg    []string // substrings the message must hold

	// After a success: the VM's status, node and GPUs. After a refusal
	// nothing may have changed anywhere.
	wantStatus string
	wantNode   string
	wantGPUs   []string
}

func TestRestartVM(t *testing.T) {
	const h100Name = "NVIDIA H100 80GB HBM3"
	cases := []restartCase{
		// --- any state
		{name: "missing VM", vm: "vm-nope",
			status: 404, code: "VM_NOT_FOUND", msg: []string{`"vm-nope"`}},
		{name: "another organization's VM is not found", vm: "vm-globex",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-globex", org: "org-globex", node: "n1", status: "stopped", model: h100, gpus: 1, cpu: 8, ram: 64, disk: 100})
			},
			status: 404, code: "VM_NOT_FOUND", msg: []string{`"vm-globex"`}},
		{name: "another organization's VM is not found (GraphQL)", vm: "vm-globex", graphql: true,
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-globex", org: "org-globex", node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g0"}, cpu: 8, ram: 64, disk: 100})
			},
			status: 404, code: "VM_NOT_FOUND"},
		{name: "no key", token: "-", vm: "vm-a",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-a", node: "n1", status: "stopped", model: h100, gpus: 1})
			},
			status: 401, code: "UNAUTHENTICATED"},
		{name: "key without compute.operate", token: "acme-reader", vm: "vm-a",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-a", node: "n1", status: "stopped", model: h100, gpus: 1})
			},
			status: 403, code: "FORBIDDEN", msg: []string{"compute.operate"}},
		{name: "serving replica is read-only", vm: "vm-serve",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-serve", node: "n1", status: "stopped", model: h100, gpus: 1, managedBy: "serving"})
			},
			status: 403, code: "VM_READ_ONLY", msg: []string{"vm-serve", "serving", "read-only"}},
		{name: "serving replica is read-only even when terminated", vm: "vm-serve",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-serve", node: "n1", status: "terminated", model: h100, gpus: 1, managedBy: "serving"})
			},
			status: 403, code: "VM_READ_ONLY"},
		// --- terminated, pending, deploying
		{name: "terminated", vm: "vm-t",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-t", node: "n1", status: "terminated", model: h100, gpus: 1})
			},
			status: 409, code: "VM_TERMINATED", msg: []string{"vm-t", "terminated", "create a new one"}},
		{name: "pending", vm: "vm-p",
			setup:  func(f *dataset.File) { addVM(f, vmSpec{id: "vm-p", status: "pending", model: h100, gpus: 1}) },
			status: 409, code: "VM_NOT_READY", msg: []string{"vm-p", "pending"}},
		{name: "deploying (GraphQL)", vm: "vm-d", graphql: true,
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-d", node: "n1", status: "deploying", model: h100, gpus: 1, held: []string{"n1-g0"}})
			},
			status: 409, code: "VM_NOT_READY", msg: []string{"vm-d", "deploying", "once it is running"}},
		{name: "deploying pod", vm: "pod-d",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-d", pod: true, node: "n1", status: "deploying", model: h100, gpus: 1, held: []string{"n1-g0"}})
			},
			status: 409, code: "VM_NOT_READY", msg: []string{"pod pod-d"}},
		// --- stopped/failed whose node was removed: placed afresh
		{name: "node removed: VM placed on the most allocated node", vm: "vm-r",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-r", node: "n5", status: "stopped", reason: "node_removed", model: h100, gpus: 2, cpu: 16, ram: 128, disk: 500})
				// n1 is the fullest H100 node: 2 of 7 healthy held.
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "running", model: h100, gpus: 2, held: []string{"n1-g0", "n1-g2"}, cpu: 8, ram: 8, disk: 8})
			},
			status: 200, wantStatus: "deploying", wantNode: "n1", wantGPUs: []string{"n1-g1", "n1-g3"}},
		{name: "node removed, row says so, node status still online: placed afresh", vm: "vm-r",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-r", node: "n6", status: "failed", reason: "node_removed", model: h100, gpus: 1, cpu: 16, ram: 128, disk: 500})
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "running", model: h100, gpus: 4, held: []string{"n1-g0", "n1-g1", "n1-g2", "n1-g3"}, cpu: 8, ram: 8, disk: 8})
			},
			status: 200, wantStatus: "deploying", wantNode: "n1", wantGPUs: []string{"n1-g4"}},
		{name: "node removed: node gone from the row, placed afresh", vm: "vm-r",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-r", status: "stopped", model: h100, gpus: 4, cpu: 16, ram: 128, disk: 500})
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "running", model: h100, gpus: 4, held: []string{"n1-g0", "n1-g1", "n1-g2", "n1-g3"}, cpu: 8, ram: 8, disk: 8})
			},
			// n1 has 3 healthy free; n3 and n6 would be full (GPU score 1.0),
			// and n6 is the fuller in CPU and RAM.
			status: 200, wantStatus: "deploying", wantNode: "n6", wantGPUs: []string{"n6-g0", "n6-g1", "n6-g2", "n6-g3"}},
		{name: "node removed: pod of an InfiniBand org skips the node whose agent predates InfiniBand", vm: "pod-r",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-r", pod: true, node: "n5", status: "stopped", reason: "node_removed", model: h100, gpus: 4, tearingDown: true})
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "running", model: h100, gpus: 4, held: []string{"n1-g0", "n1-g1", "n1-g2", "n1-g3"}, cpu: 8, ram: 8, disk: 8})
			},
			status: 200, wantStatus: "deploying", wantNode: "n6", wantGPUs: []string{"n6-g0", "n6-g1", "n6-g2", "n6-g3"}},
		{name: "node removed: interrupted VM lets go of the removed node's GPUs and is placed afresh", vm: "vm-r",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-r", node: "n5", status: "interrupted", reason: "node_lost", model: h100, gpus: 1, held: []string{"n5-g2"}, cpu: 16, ram: 128, disk: 500})
			},
			// n3 and n6 tie on GPUs (1 of 4); n6 is fuller in CPU and RAM.
			status: 200, wantStatus: "deploying", wantNode: "n6", wantGPUs: []string{"n6-g0"}},
		{name: "node removed: none fits", vm: "vm-r",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-r", node: "n5", status: "stopped", reason: "node_removed", model: h100, gpus: 8, cpu: 16, ram: 128, disk: 500})
			},
			status: 503, code: "VM_NO_CAPACITY",
			msg: []string{"0/6 nodes can take it: 4 too few free " + h100Name + " GPUs, 1 offline, 1 removed"}},
		{name: "node removed: none fits (GraphQL)", vm: "pod-r", graphql: true,
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-r", pod: true, node: "n5", status: "failed", model: mi3, gpus: 1})
			},
			status: 503, code: "VM_NO_CAPACITY",
			// n1 and n6 lack MI300X, n3's agent predates InfiniBand (Acme
			// pods need an address there), n4's predates AMD grants.
			msg: []string{"0/6 nodes can take it: 2 too few free AMD Instinct MI300X GPUs, 1 agent too old for AMD GPUs, " +
				"1 agent too old for InfiniBand, 1 offline, 1 removed"}},
		// --- pod stopped/failed tearing down
		{name: "pod still tearing down", vm: "pod-s",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-s", pod: true, node: "n2", status: "stopped", model: h100, gpus: 1, tearingDown: true})
			},
			status: 409, code: "POD_STOPPING", msg: []string{"pod-s", "tearing down"}},
		// --- offline node
		{name: "stopped VM on an offline node", vm: "vm-o",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-o", node: "n2", status: "stopped", model: h100, gpus: 1})
			},
			status: 409, code: "VM_NODE_OFFLINE", msg: []string{"gpu-node-2 is offline"}},
		{name: "failed pod on an offline node", vm: "pod-o",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-o", pod: true, node: "n2", status: "failed", model: h100, gpus: 1})
			},
			status: 409, code: "POD_NODE_OFFLINE", msg: []string{"gpu-node-2 is offline"}},
		{name: "interrupted VM on an offline node", vm: "vm-i",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-i", node: "n2", status: "interrupted", reason: "node_lost", model: h100, gpus: 2, held: []string{"n2-g0", "n2-g1"}})
			},
			status: 409, code: "VM_NODE_OFFLINE", msg: []string{"gpu-node-2 is offline", "back online"}},
		{name: "interrupted pod on an offline node", vm: "pod-i",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-i", pod: true, node: "n2", status: "interrupted", reason: "node_lost", model: h100, gpus: 1, held: []string{"n2-g3"}})
			},
			status: 409, code: "POD_NODE_OFFLINE", msg: []string{"gpu-node-2 is offline"}},
		// --- pod agent checks
		{name: "pod of an InfiniBand org on a fabric node with an old agent", vm: "pod-ib",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-ib", pod: true, node: "n3", status: "stopped", model: h100, gpus: 1})
			},
			status: 409, code: "POD_NODE_NO_INFINIBAND", msg: []string{"gpu-node-3", "node agent 2.3.9", "InfiniBand needs 2.4.0"}},
		{name: "pod of an org without InfiniBand on the same node starts", vm: "pod-g", token: "globex-operator",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-g", org: "org-globex", pod: true, node: "n3", status: "stopped", model: h100, gpus: 2})
			},
			status: 200, wantStatus: "deploying", wantNode: "n3", wantGPUs: []string{"n3-g0", "n3-g1"}},
		{name: "AMD pod on a node whose agent cannot grant AMD GPUs", vm: "pod-amd",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-amd", pod: true, node: "n4", status: "failed", model: mi3, gpus: 1})
			},
			status: 409, code: "POD_NODE_NO_AMD_GRANT", msg: []string{"gpu-node-4", "node agent 2.5.3", "AMD GPUs need 2.6.0"}},
		{name: "AMD VM on the same node starts (the grant is a pod matter)", vm: "vm-amd",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-amd", node: "n4", status: "stopped", model: mi3, gpus: 1, cpu: 8, ram: 64, disk: 100})
			},
			status: 200, wantStatus: "deploying", wantNode: "n4", wantGPUs: []string{"n4-g0"}},
		// --- running on a failed GPU
		{name: "running VM on a failed GPU: stop and start would help", vm: "vm-f",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-f", node: "n1", status: "running", model: h100, gpus: 2, held: []string{"n1-g6", "n1-g7"}, cpu: 8, ram: 64, disk: 100})
			},
			status: 503, code: "VM_NODE_BUSY",
			msg: []string{"failed GPU 0000:DB:00.0 (XID 79)", "gpu-node-1", "stopping it and starting it again would place it on healthy GPUs of its node"}},
		{name: "running pod on a failed GPU: not enough healthy GPUs (GraphQL)", vm: "pod-f", graphql: true,
			setup: func(f *dataset.File) {
				failGPU(f, "n1-g6", "XID 48")
				addVM(f, vmSpec{id: "pod-f", pod: true, node: "n1", status: "running", model: h100, gpus: 2, held: []string{"n1-g6", "n1-g7"}})
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "running", model: h100, gpus: 5, held: []string{"n1-g0", "n1-g1", "n1-g2", "n1-g3", "n1-g4"}})
			},
			status: 503, code: "POD_NODE_BUSY",
			msg: []string{"the pod holds failed GPUs 0000:BA:00.0 (XID 48), 0000:DB:00.0 (XID 79) on node gpu-node-1",
				"the node has 1 healthy " + h100Name + " GPU free or its own, 2 needed"}},
		{name: "interrupted VM back online on a GPU that failed meanwhile", vm: "vm-f",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-f", node: "n1", status: "interrupted", reason: "node_lost", model: h100, gpus: 1, held: []string{"n1-g7"}, cpu: 8, ram: 64, disk: 100})
			},
			status: 503, code: "VM_NODE_BUSY", msg: []string{"failed GPU 0000:DB:00.0 (XID 79)", "stopping it and starting it again"}},
		// --- stopped/failed: too few GPUs
		{name: "stopped VM: too few free GPUs", vm: "vm-g",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-g", node: "n1", status: "stopped", model: h100, gpus: 2, cpu: 8, ram: 64, disk: 100})
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "running", model: h100, gpus: 6, held: []string{"n1-g0", "n1-g1", "n1-g2", "n1-g3", "n1-g4", "n1-g5"}})
			},
			status: 503, code: "VM_NODE_BUSY",
			msg: []string{"node gpu-node-1 has 1 free " + h100Name + " GPU, 2 needed", "failed GPU 0000:DB:00.0 (XID 79)"}},
		{name: "failed pod: too few free GPUs", vm: "pod-g",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-g", pod: true, node: "n1", status: "failed", model: h100, gpus: 1})
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "deploying", model: h100, gpus: 7, held: []string{"n1-g0", "n1-g1", "n1-g2", "n1-g3", "n1-g4", "n1-g5", "n1-g6"}})
			},
			status: 503, code: "POD_NODE_BUSY",
			msg: []string{"node gpu-node-1 has 0 free " + h100Name + " GPUs, 1 needed", "failed GPU 0000:DB:00.0 (XID 79)"}},
		// --- VM: disk, RAM, CPU
		{name: "stopped VM: too little disk, RAM and CPU", vm: "vm-h",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-h", node: "n6", status: "stopped", model: h100, gpus: 1, cpu: 16, ram: 128, disk: 500})
				addVM(f, vmSpec{id: "vm-busy", node: "n6", status: "interrupted", model: h100, gpus: 1, held: []string{"n6-g0"}, cpu: 24, ram: 200, disk: 900})
			},
			status: 503, code: "VM_NODE_BUSY",
			msg: []string{"node gpu-node-6 has too little free disk (100 GB free, 500 GB needed), RAM (56 GB free, 128 GB needed) and CPU (8 cores free, 16 cores needed)"}},
		{name: "stopped VM: too little RAM only; stopped VMs hold nothing", vm: "vm-h",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-h", node: "n6", status: "stopped", model: h100, gpus: 1, cpu: 16, ram: 128, disk: 500})
				addVM(f, vmSpec{id: "vm-busy", node: "n6", status: "running", model: h100, gpus: 1, held: []string{"n6-g0"}, cpu: 8, ram: 200, disk: 100})
				addVM(f, vmSpec{id: "vm-idle", node: "n6", status: "stopped", model: h100, gpus: 1, cpu: 32, ram: 256, disk: 1000})
			},
			status: 503, code: "VM_NODE_BUSY",
			msg: []string{"node gpu-node-6 has too little free RAM (56 GB free, 128 GB needed)"}},
		// --- pod: InfiniBand addresses
		{name: "pod: its fabric has no free address", vm: "pod-ip",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-ip", pod: true, node: "n1", status: "stopped", model: h100, gpus: 1})
				// ib-1 holds 2 addresses: a running pod on n1 and an
				// interrupted one on n3, the same fabric.
				addVM(f, vmSpec{id: "pod-x", pod: true, node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g0"}})
				addVM(f, vmSpec{id: "pod-y", pod: true, node: "n3", status: "interrupted", model: h100, gpus: 1, held: []string{"n3-g0"}})
				// Globex is not InfiniBand-enabled: its pod holds no address.
				addVM(f, vmSpec{id: "pod-z", org: "org-globex", pod: true, node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g1"}})
			},
			status: 503, code: "INSUFFICIENT_IP_CAPACITY",
			msg: []string{"InfiniBand fabric ib-1 of node gpu-node-1 has no free address (2 of 2 held)"}},
		{name: "pod: one address left on its fabric", vm: "pod-ip",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-ip", pod: true, node: "n1", status: "failed", model: h100, gpus: 1})
				addVM(f, vmSpec{id: "pod-x", pod: true, node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g0"}})
				addVM(f, vmSpec{id: "pod-y", pod: true, node: "n3", status: "stopped", model: h100, gpus: 1})
			},
			status: 200, wantStatus: "deploying", wantNode: "n1", wantGPUs: []string{"n1-g1"}},
		// --- success paths
		{name: "running VM is rebooted in place", vm: "vm-run",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-run", node: "n1", status: "running", model: h100, gpus: 2, held: []string{"n1-g3", "n1-g5"}, cpu: 8, ram: 64, disk: 100})
			},
			status: 200, wantStatus: "running", wantNode: "n1", wantGPUs: []string{"n1-g3", "n1-g5"}},
		{name: "running pod's container is recreated (GraphQL)", vm: "pod-run", graphql: true,
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-run", pod: true, node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g4"}})
			},
			status: 200, wantStatus: "running", wantNode: "n1", wantGPUs: []string{"n1-g4"}},
		{name: "stopped VM claims the lowest free healthy GPUs", vm: "vm-s",
			setup: func(f *dataset.File) {
				failGPU(f, "n1-g1", "XID 79")
				addVM(f, vmSpec{id: "vm-s", node: "n1", status: "stopped", reason: "user_stopped", model: h100, gpus: 2, cpu: 16, ram: 128, disk: 500})
				addVM(f, vmSpec{id: "vm-busy", node: "n1", status: "running", model: h100, gpus: 2, held: []string{"n1-g0", "n1-g2"}, cpu: 112, ram: 1920, disk: 29500})
			},
			// exactly the CPU/RAM/disk left
			status: 200, wantStatus: "deploying", wantNode: "n1", wantGPUs: []string{"n1-g3", "n1-g4"}},
		{name: "failed pod of an InfiniBand org starts and takes an address", vm: "pod-s",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-s", pod: true, node: "n1", status: "failed", reason: "container failed to start: image not found", model: h100, gpus: 1})
			},
			status: 200, wantStatus: "deploying", wantNode: "n1", wantGPUs: []string{"n1-g0"}},
		{name: "CPU-only VM starts", vm: "vm-cpu",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-cpu", node: "n6", status: "stopped", cpu: 32, ram: 256, disk: 1000})
			},
			status: 200, wantStatus: "deploying", wantNode: "n6", wantGPUs: nil},
		{name: "interrupted VM resumes when its node is back", vm: "vm-i",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "vm-i", node: "n1", status: "interrupted", reason: "node_lost", model: h100, gpus: 2, held: []string{"n1-g1", "n1-g2"}, cpu: 8, ram: 64, disk: 100})
			},
			status: 200, wantStatus: "running", wantNode: "n1", wantGPUs: []string{"n1-g1", "n1-g2"}},
		{name: "interrupted pod resumes, its address kept even on a full fabric", vm: "pod-i",
			setup: func(f *dataset.File) {
				addVM(f, vmSpec{id: "pod-i", pod: true, node: "n1", status: "interrupted", reason: "node_lost", model: h100, gpus: 1, held: []string{"n1-g0"}})
				addVM(f, vmSpec{id: "pod-x", pod: true, node: "n1", status: "running", model: h100, gpus: 1, held: []string{"n1-g1"}})
			},
			status: 200, wantStatus: "running", wantNode: "n1", wantGPUs: []string{"n1-g0"}},
	}

	storetest.Each(t, func(t *testing.T, st *store.Store) {
		env := servertest.New(t, st, "")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				f := newWorld()
				if tc.setup != nil {
					tc.setup(f)
				}
				resetWorld(t, st, f)
				runRestartCase(t, env, tc)
			})
		}
	})
}

func runRestartCase(t *testing.T, env *servertest.Env, tc restartCase) {
	st := env.Store
	token := tc.token
	switch token {
	case "":
		token = "acme-operator"
	case "-":
		token = ""
	}
	before := holders(t, st)
	var beforeVM *vmSnapshot
	if tc.code != "" && vmExists(t, st, tc.vm) {
		v := snap(vmRow(t, st, tc.vm))
		beforeVM = &v
	}

	var code, msg string
	var status int
	var body map[string]any
	if tc.graphql {
		r := env.GraphQL(token, restartMutation, map[string]any{"id": tc.vm})
		if len(r.Errors) > 0 {
			e := r.Errors[0]
			code, msg = r.Code(), e.Message
			s, _ := e.Extensions["status"].(float64)
			status = int(s)
			if r.Data != nil && string(r.Data) != "null" {
				t.Errorf("data = %s, want null", r.Data)
			}
		} else {
			status = 200
			var got struct{ RestartVm map[string]any }
			env.Decode(r, &got)
			body = got.RestartVm
		}
	} else {
		resp := env.Request(http.MethodPost, "/v1/vms/"+tc.vm+"/restart", token, nil, nil)
		defer resp.Body.Close()
		status = resp.StatusCode
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("body: %v", err)
		}
		if status != 200 {
			e, _ := body["error"].(map[string]any)
			if e == nil || len(body) != 1 {
				t.Fatalf("error body = %v, want {\"error\": {...}}", body)
			}
			code, _ = e["code"].(string)
			msg, _ = e["message"].(string)
			body = nil
		}
		// Every 503 carries Retry-After; nothing else needs one.
		ra := resp.Header.Get("Retry-After")
		if status == 503 && (ra == "" || ra == "0") {
			t.Errorf("503 without Retry-After")
		}
		if status != 503 && ra != "" {
			t.Errorf("%d with Retry-After %q", status, ra)
		}
	}

	if status != tc.status || code != tc.code {
		t.Fatalf("answer = %d %s %q, want %d %s", status, code, msg, tc.status, tc.code)
	}
	for _, m := range tc.msg {
		if !strings.Contains(msg, m) {
			t.Errorf("message %q lacks %q", msg, m)
		}
	}
	if tc.code != "" && (strings.Contains(strings.ToLower(msg), "sql") || strings.Contains(msg, "internal")) {
		t.Errorf("message leaks internals: %q", msg)
	}

	after := holders(t, st)
	if tc.code != "" {
		// A refusal changes nothing: no GPU, no status.
		if !maps.Equal(before, after) {
			t.Errorf("GPU holders changed on a refusal:\nbefore %v\nafter  %v", before, after)
		}
		if beforeVM != nil {
			if now := snap(vmRow(t, st, tc.vm)); now != *beforeVM {
				t.Errorf("VM changed on a refusal: %+v → %+v", *beforeVM, now)
			}
		}
		return
	}

	// A success: the VM, where its GPUs are, and nobody else's GPUs touched.
	v := vmRow(t, st, tc.vm)
	if string(v.Status) != tc.wantStatus || v.StatusReason != "user_restarted" || v.InterruptedAt != nil {
		t.Errorf("row: status %s reason %q interruptedAt %v, want %s user_restarted nil", v.Status, v.StatusReason, v.InterruptedAt, tc.wantStatus)
	}
	if v.NodeID == nil || *v.NodeID != tc.wantNode {
		t.Errorf("row: node %v, want %s", v.NodeID, tc.wantNode)
	}
	if got := heldBy(after, tc.vm); !sameStrings(got, tc.wantGPUs) {
		t.Errorf("holds %v, want %v", got, tc.wantGPUs)
	}
	for g, holder := range before {
		if holder != tc.vm && after[g] != holder {
			t.Errorf("GPU %s of %s now held by %q", g, holder, after[g])
		}
	}
	for g, holder := range after {
		if holder != tc.vm && before[g] != holder {
			t.Errorf("GPU %s newly held by %s", g, holder)
		}
	}
	checkVMBody(t, tc, body, v.CapabilityTier == "pod", v.GPUModelID != nil)
}

// vmSnapshot is what a refusal must leave as it was.
type vmSnapshot struct {
	Status, Reason, Node string
	TearingDown          bool
	Interrupted          string
}

func snap(vm models.VM) vmSnapshot {
	s := vmSnapshot{Status: string(vm.Status), Reason: vm.StatusReason, TearingDown: vm.TearingDown}
	if vm.NodeID != nil {
		s.Node = *vm.NodeID
	}
	if vm.InterruptedAt != nil {
		s.Interrupted = vm.InterruptedAt.String()
	}
	return s
}

func vmExists(t testing.TB, st *store.Store, id string) bool {
	return storetest.Count(t, st, "vms", "id = ?", id) == 1
}

const restartMutation = `mutation($id: ID!) { restartVm(id: $id) {
	capabilityTier computeClass createdAt diskSizeGb endpointUrl gpuCount gpuManufacturer gpuModelId gpuModelName
	id imageUrl managedBy name organizationId pricePerHourCents provisioningStage public resourceSize serviceType
	status statusReason tier volumeGb nodeId gpuIds cpuCores ramGb tearingDown interruptedAt } }`

// seedFields are the keys of the seed's VM object plus the entities contract's.
var seedFields = []string{"capabilityTier", "computeClass", "createdAt", "diskSizeGb", "endpointUrl", "gpuCount",
	"gpuManufacturer", "gpuModelId", "gpuModelName", "id", "imageUrl", "managedBy", "name", "organizationId",
	"pricePerHourCents", "provisioningStage", "public", "resourceSize", "serviceType", "status", "statusReason",
	"tier", "volumeGb", "nodeId", "gpuIds", "cpuCores", "ramGb", "tearingDown", "interruptedAt"}

// checkVMBody checks the answer of a success on either face.
func checkVMBody(t *testing.T, tc restartCase, body map[string]any, pod, hasModel bool) {
	t.Helper()
	for _, k := range seedFields {
		_, ok := body[k]
		switch {
		case (k == "gpuManufacturer" || k == "gpuModelId" || k == "gpuModelName") && !hasModel && !tc.graphql:
			if ok {
				t.Errorf("%s present on a CPU-only row: %v", k, body[k])
			}
		case !ok:
			t.Errorf("answer lacks %s", k)
		}
	}
	if !tc.graphql && len(body) != len(seedFields)-3*boolInt(!hasModel) {
		t.Errorf("answer has %d keys, want %d: %v", len(body), len(seedFields), body)
	}
	wantStatus := tc.wantStatus
	if tc.graphql {
		wantStatus = strings.ToUpper(wantStatus)
	}
	if body["id"] != tc.vm || body["status"] != wantStatus || body["statusReason"] != "user_restarted" ||
		body["nodeId"] != tc.wantNode || body["interruptedAt"] != nil || body["createdAt"] != "2024-05-01T10:00:00.000Z" {
		t.Errorf("answer = %v", body)
	}
	var ids []string
	for _, g := range body["gpuIds"].([]any) {
		ids = append(ids, g.(string))
	}
	if !sameStrings(ids, tc.wantGPUs) {
		t.Errorf("answer gpuIds = %v, want %v", ids, tc.wantGPUs)
	}
	if hasModel && (body["gpuModelName"] == nil || body["gpuManufacturer"] == nil) {
		t.Errorf("answer lacks the model's name or maker: %v", body)
	}
	if pod != (body["capabilityTier"] == "pod") {
		t.Errorf("capabilityTier = %v", body["capabilityTier"])
	}
	if pod && fmt.Sprint(body["volumeGb"]) != "100" {
		t.Errorf("pod volumeGb = %v", body["volumeGb"])
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRestartVMBody pins the REST answer byte for byte: the seed's VM
// object, camelCase, lower-case status, RFC 3339 UTC instants with
// milliseconds, plus the entities contract's fields; gpuManufacturer, gpuModelId and
// gpuModelName absent on a CPU-only row.
func TestRestartVMBody(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newWorld()
		addVM(f, vmSpec{id: "vm-s", node: "n1", status: "stopped", reason: "user_stopped", model: h100, gpus: 2, cpu: 16, ram: 128, disk: 500})
		f.VMs[0].Public, f.VMs[0].ServiceType, f.VMs[0].ComputeClass = true, "jupyter", ""
		addVM(f, vmSpec{id: "vm-cpu", node: "n6", status: "interrupted", reason: "node_lost", cpu: 4, ram: 16, disk: 50})
		env := servertest.New(t, st, fixtureJSON(t, f))

		status, body := env.Do(http.MethodPost, "/v1/vms/vm-s/restart", "acme-operator", nil, nil)
		want := `{"capabilityTier":"","computeClass":"","createdAt":"2024-05-01T10:00:00.000Z","diskSizeGb":500,` +
			`"endpointUrl":"https://vm-s.example.net","gpuCount":2,"gpuManufacturer":"NVIDIA","gpuModelId":"h100-80gb",` +
			`"gpuModelName":"NVIDIA H100 80GB HBM3","id":"vm-s","imageUrl":"","managedBy":"","name":"vm-s-name",` +
			`"organizationId":"org-acme","pricePerHourCents":450,"provisioningStage":"scheduled","public":true,` +
			`"resourceSize":"2xGPU","serviceType":"jupyter","status":"deploying","statusReason":"user_restarted",` +
			`"tier":"standard","volumeGb":0,"nodeId":"n1","gpuIds":["n1-g0","n1-g1"],"cpuCores":16,"ramGb":128,` +
			`"tearingDown":false,"interruptedAt":null}` + "\n"
		if status != 200 || string(body) != want {
			t.Errorf("answer %d\n%s\nwant\n%s", status, body, want)
		}

		status, body = env.Do(http.MethodPost, "/v1/vms/vm-cpu/restart", "acme-operator", nil, nil)
		want = `{"capabilityTier":"","computeClass":"","createdAt":"2024-05-01T10:00:00.000Z","diskSizeGb":50,` +
			`"endpointUrl":"https://vm-cpu.example.net","gpuCount":0,"id":"vm-cpu",` +
			`"imageUrl":"","managedBy":"","name":"vm-cpu-name","organizationId":"org-acme","pricePerHourCents":0,` +
			`"provisioningStage":"ready","public":false,"resourceSize":"0xGPU","serviceType":"","status":"running",` +
			`"statusReason":"user_restarted","tier":"standard","volumeGb":0,"nodeId":"n6","gpuIds":[],"cpuCores":4,` +
			`"ramGb":16,"tearingDown":false,"interruptedAt":null}` + "\n"
		if status != 200 || string(body) != want {
			t.Errorf("answer %d\n%s\nwant\n%s", status, body, want)
		}

		// The same restart again: it is deploying now.
		status, body = env.Do(http.MethodPost, "/v1/vms/vm-s/restart", "acme-operator", nil, nil)
		if status != 409 || !strings.Contains(string(body), `"code":"VM_NOT_READY"`) {
			t.Errorf("second restart: %d %s", status, body)
		}
	})
}
