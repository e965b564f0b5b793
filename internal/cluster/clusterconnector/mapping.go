package clusterconnector

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/models"
)

// Conventions are the labels and annotations the mapping reads. Their
// defaults are Run:ai's own (its open-source scheduler's constants and
// the labels its workloads' pods carry); each is a connector flag, for a
// cluster that names them otherwise.
type Conventions struct {
	// WorkloadIDLabel on a pod names its Run:ai workload (a UUID); without
	// it the workload is the pod's controller (a ReplicaSet's Deployment),
	// else the pod itself.
	WorkloadIDLabel string
	// RevisionIDLabel on a pod names its workload's revision; without it a
	// Deployment's pod's revision is its ReplicaSet.
	RevisionIDLabel string
	// ProjectLabel on a pod, else on its namespace, names its project (the
	// scheduler's queue); without either the namespace is the project.
	ProjectLabel string
	// TaskLabel on a pod is its task in a distributed workload (master,
	// worker).
	TaskLabel string
	// NodePoolLabel on a node is its node pool (a node without it is in
	// DefaultNodePool); on a pod, or in its node selector or required
	// affinity, the pools it asks for.
	NodePoolLabel string
	// GPUFractionAnnotation is the portion of a GPU a pod asks for,
	// GPUDevicesAnnotation on how many GPUs, GPUMemoryAnnotation the GPU
	// memory (MiB) it asks for instead.
	GPUFractionAnnotation, GPUDevicesAnnotation, GPUMemoryAnnotation string
	// GPUResource is the extended resource whole GPUs are requested as.
	GPUResource corev1.ResourceName
}

// DefaultNodePool is the pool of a node without the pool label, as in
// Run:ai.
const DefaultNodePool = "default"

// RunaiConventions are Run:ai's names.
func RunaiConventions() Conventions {
	return Conventions{
		WorkloadIDLabel:       "run.ai/workload-id",
		RevisionIDLabel:       "run.ai/revision-id",
		ProjectLabel:          "runai/queue",
		TaskLabel:             "training.kubeflow.org/replica-type",
		NodePoolLabel:         "runai/node-pool",
		GPUFractionAnnotation: "gpu-fraction",
		GPUDevicesAnnotation:  "gpu-fraction-num-devices",
		GPUMemoryAnnotation:   "gpu-memory",
		GPUResource:           "nvidia.com/gpu",
	}
}

// Related is what the mapping knows of a pod beyond the pod: all of it
// from the connector's caches, so that mapping is a pure function.
type Related struct {
	ClusterID string
	// Node is the pod's node, nil when it is unbound or not (yet) known.
	Node *corev1.Node
	// Namespace is the pod's namespace, nil when not known.
	Namespace *corev1.Namespace
	// ReplicaSet is the pod's controlling ReplicaSet, nil when it has none
	// or it is not known.
	ReplicaSet *metav1.ObjectMeta
	// DeletedAt is when the pod was deleted, nil while it exists.
	DeletedAt *time.Time
}

// Mapped is a pod as Run:ai's pod object, with its workload and project.
type Mapped struct {
	Pod      clusterbatch.Pod
	Workload clusterbatch.Workload
	Project  clusterbatch.Project
	// Problems are what could not be read (a bad annotation): the field is
	// left out, the pod still reported.
	Problems []string
}

