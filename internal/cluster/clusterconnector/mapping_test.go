package clusterconnector

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpugraph/internal/cluster/clusterbatch"
)

const cluster = "cccccccc-0000-4000-8000-00000000000a"

var (
	t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at = func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	tp = func(s int) *metav1.Time { t := at(s); return &t }
)

func isController() *bool { b := true; return &b }

// trainPod is a Deployment's pod (through ReplicaSet rs-1), bound and
// running, asking for whole GPUs, CPU, memory, an FPGA and a pool.
func trainPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train-7d9f-x2", Namespace: "runai-team-a", UID: "bbbbbbbb-0000-4000-8000-000000000001",
			CreationTimestamp: at(0), Labels: map[string]string{"training.kubeflow.org/replica-type": "worker", "runai/node-pool": "a100, h100"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "train-7d9f", UID: "dddddddd-0000-4000-8000-000000000001", Controller: isController()}}},
		Spec: corev1.PodSpec{
			NodeName: "dgx-01", PriorityClassName: "train",
			InitContainers: []corev1.Container{{Name: "fetch", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}}}},
			Containers: []corev1.Container{
				{Name: "main", Image: "nvcr.io/nvidia/pytorch:24.01", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("16Gi"),
						"nvidia.com/gpu": resource.MustParse("2"), "example.com/fpga": resource.MustParse("1")},
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("32Gi"),
						"nvidia.com/gpu": resource.MustParse("2"), "example.com/fpga": resource.MustParse("1")}}},
				{Name: "sidecar", Image: "envoy:1", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
			},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: func() *int64 { n := int64(300); return &n }()}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "nvidia.com/gpu.product", Operator: corev1.NodeSelectorOpIn, Values: []string{"A100"}}}}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: corev1.NodeSelectorTerm{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}}}}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.9", StartTime: tp(2),
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(4)}}},
				{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(5)}}}}},
	}
}

// evalPod is a Job's pod, completed, asking for a quarter of each of two
// GPUs.
func evalPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "eval-abc", Namespace: "runai-team-b", UID: "bbbbbbbb-0000-4000-8000-000000000002", CreationTimestamp: at(0),
			Annotations:     map[string]string{"gpu-fraction": "0.25", "gpu-fraction-num-devices": "2"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "eval", UID: "eeeeeeee-0000-4000-8000-000000000001", Controller: isController()}}},
		Spec: corev1.PodSpec{NodeName: "dgx-02", NodeSelector: map[string]string{"runai/node-pool": "h100"},
			Containers: []corev1.Container{{Name: "main", Image: "eval:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(3), FinishedAt: at(60)}}}}},
	}
}

// notebookPod is a bare pod, pending and unbound, whose labels name its
// workload, revision and project, asking for GPU memory.
func notebookPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "notebook", Namespace: "default", UID: "bbbbbbbb-0000-4000-8000-000000000003", CreationTimestamp: at(0),
			Labels: map[string]string{"run.ai/workload-id": "AAAAAAAA-0000-4000-8000-000000000009", "run.ai/revision-id": "ffffffff-0000-4000-8000-000000000001",
				"runai/queue": "team-c"},
			Annotations: map[string]string{"gpu-memory": "4000"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "jupyter", Image: "jupyter:1"}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "runai/node-pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"l4", "t4"}}}}}}}}},
	}
}

// badFractionPod is trainPod pending, without whole GPUs, its GPU
// fraction annotation unreadable.
func badFractionPod() *corev1.Pod {
	p := trainPod()
	delete(p.Spec.Containers[0].Resources.Requests, "nvidia.com/gpu")
	delete(p.Spec.Containers[0].Resources.Limits, "nvidia.com/gpu")
	p.Annotations = map[string]string{"gpu-fraction": "half"}
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)}}}
	return p
}

var trainRS = &metav1.ObjectMeta{Name: "train-7d9f", UID: "dddddddd-0000-4000-8000-000000000001",
	OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "train", UID: "aaaaaaaa-0000-4000-8000-000000000001", Controller: isController()}}}

var dgx01 = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "dgx-01", Labels: map[string]string{"runai/node-pool": "a100"}}}

