package clusterconnector

import (
	"fmt"
	"slices"
	"strconv"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What the informers keep. A cached Pod as the apiserver sends it is
// several KiB (its managed fields, annotations, volumes, probes, status
// conditions; the structs of a pod of one container alone are 1.8 KiB,
// before any of its strings and maps): 150,000 of them held 2 GiB. The
// informers' transforms keep of each object only what Conventions.Map
// and the connector's handlers and indexes read, so that the cache costs
// what the mapping needs.

// cachedPod is a pod as the pod informer keeps it: the name, namespace
// and resource version the cache's keys and the handlers read, the node
// and controller the indexes read, and the rest of what the mapping reads
// (slimPod's) as a Pod in protobuf, decoded again by pod for each
// mapping. Protobuf holds it in a fraction of a Pod's structs, and its
// round trip is exact for every field kept: it is the apiserver's own
// wire, which the informer read the pod from (its times are whole seconds
// there too). Namespaces and nodes, shared by many pods, are held once.
type cachedPod struct {
	name, resourceVersion string
	namespace, nodeName   unique.Handle[string]
	controller            types.UID
	raw                   []byte // slimPod's, without name, namespace and resource version, its keys coded
}

// GetObjectMeta is the pod's name, namespace and resource version, for
// the cache's keys (meta.Accessor): made for each call, so that a cached
// pod does not carry a whole ObjectMeta (232 bytes) for three strings.
func (c *cachedPod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: c.name, Namespace: c.namespace.Value(), ResourceVersion: c.resourceVersion}
}

// pod is the pod as slimPod kept it under conventions conv (cachePod's).
func (c *cachedPod) pod(conv Conventions) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	if err := p.Unmarshal(c.raw); err != nil {
		return nil, fmt.Errorf("the cached pod %s/%s: %w", c.namespace.Value(), c.name, err)
	}
	p.Name, p.Namespace, p.ResourceVersion = c.name, c.namespace.Value(), c.resourceVersion
	p.Labels, p.Annotations = decoded(p.Labels, conv.labelKeys()), decoded(p.Annotations, conv.annotationKeys())
	return p, nil
}

// cachePod is the pod informer's transform: a *corev1.Pod as a
// *cachedPod. Anything else passes unchanged (a cachedPod again: a
// transform must be idempotent).
func (c Conventions) cachePod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	s := c.slimPod(p)
	cp := &cachedPod{name: p.Name, resourceVersion: p.ResourceVersion, namespace: unique.Make(p.Namespace), nodeName: unique.Make(p.Spec.NodeName)}
	if o := metav1.GetControllerOfNoCopy(p); o != nil {
		cp.controller = o.UID
	}
	s.Name, s.Namespace, s.ResourceVersion = "", "", ""
	s.Labels, s.Annotations = coded(s.Labels, c.labelKeys()), coded(s.Annotations, c.annotationKeys())
	raw, err := s.Marshal()
	if err != nil {
		return nil, fmt.Errorf("the pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	cp.raw = raw
	return cp, nil
}

// slimPod is what Conventions.Map, and the connector around it, read of
// p: every other field is left out. It shares p's strings, slices and
// maps where it keeps them whole.
func (c Conventions) slimPod(p *corev1.Pod) *corev1.Pod {
	s := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
		CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
		Labels: only(p.Labels, c.labelKeys()...), Annotations: only(p.Annotations, c.annotationKeys()...)}}
	// The controller alone: the mapping reads no other owner.
	if o := metav1.GetControllerOfNoCopy(p); o != nil {
		s.OwnerReferences = []metav1.OwnerReference{{Kind: o.Kind, Name: o.Name, UID: o.UID, Controller: o.Controller}}
	}
	spec := &p.Spec
	s.Spec = corev1.PodSpec{NodeName: spec.NodeName, PriorityClassName: spec.PriorityClassName, Tolerations: spec.Tolerations, Overhead: spec.Overhead,
		NodeSelector: only(spec.NodeSelector, c.NodePoolLabel)}
	for _, ct := range spec.Containers {
		s.Spec.Containers = append(s.Spec.Containers, corev1.Container{Name: ct.Name, Image: ct.Image,
			Resources: corev1.ResourceRequirements{Requests: ct.Resources.Requests, Limits: ct.Resources.Limits}})
	}
	for _, ct := range spec.InitContainers {
		s.Spec.InitContainers = append(s.Spec.InitContainers, corev1.Container{
			Resources: corev1.ResourceRequirements{Requests: ct.Resources.Requests, Limits: ct.Resources.Limits}})
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		s.Spec.Affinity = &corev1.Affinity{NodeAffinity: slimNodeAffinity(spec.Affinity.NodeAffinity)}
	}
	st := &p.Status
	s.Status = corev1.PodStatus{Phase: st.Phase, PodIP: st.PodIP, StartTime: st.StartTime}
	for _, cond := range st.Conditions {
		s.Status.Conditions = append(s.Status.Conditions, corev1.PodCondition{Type: cond.Type, Status: cond.Status, LastTransitionTime: cond.LastTransitionTime})
	}
	for _, cs := range st.ContainerStatuses {
		k := corev1.ContainerStatus{Name: cs.Name}
		if r := cs.State.Running; r != nil {
			k.State.Running = &corev1.ContainerStateRunning{StartedAt: r.StartedAt}
		}
		if t := cs.State.Terminated; t != nil {
			k.State.Terminated = &corev1.ContainerStateTerminated{StartedAt: t.StartedAt, FinishedAt: t.FinishedAt}
		}
		s.Status.ContainerStatuses = append(s.Status.ContainerStatuses, k)
	}
	return s
}