// Map is pod as Run:ai's pod object under conventions c.
func (c Conventions) Map(pod *corev1.Pod, r Related) Mapped {
	var m Mapped
	p := &m.Pod
	p.Name, p.ID, p.ClusterID = pod.Name, string(pod.UID), r.ClusterID
	p.CreatedAt = pod.CreationTimestamp.UTC()
	p.PriorityClassName = pod.Spec.PriorityClassName
	p.NodeName = optional(pod.Spec.NodeName)
	p.IP = optional(pod.Status.PodIP)
	p.Task = optional(pod.Labels[c.TaskLabel])
	p.DeletedAt = r.DeletedAt

	m.Workload, p.RevisionID = c.workload(pod, r.ReplicaSet)
	p.WorkloadID = m.Workload.ID
	m.Project = c.project(pod, r.Namespace)
	m.Workload.ProjectID = m.Project.ID
	p.ProjectID = &m.Project.ID

	p.K8sPhase = string(pod.Status.Phase)
	if p.K8sPhase == "" {
		p.K8sPhase = string(corev1.PodPending) // not yet written by a kubelet
	}
	p.Containers, p.CompletedAt = containers(pod)
	p.K8sPhaseUpdatedAt = phaseSince(pod, p.CompletedAt)

	p.RequestedNodePools = c.requestedPools(pod)
	if pod.Spec.NodeName != "" && r.Node != nil {
		pool := r.Node.Labels[c.NodePoolLabel]
		if pool == "" {
			pool = DefaultNodePool
		}
		p.CurrentNodePool = &pool
	}
	p.Tolerations = tolerations(pod.Spec.Tolerations)
	p.NodeAffinity = nodeAffinity(pod.Spec.Affinity)
	p.RequestedResources, p.AllocatedResources, m.Problems = c.resources(pod)
	return m
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// workload is the pod's workload and revision: the label's, else its
// controller's (a Deployment through its ReplicaSet, the ReplicaSet its
// revision), else the pod alone is its workload.
func (c Conventions) workload(pod *corev1.Pod, rs *metav1.ObjectMeta) (clusterbatch.Workload, *string) {
	w := clusterbatch.Workload{ID: string(pod.UID), Name: pod.Name}
	var revision *string
	if owner := metav1.GetControllerOf(pod); owner != nil {
		w = clusterbatch.Workload{ID: string(owner.UID), Name: owner.Name}
		if owner.Kind == "ReplicaSet" && rs != nil && rs.UID == owner.UID {
			if top := metav1.GetControllerOfNoCopy(rs); top != nil {
				w = clusterbatch.Workload{ID: string(top.UID), Name: top.Name}
				id := string(owner.UID)
				revision = &id
			}
		}
	}
	if id := pod.Labels[c.WorkloadIDLabel]; id != "" {
		w.ID = strings.ToLower(id)
	}
	if id := pod.Labels[c.RevisionIDLabel]; id != "" {
		id = strings.ToLower(id)
		revision = &id
	}
	return w, revision
}

// project is the pod's label's, else its namespace's, else the namespace.
func (c Conventions) project(pod *corev1.Pod, ns *corev1.Namespace) clusterbatch.Project {
	name := pod.Labels[c.ProjectLabel]
	if name == "" && ns != nil {
		name = ns.Labels[c.ProjectLabel]
	}
	if name == "" {
		name = pod.Namespace
	}
	return clusterbatch.Project{ID: name, Name: name}
}

// containers are the pod's containers with when each started, and when
// the pod completed: the last container's end, once Succeeded or Failed.
func containers(pod *corev1.Pod) ([]models.Container, *time.Time) {
	started := map[string]*time.Time{}
	var completed *time.Time
	for _, s := range pod.Status.ContainerStatuses {
		switch {
		case s.State.Running != nil:
			started[s.Name] = timeOf(s.State.Running.StartedAt)
		case s.State.Terminated != nil:
			started[s.Name] = timeOf(s.State.Terminated.StartedAt)
			if end := timeOf(s.State.Terminated.FinishedAt); end != nil && (completed == nil || end.After(*completed)) {
				completed = end
			}
		}
	}
	out := make([]models.Container, 0, len(pod.Spec.Containers))
	for _, ct := range pod.Spec.Containers {
		out = append(out, models.Container{Name: ct.Name, Image: ct.Image, StartedAt: started[ct.Name]})
	}
	if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		completed = nil
	}
	return out, completed
}

func timeOf(t metav1.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// phaseSince is when the pod entered its phase, read from the pod alone
// (Kubernetes keeps no phase transition time), so that every connector
// and every restart answers the same: a completed pod's completion; a
// running pod's first container start, else its start; a pending pod's
// scheduling, else its creation.
func phaseSince(pod *corev1.Pod, completed *time.Time) time.Time {
	created := pod.CreationTimestamp.UTC()
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		if completed != nil {
			return *completed
		}
		return latestCondition(pod, created)
	case corev1.PodRunning:
		var first *time.Time
		for _, s := range pod.Status.ContainerStatuses {
			var at metav1.Time
			switch {
			case s.State.Running != nil:
				at = s.State.Running.StartedAt
			case s.State.Terminated != nil:
				at = s.State.Terminated.StartedAt
			}
			if t := timeOf(at); t != nil && (first == nil || t.Before(*first)) {
				first = t
			}
		}
		if first != nil {
			return *first
		}
		if t := timeOf(ptrTime(pod.Status.StartTime)); t != nil {
			return *t
		}
		return created
	case corev1.PodPending, "":
		for _, cond := range pod.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionTrue && !cond.LastTransitionTime.IsZero() {
				return cond.LastTransitionTime.UTC()
			}
		}
		return created
	}
	return latestCondition(pod, created)
}