func TestMap(t *testing.T) {
	c := RunaiConventions()
	cases := []struct {
		name    string
		pod     func() *corev1.Pod
		related Related
		want    string // the pod's JSON
		wantW   string // its workload's
		wantP   string // its project's
		problem string
	}{{
		name:    "a Deployment's running pod",
		pod:     trainPod,
		related: Related{ClusterID: cluster, Node: dgx01, ReplicaSet: trainRS},
		want: `{"name":"train-7d9f-x2","id":"bbbbbbbb-0000-4000-8000-000000000001","workloadId":"aaaaaaaa-0000-4000-8000-000000000001",
			"revisionId":"dddddddd-0000-4000-8000-000000000001","projectId":"runai-team-a","task":"worker","clusterId":"` + cluster + `",
			"nodeName":"dgx-01","createdAt":"2026-03-01T10:00:00Z","completedAt":null,
			"containers":[{"name":"main","image":"nvcr.io/nvidia/pytorch:24.01","startedAt":"2026-03-01T10:00:05Z"},
				{"name":"sidecar","image":"envoy:1","startedAt":"2026-03-01T10:00:04Z"}],
			"currentNodePool":"a100","requestedNodePools":["a100","h100"],
			"requestedResources":{"gpu":{"limit":2,"request":2},"gpuMemory":null,"cpu":{"limit":null,"request":8},
				"cpuMemory":{"limit":"33Gi","request":"16896Mi"},"extendedResources":[{"resource":"example.com/fpga","quantity":"1","exclude":null}]},
			"allocatedResources":{"gpu":2,"gpuMemory":null,"cpu":8,"cpuMemory":"16896Mi","extendedResources":[{"resource":"example.com/fpga","quantity":"1","exclude":null}]},
			"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","value":"","effect":"NoSchedule","tolerationSeconds":null},
				{"key":"node.kubernetes.io/not-ready","operator":"Exists","value":"","effect":"NoExecute","tolerationSeconds":300}],
			"k8sPhase":"Running","k8sPhaseUpdatedAt":"2026-03-01T10:00:04Z","ip":"10.0.0.9",
			"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":["A100"]}]}]},
				"preferred":{"nodeSelectorTerms":[{"weight":10,"preference":{"matchExpressions":[{"key":"zone","operator":"Exists","values":[]}]}}]}},
			"priorityClassName":"train","deletedAt":null}`,
		wantW: `{"id":"aaaaaaaa-0000-4000-8000-000000000001","name":"train","projectId":"runai-team-a"}`,
		wantP: `{"id":"runai-team-a","name":"runai-team-a"}`,
	}, {
		name: "a Job's pod, completed, deleted; project from the namespace's queue label; fractional GPU on two devices",
		pod:  evalPod,
		related: Related{ClusterID: cluster, Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "dgx-02"}},
			Namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "runai-team-b", Labels: map[string]string{"runai/queue": "team-b"}}},
			DeletedAt: func() *time.Time { d := t0.Add(90 * time.Second); return &d }()},
		want: `{"name":"eval-abc","id":"bbbbbbbb-0000-4000-8000-000000000002","workloadId":"eeeeeeee-0000-4000-8000-000000000001","revisionId":null,
			"projectId":"team-b","task":null,"clusterId":"` + cluster + `","nodeName":"dgx-02","createdAt":"2026-03-01T10:00:00Z",
			"completedAt":"2026-03-01T10:01:00Z","containers":[{"name":"main","image":"eval:1","startedAt":"2026-03-01T10:00:03Z"}],
			"currentNodePool":"default","requestedNodePools":["h100"],
			"requestedResources":{"gpuRequestType":"portion","gpu":{"limit":null,"request":0.5},"gpuMemory":null,"cpu":null,"cpuMemory":null,"extendedResources":null},
			"allocatedResources":null,"tolerations":[],"k8sPhase":"Succeeded","k8sPhaseUpdatedAt":"2026-03-01T10:01:00Z","ip":null,
			"nodeAffinity":null,"priorityClassName":"","deletedAt":"2026-03-01T10:01:30Z"}`,
		wantW: `{"id":"eeeeeeee-0000-4000-8000-000000000001","name":"eval","projectId":"team-b"}`,
		wantP: `{"id":"team-b","name":"team-b"}`,
	}, {
		name:    "a bare pod, pending and unbound, its own workload; labels name workload, revision and project; GPU memory",
		pod:     notebookPod,
		related: Related{ClusterID: cluster},
		want: `{"name":"notebook","id":"bbbbbbbb-0000-4000-8000-000000000003","workloadId":"aaaaaaaa-0000-4000-8000-000000000009",
			"revisionId":"ffffffff-0000-4000-8000-000000000001","projectId":"team-c","task":null,"clusterId":"` + cluster + `","nodeName":null,
			"createdAt":"2026-03-01T10:00:00Z","completedAt":null,"containers":[{"name":"jupyter","image":"jupyter:1","startedAt":null}],
			"currentNodePool":null,"requestedNodePools":["l4","t4"],
			"requestedResources":{"gpuRequestType":"memory","gpu":null,"gpuMemory":{"limit":null,"request":"4000Mi"},"cpu":null,"cpuMemory":null,"extendedResources":null},
			"allocatedResources":null,"tolerations":[],"k8sPhase":"Pending","k8sPhaseUpdatedAt":"2026-03-01T10:00:00Z","ip":null,
			"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"runai/node-pool","operator":"In","values":["l4","t4"]}]}]},"preferred":null},
			"priorityClassName":"","deletedAt":null}`,
		wantW: `{"id":"aaaaaaaa-0000-4000-8000-000000000009","name":"notebook","projectId":"team-c"}`,
		wantP: `{"id":"team-c","name":"team-c"}`,
	}, {
		name:    "a bad annotation is a problem, the pod still reported; a ReplicaSet not known is the workload",
		pod:     badFractionPod,
		related: Related{ClusterID: cluster},
		problem: `annotation gpu-fraction/gpu-fraction-num-devices: "half" is no GPU fraction: a decimal above 0 and at most 1, 0.5 for half a GPU`,
		wantW:   `{"id":"dddddddd-0000-4000-8000-000000000001","name":"train-7d9f","projectId":"runai-team-a"}`,
		wantP:   `{"id":"runai-team-a","name":"runai-team-a"}`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := c.Map(tc.pod(), tc.related)
			if tc.want != "" {
				sameJSON(t, "pod", m.Pod, tc.want)
			}
			if err := clusterbatch.CheckPod("pod", &m.Pod); err != nil {
				t.Errorf("the server would refuse it: %v", err)
			}
			sameJSON(t, "workload", m.Workload, tc.wantW)
			sameJSON(t, "project", m.Project, tc.wantP)
			if tc.problem == "" && len(m.Problems) > 0 || tc.problem != "" && (len(m.Problems) != 1 || m.Problems[0] != tc.problem) {
				t.Errorf("problems %q, want %q", m.Problems, tc.problem)
			}
			if tc.problem != "" {
				if m.Pod.RequestedResources.GPU != nil || m.Pod.K8sPhaseUpdatedAt != t0.Add(time.Second) || m.Pod.CurrentNodePool != nil {
					t.Errorf("pod %+v", m.Pod)
				}
			}
		})
	}
}

