package main

import (
	"fmt"
	"strconv"
	"time"
)

const day = 24 * time.Hour

var projectSpecs = []struct{ id, name, org string }{
	{"1", "ml-research", "acme"},
	{"2", "llm-serving", "acme"},
	{"3", "vision", "globex"},
	{"4", "recsys", "globex"},
	{"5", "genomics", "initech"},
	{"6", "データサイエンス", "initech"},
}

// workloadSpec is a Run:ai workload and the shape of its pods.
type workloadSpec struct {
	name, project, cluster, pool string
	gpus                         float64 // per pod; 0 for a CPU-only pod
	memoryRequest                bool    // a fractional GPU asked by memory, not portion
	cpu                          float64
	memory                       string // CPU memory per pod, a Kubernetes quantity
	image, container, priority   string
	span                         time.Duration // how long ago it was submitted
	plans                        func(g *gen, w *Workload) []podPlan
}

// podPlan is what a pod went through; the times are drawn from its phase.
type podPlan struct {
	name, phase string
	task        *string
	revision    *string
	deleted     bool
	created     time.Time // zero: drawn for its phase within the workload's span
	deletedAt   time.Time // zero: drawn after its last phase change, when deleted
	node        string    // "": drawn from the workload's pool
	attempt     int       // a recreated pod keeps its name but is a new pod
}

// phaseMix is how many of a batch workload's pods are in each phase.
type phaseMix struct {
	pending, running, succeeded, failed int
	deletedPct                          int // share of the completed ones deleted since
}

func workloadSpecs() []workloadSpec {
	const (
		pytorch = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
		rocm    = "rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.4.0"
		python  = "python:3.12-slim"
	)
	return []workloadSpec{
		// Acme, tenant 1001.
		{name: "llama3-70b-pretrain", project: "ml-research", cluster: clusterEast, pool: "h100", gpus: 8, cpu: 96, memory: "1600G",
			image: pytorch, container: "pytorch", priority: "train", span: 5 * day,
			plans: distributed(3, "dgx-h100-01", "dgx-h100-02", "dgx-h100-03", "dgx-h100-04")},
		{name: "llama-3-70b-chat", project: "llm-serving", cluster: clusterEast, pool: "h200", gpus: 2, cpu: 16, memory: "256G",
			image: "vllm/vllm-openai:v0.6.4", container: "vllm", priority: "inference", span: 9 * day, plans: inference},
		{name: "sweep_lr_1e-4", project: "ml-research", cluster: clusterEast, pool: "h100", gpus: 1, cpu: 12, memory: "128G",
			image: pytorch, container: "main", priority: "train", span: 6 * day,
			plans: batch(phaseMix{pending: 6, running: 6, succeeded: 40, failed: 8, deletedPct: 30})},
		{name: "ablation-50%-dropout", project: "ml-research", cluster: clusterEast, pool: "h200", gpus: 1, cpu: 12, memory: "128G",
			image: pytorch, container: "main", priority: "train", span: 4 * day,
			plans: batch(phaseMix{pending: 2, running: 4, succeeded: 14, failed: 4, deletedPct: 20})},
		{name: "notebook-zoë", project: "ml-research", cluster: clusterEast, pool: "h100", gpus: 0.25, memoryRequest: true, cpu: 8, memory: "64G",
			image: "jupyter/pytorch-notebook:cuda12-python-3.11", container: "jupyter", priority: "build", span: 12 * day, plans: interactive},
		{name: "mi300x-rocm-bench", project: "ml-research", cluster: clusterEast, pool: "mi300x", gpus: 8, cpu: 96, memory: "1024G",
			image: rocm, container: "main", priority: "train", span: 3 * day,
			plans: batch(phaseMix{pending: 1, running: 1, succeeded: 4, failed: 2, deletedPct: 0})},
		// Globex, tenant 1002.
		{name: "resnet152-imagenet", project: "vision", cluster: clusterWest, pool: "a100", gpus: 8, cpu: 112, memory: "900G",
			image: pytorch, container: "pytorch", priority: "train", span: 7 * day,
			plans: distributed(2, "dgx-a100-01", "dgx-a100-02", "dgx-a100-03")},
		{name: "données-prétraitement", project: "vision", cluster: clusterWest, pool: "a100", cpu: 8, memory: "32G",
			image: python, container: "main", priority: "train", span: 10 * day,
			plans: batch(phaseMix{pending: 2, running: 4, succeeded: 30, failed: 4, deletedPct: 40})},
		{name: "dlrm_criteo_1tb", project: "recsys", cluster: clusterWest, pool: "a100", gpus: 2, cpu: 32, memory: "512G",
			image: pytorch, container: "main", priority: "train", span: 8 * day,
			plans: batch(phaseMix{pending: 1, running: 3, succeeded: 9, failed: 3, deletedPct: 25})},
		{name: "recsys-sweep", project: "recsys", cluster: clusterWest, pool: "a100", gpus: 1, cpu: 12, memory: "96G",
			image: pytorch, container: "main", priority: "train", span: 14 * day,
			plans: batch(phaseMix{pending: 5, running: 7, succeeded: 56, failed: 12, deletedPct: 50})},
		{name: "vit-huge-finetune", project: "vision", cluster: clusterWest, pool: "a100", gpus: 4, cpu: 56, memory: "448G",
			image: pytorch, container: "main", priority: "train", span: 5 * day,
			plans: batch(phaseMix{pending: 1, running: 4, succeeded: 3, failed: 2, deletedPct: 0})},
		// Initech, tenant 1003.
		{name: "alphafold-batch", project: "genomics", cluster: clusterEast, pool: "h200", gpus: 1, cpu: 16, memory: "192G",
			image: "alphafold/alphafold:2.3.2", container: "main", priority: "train", span: 13 * day,
			plans: batch(phaseMix{pending: 8, running: 10, succeeded: 70, failed: 12, deletedPct: 35})},
		{name: "esm2-finetune", project: "genomics", cluster: clusterEast, pool: "mi300x", gpus: 8, cpu: 96, memory: "1024G",
			image: rocm, container: "pytorch", priority: "train", span: 4 * day,
			plans: distributed(1, "mi300x-02", "mi300x-01")},
		{name: "データ前処理", project: "データサイエンス", cluster: clusterWest, pool: "a100", cpu: 8, memory: "32G",
			image: python, container: "main", priority: "train", span: 9 * day,
			plans: batch(phaseMix{pending: 1, running: 3, succeeded: 14, failed: 2, deletedPct: 30})},
		{name: "tokenizer_train%v2", project: "データサイエンス", cluster: clusterEast, pool: "h100", gpus: 1, cpu: 16, memory: "128G",
			image: pytorch, container: "main", priority: "train", span: 6 * day,
			plans: batch(phaseMix{pending: 2, running: 2, succeeded: 9, failed: 3, deletedPct: 25})},
	}
}