func ptrTime(t *metav1.Time) metav1.Time {
	if t == nil {
		return metav1.Time{}
	}
	return *t
}

func latestCondition(pod *corev1.Pod, since time.Time) time.Time {
	for _, cond := range pod.Status.Conditions {
		if t := cond.LastTransitionTime.UTC(); t.After(since) {
			since = t
		}
	}
	return since
}

// requestedPools are the node pools the pod asks for: its pool label (a
// comma-separated list), else its node selector's, else the values its
// required node affinity allows for the pool label.
func (c Conventions) requestedPools(pod *corev1.Pod) []string {
	pools := []string{}
	add := func(s string) {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" && !slices.Contains(pools, p) {
				pools = append(pools, p)
			}
		}
	}
	add(pod.Labels[c.NodePoolLabel])
	if len(pools) == 0 {
		add(pod.Spec.NodeSelector[c.NodePoolLabel])
	}
	if a := pod.Spec.Affinity; len(pools) == 0 && a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if e.Key == c.NodePoolLabel && e.Operator == corev1.NodeSelectorOpIn {
					for _, v := range e.Values {
						add(v)
					}
				}
			}
		}
	}
	return pools
}

func tolerations(ts []corev1.Toleration) []models.PodToleration {
	out := make([]models.PodToleration, 0, len(ts))
	for _, t := range ts {
		pt := models.PodToleration{Key: &t.Key, Operator: new(string(t.Operator)), Value: &t.Value, Effect: new(string(t.Effect))}
		if t.TolerationSeconds != nil {
			s := int(*t.TolerationSeconds)
			pt.TolerationSeconds = &s
		}
		out = append(out, pt)
	}
	return out
}

// nodeAffinity is the pod's node affinity in Run:ai's shape. Run:ai's
// terms have match expressions only: a term's matchFields are left out.
func nodeAffinity(a *corev1.Affinity) *models.PodNodeAffinity {
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	na := a.NodeAffinity
	out := &models.PodNodeAffinity{}
	if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		out.Required = &models.NodeAffinityRequired{NodeSelectorTerms: []models.NodeSelectorTerm{}}
		for _, term := range req.NodeSelectorTerms {
			out.Required.NodeSelectorTerms = append(out.Required.NodeSelectorTerms, selectorTerm(term))
		}
	}
	if len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		out.Preferred = &models.NodeAffinityPreferred{NodeSelectorTerms: []models.PreferredNodeSelectorTerm{}}
		for _, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			term := selectorTerm(pref.Preference)
			out.Preferred.NodeSelectorTerms = append(out.Preferred.NodeSelectorTerms,
				models.PreferredNodeSelectorTerm{Weight: new(float64(pref.Weight)), Preference: &term})
		}
	}
	return out
}

func selectorTerm(t corev1.NodeSelectorTerm) models.NodeSelectorTerm {
	out := models.NodeSelectorTerm{MatchExpressions: []models.MatchExpression{}}
	for _, e := range t.MatchExpressions {
		values := append([]string{}, e.Values...)
		out.MatchExpressions = append(out.MatchExpressions, models.MatchExpression{Key: e.Key, Operator: string(e.Operator), Values: values})
	}
	return out
}

