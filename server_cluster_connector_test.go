package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"gpugraph/internal/cluster/kubetest"
	"gpugraph/internal/httpapi/rest/openapitest"
	"gpugraph/internal/lib/lockedbuf"
	"gpugraph/internal/store/storetest"
)

// The "done when": a real kube-apiserver on a real etcd, the
// connector binary run as a process, gpugraph on each engine. Pods
// created, bound, running, completed and deleted in Kubernetes show in
// the Pods API with every Run:ai field, through every pods path and
// GraphQL, each answer valid against Run:ai's document; a connector
// restart and an expired watch lose and duplicate nothing; a cluster's
// credential cannot write another cluster's pods.
func TestClusterConnectorEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and builds the connector")
	}
	kc := kubetest.Start(t)
	bin := filepath.Join(t.TempDir(), "cluster-agent")
	if out, err := exec.Command(goTool(), "build", "-o", bin, "./cmd/cluster-agent").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cluster-agent: %v\n%s", err, out)
	}
	kube, err := kubernetes.NewForConfig(kc.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Shared by both engines' clusters: the priority class and the node.
	if _, err := kube.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "dgx-01", Labels: map[string]string{"runai/node-pool": "a100"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			e := &e2e{t: t, kc: kc, kube: kube, bin: bin, ns: "team-e2e-" + string(d),
				cluster: fmt.Sprintf("cccccccc-0000-4000-8000-0000000000%02d", i+1), other: fmt.Sprintf("cccccccc-0000-4000-8000-0000000001%02d", i+1)}
			e.run(storetest.URL(t, d))
		})
	}
}

type e2e struct {
	t              *testing.T
	kc             *kubetest.Cluster
	kube           *kubernetes.Clientset
	bin, ns        string
	cluster, other string
	addr, dbURL    string
	proxy          *cutProxy
	agent          *exec.Cmd
	agentLog       *lockedbuf.Buffer
	credFile       string
	kubeconfig     string
}

const e2eReader = "acme-workloads" // workloads.read of org-acme, tenant 1001