func (g *gen) addWorkloads() {
	orgOf := map[string]string{}
	for _, p := range projectSpecs {
		row := Project{ID: p.id, Name: p.name, TenantID: g.orgs[p.org].TenantID}
		g.projects[p.name] = row
		orgOf[p.name] = p.org
		g.f.Projects = append(g.f.Projects, row)
	}
	for _, s := range workloadSpecs() {
		w := &Workload{
			ID:        nameUUID("workload", s.name),
			Name:      s.name,
			ProjectID: g.projects[s.project].ID,
			ClusterID: s.cluster,
		}
		g.specs[w] = &s
		g.f.Workloads = append(g.f.Workloads, w)
		for _, plan := range s.plans(g, w) {
			g.f.Pods = append(g.f.Pods, g.pod(w, orgOf[s.project], plan))
		}
	}
}

// distributed is a PyTorch job of one master and n workers, one pod per
// node: a first attempt that failed and was deleted, and the current run,
// started three days ago, whose pods have run since (so a day of metrics
// fits). A current pod on an offline node is Unknown, as Kubernetes shows it.
func distributed(workers int, nodes ...string) func(*gen, *Workload) []podPlan {
	return func(g *gen, w *Workload) []podPlan {
		var plans []podPlan
		for attempt, created := range []time.Time{ago(g.specs[w].span), ago(3 * day)} {
			created = created.Add(-g.between(0, time.Hour))
			for i := 0; i <= workers; i++ {
				task, name := "worker", fmt.Sprintf("%s-worker-%d", w.Name, i-1)
				if i == 0 {
					task, name = "master", w.Name+"-master-0"
				}
				p := podPlan{name: name, task: new(task), created: created, node: nodes[i%len(nodes)], attempt: attempt}
				switch {
				case attempt == 0:
					p.phase, p.deleted = "Failed", true
				case !g.online(p.node):
					p.phase = "Unknown"
				default:
					p.phase = "Running"
				}
				plans = append(plans, p)
			}
		}
		return plans
	}
}