// slimNodeAffinity is a's terms' match expressions and preferences'
// weights: Run:ai's terms have no matchFields.
func slimNodeAffinity(a *corev1.NodeAffinity) *corev1.NodeAffinity {
	out := &corev1.NodeAffinity{}
	if req := a.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		out.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{}}
		for _, t := range req.NodeSelectorTerms {
			out.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(out.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
				corev1.NodeSelectorTerm{MatchExpressions: t.MatchExpressions})
		}
	}
	for _, pref := range a.PreferredDuringSchedulingIgnoredDuringExecution {
		out.PreferredDuringSchedulingIgnoredDuringExecution = append(out.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: pref.Weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: pref.Preference.MatchExpressions}})
	}
	return out
}

// labelKeys and annotationKeys are the pod's labels and annotations the
// mapping reads, in the order coded numbers them.
func (c Conventions) labelKeys() []string {
	return []string{c.WorkloadIDLabel, c.RevisionIDLabel, c.ProjectLabel, c.TaskLabel, c.NodePoolLabel}
}

func (c Conventions) annotationKeys() []string {
	return []string{c.GPUFractionAnnotation, c.GPUDevicesAnnotation, c.GPUMemoryAnnotation}
}

// coded is m (only's, of keys) with each key written as its position in
// keys: a convention's name ("training.kubeflow.org/replica-type") is
// longer than most values, and each cached pod would hold it again.
// decoded is m as it was.
func coded(m map[string]string, keys []string) map[string]string {
	return recoded(m, func(k string) string { return strconv.Itoa(slices.Index(keys, k)) })
}

func decoded(m map[string]string, keys []string) map[string]string {
	return recoded(m, func(k string) string {
		i, _ := strconv.Atoi(k)
		return keys[i]
	})
}

func recoded(m map[string]string, key func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[key(k)] = v
	}
	return out
}

// only is m's entries under keys (nil when it has none of them).
func only(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]string, len(keys))
			}
			out[k] = v
		}
	}
	return out
}

// slimObject is the transform of the node, namespace and ReplicaSet
// informers: of a node its pool label, of a namespace its project label
// (what the mapping reads, and what their handlers compare to re-send
// their pods), of a ReplicaSet its controller (the Deployment: the
// workload of its pods). Anything else passes unchanged.
func (c Conventions) slimObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Node:
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion,
			Labels: only(o.Labels, c.NodePoolLabel)}}, nil
	case *corev1.Namespace:
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion,
			Labels: only(o.Labels, c.ProjectLabel)}}, nil
	case *appsv1.ReplicaSet:
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion}}
		if top := metav1.GetControllerOfNoCopy(o); top != nil {
			rs.OwnerReferences = []metav1.OwnerReference{{Kind: top.Kind, Name: top.Name, UID: top.UID, Controller: top.Controller}}
		}
		return rs, nil
	}
	return obj, nil
}