func (e *e2e) run(dbURL string) {
	t, ctx := e.t, context.Background()
	e.dbURL = dbURL
	addr, cancel, done := startServingOn(t, dbURL)
	defer func() { cancel(); <-done }()
	e.addr = addr

	// The operator enrolls the cluster from the command line.
	var out, errOut bytes.Buffer
	if err := admin(ctx, []string{"clusters", "enroll", "--cluster-id", e.cluster, "--tenant-id", "1001", "--database-url", dbURL}, &out, &errOut); err != nil {
		t.Fatalf("clusters enroll: %v %s", err, errOut.String())
	}
	cred := strings.TrimSpace(out.String())
	if !strings.HasPrefix(cred, "gpgcl_") {
		t.Fatalf("clusters enroll printed %q", out.String())
	}
	e.credFile = filepath.Join(t.TempDir(), "credential")
	if err := os.WriteFile(e.credFile, []byte(cred+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The connector reaches the apiserver through a proxy the test can cut.
	e.proxy = newCutProxy(t, strings.TrimPrefix(e.kc.Host, "https://"))
	cfg := rest.CopyConfig(e.kc.Config)
	cfg.Host = "https://" + e.proxy.addr
	e.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(e.kubeconfig, cfg); err != nil {
		t.Fatal(err)
	}

	// The namespace is project team-a by Run:ai's queue label; a ReplicaSet
	// of a Deployment (no controller-manager runs: the objects alone).
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns, Labels: map[string]string{"runai/queue": "team-a"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deployUID := types.UID("aaaaaaaa-0000-4000-8000-0000000000" + e.cluster[len(e.cluster)-2:])
	yes := true
	rs, err := e.kube.AppsV1().ReplicaSets(e.ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "train-7d9f", OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "train", UID: deployUID, Controller: &yes}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "x"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.startAgent()
	defer e.stopAgent()

	// A: the Deployment's pod, bound at creation, then Running, then Succeeded.
	a := e.create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train-7d9f-a", Labels: map[string]string{"app": "train", "training.kubeflow.org/replica-type": "worker", "runai/node-pool": "a100"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: "dgx-01", PriorityClassName: "train", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "nvcr.io/nvidia/pytorch:24.01", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("16Gi"), "nvidia.com/gpu": resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), "nvidia.com/gpu": resource.MustParse("1")}}}},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "nvidia.com/gpu.product", Operator: corev1.NodeSelectorOpIn, Values: []string{"A100"}}}}}}}}},
	})
	// B: a bare pod, pending and unbound, asking for half a GPU.
	b := e.create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "notebook", Annotations: map[string]string{"gpu-fraction": "0.5"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "jupyter", Image: "jupyter:1"}}},
	})
	created := a.CreationTimestamp.UTC().Format("2006-01-02T15:04:05.000Z")
	pa := e.waitPod(string(a.UID), false, func(p map[string]any) bool { return p["k8sPhase"] == "Pending" })
	e.fields("A pending", pa, map[string]any{
		"name": "train-7d9f-a", "id": string(a.UID), "workloadId": string(deployUID), "revisionId": string(rs.UID),
		"projectId": "team-a", "projectName": "team-a", "workloadName": "train", "task": "worker", "clusterId": e.cluster,
		"nodeName": "dgx-01", "createdAt": created, "completedAt": nil, "currentNodePool": "a100", "requestedNodePools": []any{"a100"},
		"requestedResources": map[string]any{"gpu": map[string]any{"limit": 1.0, "request": 1.0}, "gpuMemory": nil,
			"cpu": map[string]any{"limit": 4.0, "request": 2.0}, "cpuMemory": map[string]any{"limit": "16Gi", "request": "16Gi"}, "extendedResources": nil},
		"allocatedResources": map[string]any{"gpu": 1.0, "gpuMemory": nil, "cpu": 2.0, "cpuMemory": "16Gi", "extendedResources": nil},
		// The apiserver's DefaultTolerationSeconds admission adds the two 300 s ones.
		"tolerations": []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "value": "", "effect": "NoSchedule", "tolerationSeconds": nil},
			map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "value": "", "effect": "NoExecute", "tolerationSeconds": 300},
			map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "value": "", "effect": "NoExecute", "tolerationSeconds": 300}},
		"k8sPhaseUpdatedAt": created, "ip": nil, "priorityClassName": "train", "deletedAt": nil, "tenantId": 1001.0,
		"nodeAffinity": map[string]any{"required": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{
			map[string]any{"key": "nvidia.com/gpu.product", "operator": "In", "values": []any{"A100"}}}}}}, "preferred": nil},
		"containers": []any{map[string]any{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.01", "startedAt": nil}},
	})
	pb := e.waitPod(string(b.UID), false, func(p map[string]any) bool { return true })
	e.fields("B pending", pb, map[string]any{"workloadId": string(b.UID), "workloadName": "notebook", "revisionId": nil, "nodeName": nil,
		"currentNodePool": nil, "requestedNodePools": []any{}, "allocatedResources": nil, "k8sPhase": "Pending", "task": nil,
		"requestedResources": map[string]any{"gpuRequestType": "portion", "gpu": map[string]any{"limit": nil, "request": 0.5},
			"gpuMemory": nil, "cpu": nil, "cpuMemory": nil, "extendedResources": nil}})

	// A runs: its status written as a kubelet would.
	started := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	a.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.9", StartTime: &started,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Image: "nvcr.io/nvidia/pytorch:24.01", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}}
	a = e.status(a)
	startedAt := started.UTC().Format("2006-01-02T15:04:05.000Z")
	pa = e.waitPod(string(a.UID), false, func(p map[string]any) bool { return p["k8sPhase"] == "Running" })
	e.fields("A running", pa, map[string]any{"ip": "10.0.0.9", "k8sPhaseUpdatedAt": startedAt,
		"containers": []any{map[string]any{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.01", "startedAt": startedAt}}})

	// A completes.
	finished := metav1.NewTime(started.Add(30 * time.Second))
	a.Status.Phase = corev1.PodSucceeded
	a.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: started, FinishedAt: finished, Reason: "Completed"}}
	a = e.status(a)
	finishedAt := finished.UTC().Format("2006-01-02T15:04:05.000Z")
	pa = e.waitPod(string(a.UID), false, func(p map[string]any) bool { return p["k8sPhase"] == "Succeeded" })
	e.fields("A succeeded", pa, map[string]any{"completedAt": finishedAt, "k8sPhaseUpdatedAt": finishedAt, "allocatedResources": nil})

	// B is deleted: readable with deleted=true, its deletedAt set.
	e.delete(b)
	pb = e.waitPod(string(b.UID), true, func(p map[string]any) bool { return p["deletedAt"] != nil })

	// Every path answers them, each answer valid against Run:ai's document.
	e.paths(string(deployUID), string(rs.UID), 1, 1)

	// The connector restarts: while it is down, A goes and C comes.
	e.stopAgent()
	e.delete(a)
	c := e.create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "eval"}, Spec: corev1.PodSpec{NodeName: "dgx-01", Containers: []corev1.Container{{Name: "main", Image: "eval:1"}}}})
	e.startAgent()
	e.waitPod(string(a.UID), true, func(p map[string]any) bool { return p["deletedAt"] != nil && p["k8sPhase"] == "Succeeded" })
	e.waitPod(string(c.UID), false, func(p map[string]any) bool { return p["nodeName"] == "dgx-01" })
	e.counts(1, 2)

	// The watch expires: cut off, the connector misses C's deletion and D's
	// creation; etcd is compacted and the apiserver restarted, so its watch
	// resumes too old (410) and the informer lists again.
	e.proxy.cut(true)
	e.delete(c)
	d := e.create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "serve"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "serve:1"}}}})
	if err := e.kc.CompactEtcd(); err != nil {
		t.Fatal(err)
	}
	if err := e.kc.RestartAPIServer(); err != nil {
		t.Fatal(err)
	}
	e.proxy.cut(false)
	e.waitPod(string(c.UID), true, func(p map[string]any) bool { return p["deletedAt"] != nil })
	e.waitPod(string(d.UID), false, func(p map[string]any) bool { return true })
	e.counts(1, 3)
	if !strings.Contains(e.agentLog.String(), "lists again") {
		t.Errorf("the connector's log tells of no relist:\n%s", e.agentLog.String())
	}

	// Another cluster's credential writes none of this cluster's pods.
	out.Reset()
	if err := admin(ctx, []string{"clusters", "enroll", "--cluster-id", e.other, "--tenant-id", "1001", "--database-url", dbURL}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	otherCred := strings.TrimSpace(out.String())
	pod := e.pod(string(d.UID), false)
	for _, k := range []string{"workloadName", "projectName", "tenantId", "updatedAt"} {
		delete(pod, k)
	}
	pod["k8sPhase"] = "Failed"
	batch := func(cluster string) []byte {
		p := map[string]any{}
		for k, v := range pod {
			p[k] = v
		}
		p["clusterId"] = cluster
		b, _ := json.Marshal(map[string]any{"sequence": time.Now().UnixMilli(), "kind": "delta", "pods": []any{p},
			"workloads": []any{map[string]any{"id": pod["workloadId"], "name": "serve", "projectId": "team-a"}},
			"projects":  []any{map[string]any{"id": "team-a", "name": "team-a"}}})
		return b
	}
	if st, body := requestAs(t, "POST", e.addr, otherCred, "/api/v1/clusters/"+e.cluster+"/sync", batch(e.cluster)); st != 403 || !strings.Contains(body, "cannot write cluster") {
		t.Errorf("the other cluster writing this one's path: %d %s", st, body)
	}
	if st, body := requestAs(t, "POST", e.addr, otherCred, "/api/v1/clusters/"+e.other+"/sync", batch(e.other)); st != 403 || !strings.Contains(body, "another cluster") {
		t.Errorf("the other cluster writing this one's pod: %d %s", st, body)
	}
	if p := e.pod(string(d.UID), false); p["k8sPhase"] != "Pending" || p["clusterId"] != e.cluster {
		t.Errorf("the pod after the other cluster's tries: %v", p)
	}
}