// resources are what the pod asks for and, while it is bound and not
// completed, what it holds: Kubernetes' effective request (the larger of
// the containers' sum and the largest init container, plus the pod's
// overhead); a limit only where every container sets one. Whole GPUs
// are the GPU resource; a fraction (of one GPU, or of each of several)
// or an amount of GPU memory come from Run:ai's annotations.
func (c Conventions) resources(pod *corev1.Pod) (*models.PodRequestResources, *models.AllocatedResources, []string) {
	var problems []string
	req, lim := effective(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }),
		effective(pod, func(r corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
	limited := func(name corev1.ResourceName) bool {
		for _, ct := range pod.Spec.Containers {
			if _, ok := ct.Resources.Limits[name]; !ok {
				return false
			}
		}
		return len(pod.Spec.Containers) > 0
	}
	out := &models.PodRequestResources{}
	alloc := &models.AllocatedResources{}

	if q, ok := req[corev1.ResourceCPU]; ok {
		out.CPU = &models.RequestResourceCores{Request: new(Cores(q))}
		alloc.CPU = new(Cores(q))
	}
	if q, ok := lim[corev1.ResourceCPU]; ok && limited(corev1.ResourceCPU) {
		if out.CPU == nil {
			out.CPU = &models.RequestResourceCores{}
		}
		out.CPU.Limit = new(Cores(q))
	}
	amount := func(what string, q resource.Quantity) *string {
		s, err := Amount(q)
		if err != nil {
			problems = append(problems, what+": "+err.Error())
			return nil
		}
		return &s
	}
	if q, ok := req[corev1.ResourceMemory]; ok {
		out.CPUMemory = &models.RequestResourceQuantity{Request: amount("memory request", q)}
		alloc.CPUMemory = out.CPUMemory.Request
	}
	if q, ok := lim[corev1.ResourceMemory]; ok && limited(corev1.ResourceMemory) {
		if out.CPUMemory == nil {
			out.CPUMemory = &models.RequestResourceQuantity{}
		}
		out.CPUMemory.Limit = amount("memory limit", q)
	}

	// GPUs: whole devices, else Run:ai's fraction or memory annotations.
	if q, ok := req[c.GPUResource]; ok && !q.IsZero() {
		n := float64(q.Value())
		out.GPU = &models.RequestResourceCores{Request: &n}
		if l, ok := lim[c.GPUResource]; ok {
			out.GPU.Limit = new(float64(l.Value()))
		}
		alloc.GPU = &n
	} else if s, ok := pod.Annotations[c.GPUFractionAnnotation]; ok {
		f, err := ParseGPUFraction(s)
		devices := 1
		if d, ok := pod.Annotations[c.GPUDevicesAnnotation]; ok && err == nil {
			devices, err = ParseDevices(d)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("annotation %s/%s: %v", c.GPUFractionAnnotation, c.GPUDevicesAnnotation, err))
		} else {
			total := f * float64(devices)
			out.GPU, out.GPURequestType, alloc.GPU = &models.RequestResourceCores{Request: &total}, new(clusterbatch.GPURequestPortion), &total
		}
	} else if s, ok := pod.Annotations[c.GPUMemoryAnnotation]; ok {
		m, err := ParseGPUMemory(s)
		if err != nil {
			problems = append(problems, fmt.Sprintf("annotation %s: %v", c.GPUMemoryAnnotation, err))
		} else {
			out.GPUMemory, out.GPURequestType, alloc.GPUMemory = &models.RequestResourceQuantity{Request: &m}, new(clusterbatch.GPURequestMemory), &m
		}
	}

	// Extended resources: every other resource named with a domain,
	// but Kubernetes' own (hugepages, ephemeral storage are none).
	var names []string
	for name := range req {
		n := string(name)
		if name != c.GPUResource && strings.Contains(n, "/") && !strings.Contains(n, "kubernetes.io/") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if q := amount("extended resource "+n, req[corev1.ResourceName(n)]); q != nil {
			out.ExtendedResources = append(out.ExtendedResources, models.ExtendedResource{Resource: new(n), Quantity: q})
		}
	}
	alloc.ExtendedResources = out.ExtendedResources

	// A pod holds what it asked for from its binding until it completes.
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		alloc = nil
	}
	return out, alloc, problems
}

// effective is Kubernetes' effective amount of each resource of the pod
// in one of requests or limits.
func effective(pod *corev1.Pod, of func(corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, ct := range pod.Spec.Containers {
		for name, q := range of(ct.Resources) {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	for _, ct := range pod.Spec.InitContainers {
		for name, q := range of(ct.Resources) {
			if v, ok := sum[name]; !ok || q.Cmp(v) > 0 {
				sum[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range pod.Spec.Overhead {
		if v, ok := sum[name]; ok {
			v.Add(q)
			sum[name] = v
		}
	}
	return sum
}
