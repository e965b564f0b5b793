package clusterconnector

import (
	"bytes"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// noisy is p with what the mapping does not read and a real pod carries,
// much of it big: managed fields, annotations and labels of other tools,
// owners that are not its controller, volumes, environment, probes,
// conditions' messages, container statuses' images and restarts.
func noisy(p *corev1.Pod) *corev1.Pod {
	big := strings.Repeat("x", 64<<10)
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{"f:big":{}}},"f:spec":{}}`)}}}
	p.Annotations = merge(p.Annotations, map[string]string{"kubectl.kubernetes.io/last-applied-configuration": big, "prometheus.io/scrape": "true"})
	p.Labels = merge(p.Labels, map[string]string{"app": "train", "pod-template-hash": "7d9f"})
	p.OwnerReferences = append([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg", UID: "99999999-0000-4000-8000-000000000001"}},
		p.OwnerReferences...)
	p.Finalizers = []string{"example.com/keep"}
	p.GenerateName = p.Name + "-"
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p.Spec.ServiceAccountName, p.Spec.SchedulerName, p.Spec.RestartPolicy = "trainer", "runai-scheduler", corev1.RestartPolicyNever
	for i := range p.Spec.Containers {
		ct := &p.Spec.Containers[i]
		ct.Env = []corev1.EnvVar{{Name: "BIG", Value: big}}
		ct.Command, ct.ImagePullPolicy = []string{"python", "train.py"}, corev1.PullIfNotPresent
		ct.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		ct.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	}
	for i := range p.Spec.InitContainers {
		p.Spec.InitContainers[i].Args = []string{"--fetch", big}
	}
	p.Status.Message, p.Status.HostIP, p.Status.QOSClass = "a message", "192.168.0.1", corev1.PodQOSBurstable
	for i := range p.Status.Conditions {
		p.Status.Conditions[i].Message, p.Status.Conditions[i].LastProbeTime = big, at(1000)
	}
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.Image, cs.ImageID, cs.ContainerID, cs.RestartCount, cs.Ready = "img", "sha256:0", "containerd://0", 3, true
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(-100), FinishedAt: at(-50), Message: big}}
	}
	return p
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// everyPod is pods covering every branch of the mapping: whole and
// fractional GPUs, GPU memory, a bad annotation, an annotation present
// but empty, init containers and overhead, selectors and affinities with
// match fields, tolerations, conditions, containers running, terminated
// and waiting, a deletion timestamp; each in every phase.
func everyPod() []*corev1.Pod {
	fraction := func() *corev1.Pod {
		p := evalPod()
		p.Spec.NodeSelector["zone"] = "a"
		return p
	}
	memory := func() *corev1.Pod {
		p := notebookPod()
		na := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		na.NodeSelectorTerms = append(na.NodeSelectorTerms, corev1.NodeSelectorTerm{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}})
		p.Spec.Affinity.PodAffinity = &corev1.PodAffinity{}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: at(7)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, LastTransitionTime: at(2)}}
		return p
	}
	sink := func() *corev1.Pod {
		p := trainPod()
		p.Annotations = map[string]string{"gpu-memory": ""}
		p.DeletionTimestamp = tp(500)
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "warm", Image: "warm:1", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi"), "example.com/fpga": resource.MustParse("3")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi")}}})
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("120Mi")}
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v",
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(0))})
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(40)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(30)}}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: "done", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(6), FinishedAt: at(90)}}},
			corev1.ContainerStatus{Name: "waits", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}})
		p.Status.StartTime = nil
		return p
	}
	var out []*corev1.Pod
	for _, make := range []func() *corev1.Pod{trainPod, fraction, memory, badFractionPod, sink} {
		for _, phase := range []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown} {
			p := make()
			p.Status.Phase = phase
			out = append(out, p)
		}
	}
	return out
}

// Every pod maps from the cache exactly as it maps whole (every field of
// the sync batch: the pod, its workload and project, the problems), with
// its node, namespace and ReplicaSet as their informers keep them.
func TestCachedPodMapsAsThePod(t *testing.T) {
	for _, c := range []Conventions{RunaiConventions(), {WorkloadIDLabel: "example.com/workload", ProjectLabel: "team", TaskLabel: "role",
		NodePoolLabel: "pool", GPUFractionAnnotation: "frac", GPUDevicesAnnotation: "devs", GPUMemoryAnnotation: "gmem", GPUResource: "amd.com/gpu"}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "dgx-01", Labels: map[string]string{"runai/node-pool": "a100", "pool": "mi300", "zone": "a"}},
			Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"nvcr.io/nvidia/pytorch:24.01"}, SizeBytes: 1 << 34}}}}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "runai-team-a", Labels: map[string]string{"runai/queue": "team-a", "team": "ml", "env": "prod"}}}
		rs := &appsv1.ReplicaSet{ObjectMeta: *trainRS.DeepCopy()}
		rs.OwnerReferences = append([]metav1.OwnerReference{{Kind: "ConfigMap", Name: "x", UID: "99999999-0000-4000-8000-000000000002"}}, rs.OwnerReferences...)
		rs.Annotations = map[string]string{"deployment.kubernetes.io/revision": "3"}
		slim := func(obj any) any {
			s, err := c.slimObject(obj)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		sNode, sNS, sRS := slim(node).(*corev1.Node), slim(ns).(*corev1.Namespace), slim(rs).(*appsv1.ReplicaSet)
		relateds := []struct{ whole, cached Related }{
			{Related{ClusterID: cluster}, Related{ClusterID: cluster}},
			{Related{ClusterID: cluster, Node: node, Namespace: ns, ReplicaSet: &rs.ObjectMeta, DeletedAt: new(t0.Add(99e9))},
				Related{ClusterID: cluster, Node: sNode, Namespace: sNS, ReplicaSet: &sRS.ObjectMeta, DeletedAt: new(t0.Add(99e9))}},
		}
		for i, p := range everyPod() {
			for _, p := range []*corev1.Pod{p, noisy(p.DeepCopy())} {
				obj, err := c.cachePod(p.DeepCopy())
				if err != nil {
					t.Fatal(err)
				}
				again, err := c.cachePod(obj)
				if err != nil || again != obj {
					t.Fatalf("pod %d: the transform of a cached pod answered %v, %v: want it unchanged", i, again, err)
				}
				cp := obj.(*cachedPod)
				kept, err := cp.pod(c)
				if err != nil {
					t.Fatal(err)
				}
				for j, r := range relateds {
					whole, cached := c.Map(p, r.whole), c.Map(kept, r.cached)
					if w, g := mustJSON(whole), mustJSON(cached); w != g {
						t.Errorf("pod %d (%s, %s) with related %d maps from the cache as\n%s\nwant\n%s", i, p.Name, p.Status.Phase, j, g, w)
					}
				}
				if cp.nodeName.Value() != p.Spec.NodeName || cp.name != p.Name || cp.namespace.Value() != p.Namespace || cp.resourceVersion != p.ResourceVersion {
					t.Errorf("pod %d cached as %s/%s version %s on node %q", i, cp.namespace.Value(), cp.name, cp.resourceVersion, cp.nodeName.Value())
				}
				if key, err := cache.MetaNamespaceKeyFunc(cp); err != nil || key != p.Namespace+"/"+p.Name {
					t.Errorf("pod %d: cache key %q, %v", i, key, err)
				}
				if o := metav1.GetControllerOf(p); o == nil && cp.controller != "" || o != nil && cp.controller != o.UID {
					t.Errorf("pod %d: controller %q, want %v", i, cp.controller, o)
				}
			}
		}
	}
}

// What the transforms drop: a pod with 64 KiB annotations, environment
// and arguments, and managed fields keeps none of them, nor any other
// field the mapping does not read; a node, a namespace and a ReplicaSet
// keep only the label or owner the mapping reads.
func TestTransformsKeepOnlyWhatTheMappingReads(t *testing.T) {
	c := RunaiConventions()
	p := noisy(everyPod()[len(everyPod())-1])
	whole, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	obj, err := c.cachePod(p)
	if err != nil {
		t.Fatal(err)
	}
	cp := obj.(*cachedPod)
	if bytes.Contains(cp.raw, []byte("training.kubeflow.org/replica-type")) || bytes.Contains(cp.raw, []byte("gpu-memory")) {
		t.Errorf("the cached pod holds the conventions' names: %q", cp.raw)
	}
	if len(cp.raw) > 2048 || len(whole) < 3*64<<10 {
		t.Errorf("the cached pod is %d bytes, the whole pod %d: want at most 2 KiB kept of over 192 KiB", len(cp.raw), len(whole))
	}
	kept, err := cp.pod(c)
	if err != nil {
		t.Fatal(err)
	}
	ctl := metav1.GetControllerOf(p)
	s, st := p.Spec, p.Status
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion, CreationTimestamp: p.CreationTimestamp,
			DeletionTimestamp: p.DeletionTimestamp,
			Labels:            map[string]string{"training.kubeflow.org/replica-type": "worker", "runai/node-pool": "a100, h100"},
			Annotations:       map[string]string{"gpu-memory": ""},
			OwnerReferences:   []metav1.OwnerReference{{Kind: ctl.Kind, Name: ctl.Name, UID: ctl.UID, Controller: ctl.Controller}}},
		Spec: corev1.PodSpec{NodeName: s.NodeName, PriorityClassName: s.PriorityClassName, Tolerations: s.Tolerations, Overhead: s.Overhead,
			InitContainers: []corev1.Container{{Resources: s.InitContainers[0].Resources}, {Resources: s.InitContainers[1].Resources}},
			Containers: []corev1.Container{{Name: "main", Image: s.Containers[0].Image, Resources: s.Containers[0].Resources},
				{Name: "sidecar", Image: s.Containers[1].Image, Resources: s.Containers[1].Resources}},
			Affinity: &corev1.Affinity{NodeAffinity: s.Affinity.NodeAffinity}},
		Status: corev1.PodStatus{Phase: st.Phase, PodIP: st.PodIP, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(40)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(30)}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(4)}}},
				{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(5)}}},
				{Name: "done", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(6), FinishedAt: at(90)}}},
				{Name: "waits"}}},
	}
	// As the apiserver's wire has it (local times, whole seconds).
	b, err := want.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want = &corev1.Pod{}
	if err := want.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(kept), mustJSON(want); g != w {
		t.Errorf("the cache keeps\n%s\nwant\n%s", g, w)
	}

	for _, tc := range []struct{ obj, want any }{
		{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"runai/node-pool": "a100", "zone": "a"},
			Annotations: map[string]string{"big": "x"}, ManagedFields: p.ManagedFields}, Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24"},
			Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"a"}}}}},
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"runai/node-pool": "a100"}}}},
		{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"zone": "a"}}},
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}},
		{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", UID: "u2", ResourceVersion: "8", Labels: map[string]string{"runai/queue": "q", "kubernetes.io/metadata.name": "ns"},
			ManagedFields: p.ManagedFields}, Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", UID: "u2", ResourceVersion: "8", Labels: map[string]string{"runai/queue": "q"}}}},
		{&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "u3", ResourceVersion: "9", Labels: map[string]string{"app": "a"},
			ManagedFields: p.ManagedFields, OwnerReferences: []metav1.OwnerReference{{Kind: "ConfigMap", Name: "c", UID: "u4"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "u5", Controller: isController(), BlockOwnerDeletion: isController()}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(3))}},
			&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "u3", ResourceVersion: "9",
				OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "d", UID: "u5", Controller: isController()}}}}},
		{&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "ns"}}, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "ns"}}},
		{"not an object", "not an object"},
	} {
		s, err := c.slimObject(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := mustJSON(s), mustJSON(tc.want); g != w {
			t.Errorf("%T kept as\n%s\nwant\n%s", tc.obj, g, w)
		}
		if again, _ := c.slimObject(s); mustJSON(again) != mustJSON(tc.want) {
			t.Errorf("%T: the transform is not idempotent: %s", tc.obj, mustJSON(again))
		}
	}
}