func (e *e2e) must(p *corev1.Pod, err error) *corev1.Pod {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *e2e) create(p *corev1.Pod) *corev1.Pod {
	e.t.Helper()
	return e.must(e.kube.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{}))
}

func (e *e2e) status(p *corev1.Pod) *corev1.Pod {
	e.t.Helper()
	return e.must(e.kube.CoreV1().Pods(e.ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}))
}

func (e *e2e) delete(p *corev1.Pod) {
	e.t.Helper()
	zero := int64(0)
	if err := e.kube.CoreV1().Pods(e.ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *e2e) startAgent() {
	e.t.Helper()
	e.agentLog = &lockedbuf.Buffer{}
	e.agent = exec.Command(e.bin, "--server", "http://"+e.addr, "--cluster-id", e.cluster, "--credential-file", e.credFile,
		"--kubeconfig", e.kubeconfig, "--namespace", e.ns, "--flush-after", "20ms", "--batch-pods", "2", "--log-level", "debug")
	e.agent.Stdout, e.agent.Stderr = e.agentLog, e.agentLog
	if err := e.agent.Start(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *e2e) stopAgent() {
	if e.agent == nil {
		return
	}
	_ = e.agent.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = e.agent.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = e.agent.Process.Kill()
		<-done
	}
	if e.t.Failed() {
		e.t.Logf("the connector's log:\n%s", e.agentLog.String())
	}
	e.agent = nil
}

// list is the cluster's pods as Run:ai's list answers them, checked against
// the document.
func (e *e2e) list(deleted bool) map[string]map[string]any {
	e.t.Helper()
	path := "/api/v1/workloads/pods?verbosity=full&limit=500&filterBy=" + url.QueryEscape("clusterId=="+e.cluster)
	if deleted {
		path += "&deleted=true"
	}
	st, body := getAs(e.t, e.addr, e2eReader, path)
	if st != 200 {
		e.t.Fatalf("GET %s: %d %s", path, st, body)
	}
	openapitest.Validate(e.t, "GET /api/v1/workloads/pods 200", []byte(body))
	var page struct{ Pods []map[string]any }
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, p := range page.Pods {
		id := p["id"].(string)
		if out[id] != nil {
			e.t.Errorf("pod %s listed twice", id)
		}
		out[id] = p
	}
	return out
}

func (e *e2e) pod(id string, deleted bool) map[string]any { return e.list(deleted)[id] }

// waitPod waits until pod id is listed (with deleted) and ok of it.
func (e *e2e) waitPod(id string, deleted bool, ok func(map[string]any) bool) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p := e.pod(id, deleted)
		if p != nil && ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("pod %s (deleted=%v) not as wanted within 60 s: %v\nthe connector's log:\n%s", id, deleted, p, e.agentLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fields fails unless p's fields are want's, exactly.
func (e *e2e) fields(what string, p, want map[string]any) {
	e.t.Helper()
	for k, v := range want {
		g, _ := json.Marshal(p[k])
		w, _ := json.Marshal(v)
		if !bytes.Equal(g, w) {
			e.t.Errorf("%s: %s = %s, want %s", what, k, g, w)
		}
	}
}

// counts checks the live and deleted counts on every path.
func (e *e2e) counts(live, deleted int) {
	e.t.Helper()
	for _, d := range []bool{false, true} {
		want := live
		q := "?filterBy=" + url.QueryEscape("clusterId=="+e.cluster)
		if d {
			want, q = deleted, q+"&deleted=true"
		}
		st, body := getAs(e.t, e.addr, e2eReader, "/api/v1/workloads/pods/count"+q)
		openapitest.Validate(e.t, "GET /api/v1/workloads/pods/count 200", []byte(body))
		if st != 200 || strings.TrimSpace(body) != fmt.Sprintf(`{"count":%d}`, want) {
			e.t.Errorf("count (deleted=%v): %d %s, want %d", d, st, body, want)
		}
		if n := len(e.list(d)); n != want {
			e.t.Errorf("%d pods listed (deleted=%v), want %d", n, d, want)
		}
	}
}

// paths checks the workload's, the revision's and GraphQL's pods.
func (e *e2e) paths(workload, revision string, live, deleted int) {
	e.t.Helper()
	e.counts(live, deleted)
	st, body := getAs(e.t, e.addr, e2eReader, "/api/v1/workloads/"+workload+"/pods")
	openapitest.Validate(e.t, "GET /api/v1/workloads/{workloadId}/pods 200", []byte(body))
	if st != 200 || strings.Count(body, `"id"`) != 1 || !strings.Contains(body, `"k8sPhase":"Succeeded"`) {
		e.t.Errorf("workload pods: %d %s", st, body)
	}
	st, body = getAs(e.t, e.addr, e2eReader, "/api/v1/workloads/inferences/revisions/"+revision+"/pods")
	openapitest.Validate(e.t, "GET /api/v1/workloads/inferences/revisions/{revisionId}/pods 200", []byte(body))
	if st != 200 || strings.Count(body, `"id"`) != 1 {
		e.t.Errorf("revision pods: %d %s", st, body)
	}
	q, _ := json.Marshal(map[string]any{"query": `{ pods(filterBy: ["clusterId==` + e.cluster + `"]) { total pods { id k8sPhase clusterId nodeName currentNodePool workloadId } } }`})
	st, body = requestAs(e.t, "POST", e.addr, e2eReader, "/graphql", q)
	if st != 200 || strings.Contains(body, `"errors"`) || !strings.Contains(body, `"total":1`) ||
		!strings.Contains(body, `"k8sPhase":"Succeeded","clusterId":"`+e.cluster+`","nodeName":"dgx-01","currentNodePool":"a100","workloadId":"`+workload+`"`) {
		e.t.Errorf("GraphQL pods: %d %s", st, body)
	}
}

// cutProxy forwards TCP to target; cut(true) closes every connection and
// refuses new ones until cut(false).
type cutProxy struct {
	addr, target string
	mu           sync.Mutex
	off          bool
	conns        map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{addr: ln.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.off {
		p.mu.Unlock()
		c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

func (p *cutProxy) cut(off bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.off = off
	if off {
		for c := range p.conns {
			c.Close()
		}
		p.conns = map[net.Conn]bool{}
	}
}