// inference is a served model with two revisions: the first scaled to zero
// when the second rolled out (its pods deleted while Running, so they are
// deleted but never completed), the second serving on three replicas with a
// fourth waiting for GPUs.
func inference(g *gen, w *Workload) []podPlan {
	var plans []podPlan
	rollout := ago(2*day + g.between(0, 3*time.Hour))
	for rev, spec := range []struct {
		created  time.Time
		replicas []string
	}{
		{ago(g.specs[w].span + g.between(0, 3*time.Hour)), []string{"Running", "Running", "Running"}},
		{rollout, []string{"Running", "Running", "Running", "Pending"}},
	} {
		id := nameUUID("revision", fmt.Sprintf("%s/%05d", w.Name, rev+1))
		g.f.Revisions = append(g.f.Revisions, Revision{ID: id, WorkloadID: w.ID})
		hash := kubeRandom(g, 10)
		for i, phase := range spec.replicas {
			p := podPlan{
				name:     fmt.Sprintf("%s-%05d-deployment-%s-%s", w.Name, rev+1, hash, kubeRandom(g, 5)),
				phase:    phase,
				revision: new(id),
				created:  spec.created.Add(time.Duration(i)*47*time.Second + g.between(0, 5*time.Second)),
			}
			if rev == 0 {
				// Scaled down once the new revision's replicas were ready.
				p.deleted, p.deletedAt = true, rollout.Add(time.Duration(6+i)*time.Minute+g.between(0, 30*time.Second))
			}
			plans = append(plans, p)
		}
	}
	return plans
}

// interactive is a notebook: two earlier sessions ended and were cleaned
// up, the current one is open.
func interactive(g *gen, w *Workload) []podPlan {
	return []podPlan{
		{name: w.Name + "-0-0", phase: "Succeeded", deleted: true, attempt: 0},
		{name: w.Name + "-0-0", phase: "Succeeded", deleted: true, attempt: 1},
		{name: w.Name + "-0-0", phase: "Running", attempt: 2, created: ago(26 * time.Hour)},
	}
}

// batch is a sweep or a job array: one pod per index, in phases by mix.
func batch(mix phaseMix) func(*gen, *Workload) []podPlan {
	return func(g *gen, w *Workload) []podPlan {
		var phases []string
		for _, x := range []struct {
			phase string
			n     int
		}{{"Succeeded", mix.succeeded}, {"Failed", mix.failed}, {"Running", mix.running}, {"Pending", mix.pending}} {
			for range x.n {
				phases = append(phases, x.phase)
			}
		}
		g.rng.Shuffle(len(phases), func(i, j int) { phases[i], phases[j] = phases[j], phases[i] })
		plans := make([]podPlan, len(phases))
		for i, phase := range phases {
			completed := phase == "Succeeded" || phase == "Failed"
			plans[i] = podPlan{
				name:    fmt.Sprintf("%s-%d-0", w.Name, i),
				phase:   phase,
				deleted: completed && g.rng.IntN(100) < mix.deletedPct,
			}
		}
		return plans
	}
}

// kubeRandom is n characters of the alphabet Kubernetes uses for the hash
// and the random suffix in a ReplicaSet's pod names.
func kubeRandom(g *gen, n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *gen) online(node string) bool { return g.nodes[node].Status == "online" }