// Another cluster's conventions: every name is a flag.
func TestMapOtherConventions(t *testing.T) {
	c := Conventions{WorkloadIDLabel: "example.com/workload", ProjectLabel: "team", TaskLabel: "role", NodePoolLabel: "pool",
		GPUFractionAnnotation: "frac", GPUDevicesAnnotation: "devs", GPUMemoryAnnotation: "gmem", GPUResource: "amd.com/gpu"}
	p := trainPod()
	p.Labels = map[string]string{"example.com/workload": "aaaaaaaa-0000-4000-8000-0000000000ff", "team": "ml", "role": "chief", "runai/node-pool": "ignored"}
	p.Spec.Containers[0].Resources.Requests["amd.com/gpu"] = resource.MustParse("1")
	m := c.Map(p, Related{ClusterID: cluster, Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pool": "mi300"}}}})
	if m.Pod.WorkloadID != "aaaaaaaa-0000-4000-8000-0000000000ff" || *m.Pod.ProjectID != "ml" || *m.Pod.Task != "chief" || *m.Pod.CurrentNodePool != "mi300" ||
		len(m.Pod.RequestedNodePools) != 0 || *m.Pod.RequestedResources.GPU.Request != 1 {
		t.Errorf("%+v", m.Pod)
	}
	// nvidia.com/gpu is then an extended resource like any other.
	if ex := m.Pod.RequestedResources.ExtendedResources; len(ex) != 2 || *ex[0].Resource != "example.com/fpga" || *ex[1].Resource != "nvidia.com/gpu" || *ex[1].Quantity != "2" {
		t.Errorf("extended %s", mustJSON(ex))
	}
}

func sameJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", what, err)
	}
	g, wb := mustJSON(got), mustJSON(w)
	var gn any
	_ = json.Unmarshal([]byte(g), &gn)
	if mustJSON(gn) != wb {
		t.Errorf("%s:\n got %s\nwant %s", what, mustJSON(gn), wb)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
