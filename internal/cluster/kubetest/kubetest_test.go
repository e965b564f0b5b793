package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// eventWithin bounds waiting for the informer to see one change.
const eventWithin = 30 * time.Second

// TestPodLifecycleThroughInformer is the recipe a cluster connector relies
// on, against the real kube-apiserver: a Pod bound by nodeName, its status
// written as a kubelet writes it (Running, then Succeeded), deleted with
// grace period 0; an informer (list, then watch) sees exactly add, update
// (Running), update (Succeeded), update (deletionTimestamp set), delete, in
// that order. Afterwards neither process is left.
func TestPodLifecycleThroughInformer(t *testing.T) {
	var pids []int
	t.Run("cluster", func(t *testing.T) {
		c := Start(t)
		pids = []int{c.etcd.cmd.Process.Pid, c.apiserver.cmd.Process.Pid}
		podLifecycle(t, c)
	})
	if t.Skipped() || len(pids) == 0 {
		return
	}
	for _, pid := range pids {
		// The group as well as the leader: kill(-pgid, 0) answers ESRCH
		// once no process of the group is left.
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process group %d still has a process after the test's cleanup (kill: %v)", pid, err)
		}
	}
}

func podLifecycle(t *testing.T, c *Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if c.Config.Insecure || len(c.Config.CAData) == 0 {
		t.Fatalf("Config verifies no server certificate: Insecure %v, %d bytes of CA", c.Config.Insecure, len(c.Config.CAData))
	}
	// The kubeconfig file is what a connector binary is given.
	fromFile, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Host != c.Host || fromFile.BearerToken != c.Token || string(fromFile.CAData) != string(c.Config.CAData) {
		t.Fatalf("kubeconfig gives host %q, token %v, CA %v; want %q, the admin token and the serving CA",
			fromFile.Host, fromFile.BearerToken == c.Token, string(fromFile.CAData) == string(c.Config.CAData), c.Host)
	}
	kube, err := kubernetes.NewForConfig(fromFile)
	if err != nil {
		t.Fatal(err)
	}

	// Authorization is RBAC's: an anonymous caller may not list pods.
	anon := rest.AnonymousClientConfig(c.Config)
	anonKube, err := kubernetes.NewForConfig(anon)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anonKube.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("anonymous list of pods: %v, want 403 Forbidden", err)
	}

	const ns = "team-a"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	seen := make(chan string, 16)
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns))
	pods := factory.Core().V1().Pods().Informer()
	record := func(verb string, obj any) {
		switch p := obj.(type) {
		case *corev1.Pod:
			seen <- describe(verb, p)
		case cache.DeletedFinalStateUnknown:
			seen <- verb + " " + p.Key + " (final state unknown)"
		default:
			seen <- fmt.Sprintf("%s %T", verb, obj)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", obj) },
		UpdateFunc: func(_, obj any) { record("update", obj) },
		DeleteFunc: func(obj any) { record("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	wg.Go(func() { pods.Run(stop) })
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		t.Fatal("the informer's first list did not sync")
	}

	var got []string
	next := func(want string) {
		t.Helper()
		select {
		case e := <-seen:
			got = append(got, e)
			if e != want {
				t.Fatalf("informer saw %q, want %q (all so far: %q)", e, want, got)
			}
		case <-time.After(eventWithin):
			t.Fatalf("informer saw nothing within %s, want %q (all so far: %q)", eventWithin, want, got)
		}
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train-0", Namespace: ns, Labels: map[string]string{"app": "train"}},
		Spec: corev1.PodSpec{
			// Bound at creation: no scheduler runs.
			NodeName:      "dgx-01",
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "nvcr.io/nvidia/pytorch:24.01-py3",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("2")},
					Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
				},
			}},
		},
	}
	created, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The apiserver itself makes a new pod Pending.
	next("add team-a/train-0 node=dgx-01 phase=Pending ip= deleting=false")

	started := metav1.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	created.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		PodIP:     "10.244.1.7",
		StartTime: &started,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", Image: "nvcr.io/nvidia/pytorch:24.01-py3", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		}},
	}
	running, err := kube.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next("update team-a/train-0 node=dgx-01 phase=Running ip=10.244.1.7 deleting=false")

	finished := metav1.NewTime(started.Add(90 * time.Minute))
	running.Status.Phase = corev1.PodSucceeded
	running.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: finished}
	running.Status.ContainerStatuses[0].Ready = false
	running.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: finished,
	}}
	if _, err := kube.CoreV1().Pods(ns).UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	next("update team-a/train-0 node=dgx-01 phase=Succeeded ip=10.244.1.7 deleting=false")

	// A written status reads back as written, completion time included.
	back, err := kube.CoreV1().Pods(ns).Get(ctx, "train-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if term := back.Status.ContainerStatuses[0].State.Terminated; term == nil || !term.FinishedAt.Equal(&finished) || back.UID != created.UID {
		t.Fatalf("read back terminated state %+v, uid %s; want finished at %s, uid %s", term, back.UID, finished, created.UID)
	}

	// Grace period 0: removed at once (a graceful delete of a bound pod
	// would wait for a kubelet that never comes).
	zero := int64(0)
	if err := kube.CoreV1().Pods(ns).Delete(ctx, "train-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// Even at grace period 0 the apiserver first sets deletionTimestamp
	// (an update), then removes the pod.
	next("update team-a/train-0 node=dgx-01 phase=Succeeded ip=10.244.1.7 deleting=true")
	next("delete team-a/train-0 node=dgx-01 phase=Succeeded ip=10.244.1.7 deleting=true")

	if _, err := kube.CoreV1().Pods(ns).Get(ctx, "train-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want 404 Not Found", err)
	}
	select {
	case e := <-seen:
		t.Fatalf("informer saw %q after the delete; all before it: %q", e, got)
	default:
	}
}