// poolNodes are the nodes a pod of pool may have run on at instant t: a
// removed node only before it left.
func (g *gen) poolNodes(pool string, t time.Time, withOffline bool) []*Node {
	var out []*Node
	for _, n := range g.f.Nodes {
		if n.NodePool != pool {
			continue
		}
		switch n.Status {
		case "offline":
			if !withOffline {
				continue
			}
		case "removed":
			if n.LeavingAt == nil || !t.Before(must(time.Parse(time.RFC3339, string(*n.LeavingAt)))) {
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// podTimes are the instants of one pod's life.
type podTimes struct {
	created, phaseUpdated, updated time.Time
	started, completed, deleted    *time.Time
}

// lifetime draws a pod's instants for its phase, all before the anchor.
func (g *gen) lifetime(w *Workload, p podPlan) podTimes {
	var t podTimes
	t.created = p.created
	if t.created.IsZero() {
		switch p.phase {
		case "Pending":
			t.created = ago(g.between(2*time.Minute, 3*time.Hour))
		case "Running", "Unknown":
			t.created = ago(g.between(offlineSince+time.Hour, min(g.specs[w].span, 2*day)))
		default:
			t.created = ago(g.between(6*time.Hour, g.specs[w].span))
		}
	}
	if p.phase != "Pending" {
		t.started = new(t.created.Add(g.between(4*time.Second, 3*time.Minute)))
	}
	switch p.phase {
	case "Pending":
		t.phaseUpdated = t.created
	case "Running":
		t.phaseUpdated = t.started.Add(g.between(2*time.Second, 40*time.Second))
	case "Unknown":
		// Its node stopped reporting; the kubelet's last word was then.
		t.phaseUpdated = ago(offlineSince).Add(g.between(40*time.Second, 5*time.Minute))
	case "Succeeded", "Failed":
		run := g.between(20*time.Minute, 10*time.Hour)
		if p.phase == "Failed" {
			run = g.between(45*time.Second, 3*time.Hour)
		}
		end := t.started.Add(run)
		if limit := ago(5 * time.Minute); end.After(limit) {
			end = limit.Add(-g.between(0, time.Hour))
		}
		t.completed = &end
		t.phaseUpdated = end
	}
	t.updated = t.phaseUpdated
	if p.deleted {
		from := t.phaseUpdated
		d := p.deletedAt
		if d.IsZero() {
			d = from.Add(g.between(5*time.Minute, 30*time.Hour))
		}
		if limit := ago(time.Minute); d.After(limit) {
			d = from.Add(limit.Sub(from) / 2)
		}
		t.deleted = &d
		t.updated = d
	}
	return t
}

func (g *gen) pod(w *Workload, org string, p podPlan) *Pod {
	s := g.specs[w]
	// A running pod's node decides its phase (Unknown on the offline node),
	// and its phase its times; a finished pod's node depends on when it
	// finished (the removed node only before it left).
	var node *Node
	switch {
	case p.node != "":
		node = g.nodes[p.node]
	case p.phase == "Running":
		node = g.pickNode(s.pool, anchor, true)
		if node.Status == "offline" {
			p.phase = "Unknown"
		}
	}
	t := g.lifetime(w, p)
	if node == nil && p.phase != "Pending" {
		node = g.pickNode(s.pool, *t.completed, false)
	}
	pod := &Pod{
		Name:               p.name,
		PriorityClassName:  s.priority,
		ID:                 nameUUID("pod", fmt.Sprintf("%s/%s/%d", w.Name, p.name, p.attempt)),
		WorkloadID:         w.ID,
		RevisionID:         p.revision,
		ClusterID:          s.cluster,
		ProjectID:          w.ProjectID,
		CreatedAt:          msTime(t.created),
		RequestedNodePools: []string{s.pool},
		K8sPhase:           p.phase,
		Task:               p.task,
		TenantID:           g.orgs[org].TenantID,
		K8sPhaseUpdatedAt:  msTime(t.phaseUpdated),
		UpdatedAt:          msTime(t.updated),
		ProjectName:        s.project,
		WorkloadName:       w.Name,
	}
	if t.completed != nil {
		pod.CompletedAt = new(msTime(*t.completed))
	}
	if t.deleted != nil {
		pod.DeletedAt = new(msTime(*t.deleted))
	}
	if node != nil {
		pod.NodeName = new(node.Name)
		pod.CurrentNodePool = new(node.NodePool)
		pod.IP = new(fmt.Sprintf("10.244.%d.%d", g.nodeFacts[node].subnet, 2+g.rng.IntN(252)))
		g.podFacts[pod] = podFacts{model: g.nodeFacts[node].model, gpus: int(s.gpus)}
	}
	ib := g.orgs[org].InfinibandEnabled && (s.pool == "h100" || s.pool == "h200")
	pod.Containers = g.containers(s, p, t)
	pod.RequestedResources = requested(s, ib)
	pod.AllocatedResources = g.allocated(s, p.phase, node, ib)
	pod.Tolerations = g.tolerations(s)
	pod.NodeAffinity = g.affinity(s)
	return pod
}

// pickNode draws a node of pool that a pod could have been on at instant t.
func (g *gen) pickNode(pool string, t time.Time, withOffline bool) *Node {
	nodes := g.poolNodes(pool, t, withOffline)
	return nodes[g.rng.IntN(len(nodes))]
}

func (g *gen) containers(s *workloadSpec, p podPlan, t podTimes) []Container {
	var started *Instant
	if t.started != nil {
		started = new(msTime(*t.started))
	}
	cs := []Container{{Name: s.container, Image: s.image, StartedAt: started}}
	if p.revision != nil {
		// Knative's sidecar, as on every served revision.
		cs = append(cs, Container{Name: "queue-proxy", Image: "knative/serving-queue:v1.16.0", StartedAt: started})
	}
	return cs
}

var rdma = ExtendedResource{Resource: "rdma/rdma_shared_device_a", Quantity: "1", Exclude: false}

func requested(s *workloadSpec, ib bool) RequestedResources {
	r := RequestedResources{
		CPU:               &Cores{Request: new(s.cpu), Limit: new(2 * s.cpu)},
		CPUMemory:         &Quantity{Request: new(s.memory), Limit: new(s.memory)},
		ExtendedResources: []ExtendedResource{},
	}
	switch {
	case s.memoryRequest:
		r.GPURequestType = new("memory")
		r.GPUMemory = &Quantity{Request: new("20G"), Limit: new("20G")}
	case s.gpus > 0:
		r.GPURequestType = new("portion")
		r.GPU = &Cores{Request: new(s.gpus), Limit: new(s.gpus)}
	}
	if ib {
		r.ExtendedResources = append(r.ExtendedResources, rdma)
	}
	return r
}

// allocated is what a pod holds now: its request while it is scheduled,
// nothing before it is or after it ended.
func (g *gen) allocated(s *workloadSpec, phase string, node *Node, ib bool) AllocatedResources {
	a := AllocatedResources{ExtendedResources: []ExtendedResource{}}
	if phase != "Running" && phase != "Unknown" {
		a.CPU, a.CPUMemory = new(0.0), new("0")
		if s.gpus > 0 {
			a.GPU, a.GPUMemory = new(0.0), new("0")
		}
		return a
	}
	a.CPU, a.CPUMemory = new(s.cpu), new(s.memory)
	if s.gpus > 0 {
		mem := strconv.Itoa(int(float64(g.models[g.nodeFacts[node].model].MemoryGb)*s.gpus)) + "Gi"
		if s.memoryRequest {
			mem = *requested(s, ib).GPUMemory.Request
		}
		a.GPU, a.GPUMemory = new(s.gpus), new(mem)
	}
	if ib {
		a.ExtendedResources = append(a.ExtendedResources, rdma)
	}
	return a
}

// tolerations are the two every pod gets from Kubernetes (five minutes on a
// lost node before eviction) and the GPU taint of GPU nodes.
func (g *gen) tolerations(s *workloadSpec) []Toleration {
	ts := []Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: new(300)},
		{Key: "node.kubernetes.io/unreachable", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: new(300)},
	}
	if s.gpus > 0 {
		key := "nvidia.com/gpu"
		if s.pool == "mi300x" {
			key = "amd.com/gpu"
		}
		ts = append(ts, Toleration{Key: key, Operator: "Exists", Effect: "NoSchedule"})
	}
	return ts
}

// The GPU product labels the vendors' device plugins put on nodes.
var productLabels = map[string][2]string{
	"h100":   {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
	"h200":   {"nvidia.com/gpu.product", "NVIDIA-H200"},
	"a100":   {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
	"mi300x": {"amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM"},
}

func (g *gen) affinity(s *workloadSpec) NodeAffinity {
	a := NodeAffinity{
		Required: &RequiredTerms{NodeSelectorTerms: []SelectorTerm{{MatchExpressions: []MatchExpression{
			{Key: "run.ai/node-pool", Operator: "In", Values: []string{s.pool}},
		}}}},
		Preferred: &PreferredTerms{NodeSelectorTerms: []PreferredTerm{}},
	}
	if s.gpus > 0 {
		l := productLabels[s.pool]
		a.Preferred.NodeSelectorTerms = append(a.Preferred.NodeSelectorTerms, PreferredTerm{
			Weight:     50,
			Preference: SelectorTerm{MatchExpressions: []MatchExpression{{Key: l[0], Operator: "In", Values: []string{l[1]}}}},
		})
	}
	return a
}