func describe(verb string, p *corev1.Pod) string {
	return fmt.Sprintf("%s %s/%s node=%s phase=%s ip=%s deleting=%v", verb, p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP, p.DeletionTimestamp != nil)
}

// TestBuildShFindsDir runs build.sh over binaries placed where Dir says:
// it must find them and print that directory without building. A "go" on
// PATH that fails stands in for the build, so a key computed differently
// fails the test at once instead of building for twenty minutes.
func TestBuildShFindsDir(t *testing.T) {
	root := t.TempDir()
	t.Setenv(DirEnv, root)
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != root || len(filepath.Base(dir)) != 64 {
		t.Fatalf("Dir() = %s, want a 64-digit SHA-256 under %s", dir, root)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "go"), []byte("#!/bin/sh\necho build.sh ran go $* >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := exec.Command("sh", filepath.Join("..", "..", "..", BuildCommand)).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != dir {
		t.Fatalf("build.sh with the binaries in place: %v, printed %q; want %s and no build", err, out, dir)
	}
}

// stopped records how Start gave up on a test: its Fatal or Skip, which
// end the call as the testing package's do.
type stopped struct {
	testing.TB
	how, msg string
}

func (s *stopped) Helper()         {}
func (s *stopped) Log(args ...any) {}
func (s *stopped) Fatal(args ...any) {
	s.how, s.msg = "fatal", fmt.Sprint(args...)
	panic(s)
}
func (s *stopped) Skip(args ...any) {
	s.how, s.msg = "skip", fmt.Sprint(args...)
	panic(s)
}

// startWithout runs Start where no binaries are built and answers how it
// stopped.
func startWithout(t *testing.T, require string) (how, msg, dir string) {
	t.Setenv(DirEnv, t.TempDir())
	t.Setenv(RequireEnv, require)
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	s := &stopped{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != s {
				panic(r)
			}
		}()
		Start(s)
		t.Fatal("Start returned a cluster without binaries")
	}()
	return s.how, s.msg, dir
}

// TestStartWithoutBinaries: a missing build skips, naming the command that
// makes it; GPUGRAPH_REQUIRE_KUBE=1 makes it a failure.
func TestStartWithoutBinaries(t *testing.T) {
	how, msg, dir := startWithout(t, "")
	want := "kube-apiserver tests NOT RUN (etcd is not built for these wrappers: no " + filepath.Join(dir, "etcd") +
		"): build them with test/kube/build.sh (20 to 50 minutes the first time, a moment after)"
	if how != "skip" || msg != want {
		t.Errorf("without binaries: %s %q\nwant skip %q", how, msg, want)
	}
	how, msg, _ = startWithout(t, "1")
	if how != "fatal" || !strings.HasSuffix(msg, "; GPUGRAPH_REQUIRE_KUBE=1 makes this a failure") || !strings.Contains(msg, "build them with test/kube/build.sh") {
		t.Errorf("without binaries, GPUGRAPH_REQUIRE_KUBE=1: %s %q, want a failure naming build.sh and the variable", how, msg)
	}
}
