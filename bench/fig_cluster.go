package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"gpugraph/bench/fleetgen"
	"gpugraph/bench/proc"
	"gpugraph/internal/cluster/kubetest"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
)

// ClusterFigure is the cluster connector's figure: it has a section of
// its own in BENCHMARKS.md.
const ClusterFigure = 10

const (
	rowClusterSync      = "initial sync: connector start → Pods API count shows every pod"
	rowClusterSyncCPU   = "server CPU of the initial sync"
	rowClusterRate      = "steady state: pod phase changes written to Kubernetes"
	rowClusterDeltaCPU  = "server CPU per pod change (steady state)"
	rowClusterLag       = "lag: Kubernetes status update → Pods API shows the new k8sPhase, p50 / p99"
	rowClusterConnector = "connector CPU and memory"
)

// The cluster's shape: pods in workloads of clusterPodsPerWorkload (Run:ai's
// workload-id label), spread over clusterNamespaces projects (Run:ai's
// queue label on the namespace) and round-robin over the nodes, which are
// in clusterNodePools pools.
const (
	clusterPodsPerWorkload = 10
	clusterNamespaces      = 50
	clusterNodePools       = 5
	// clusterWriters write to kube-apiserver at once while the cluster is
	// made and while the phases change.
	clusterWriters = 32
	// clusterSamplesPerSecond is about how many of the changes the lag
	// sampler follows; lagPoll is how often it asks the Pods API for each.
	clusterSamplesPerSecond = 5
	lagPoll                 = 20 * time.Millisecond
	// lagWithin bounds one sample's wait: a change not shown by then fails
	// the figure.
	lagWithin = time.Minute
)

// clusterID is the enrolled cluster of engine run e (each engine's server
// has a cluster of its own over the one Kubernetes cluster).
func clusterID(e int) string { return fmt.Sprintf("c1a57e00-0000-4000-8000-%012d", e+1) }

func clusterPodName(i int) string   { return fmt.Sprintf("pod-%06d", i) }
func clusterNamespace(i int) string { return fmt.Sprintf("team-%02d", i%clusterNamespaces) }
func clusterNodeName(i int) string  { return fmt.Sprintf("node-%05d", i) }
func clusterWorkload(i int) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", i/clusterPodsPerWorkload)
}

// kubeCluster is the Kubernetes cluster of figure 10: made once per run and
// shared by the engines, each of which changes pods the others have not.
type kubeCluster struct {
	once    sync.Once
	err     error
	dir     string
	cluster *kubetest.Cluster
	kube    *kubernetes.Clientset
	// next is the first pod still Running: each engine's steady state
	// completes the pods from there on (a pod's phase never goes back).
	next int
	made string // how long making it took, for the log
}

func (k *kubeCluster) close() {
	if k.cluster != nil {
		k.cluster.Stop()
	}
	if k.dir != "" {
		_ = os.RemoveAll(k.dir)
	}
}

// setup starts etcd and kube-apiserver and makes nodes nodes and pods
// pods, every pod bound (nodeName) and Running, its status written through
// the status subresource as a kubelet would.
func (k *kubeCluster) setup(ctx context.Context, r *runner) error {
	k.once.Do(func() { k.err = k.make(ctx, r) })
	return k.err
}

func (k *kubeCluster) make(ctx context.Context, r *runner) error {
	c := r.cfg
	dir, err := os.MkdirTemp("", "gpugraph-bench-kube-")
	if err != nil {
		return err
	}
	k.dir = dir
	start := time.Now()
	k.cluster, err = kubetest.StartIn(dir)
	if err != nil {
		return err
	}
	cfg := rest.CopyConfig(k.cluster.Config)
	// No client-side rate limit (client-go's default is 5/s), and the
	// apiserver's compact encoding.
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	if k.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	for i := range clusterNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterNamespace(i), Labels: map[string]string{"runai/queue": clusterNamespace(i)}}}
		if _, err := k.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	l := Drive(ctx, clusterWriters, c.ClusterNodes, func(ctx context.Context, i int) error {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: clusterNodeName(i), Labels: map[string]string{"runai/node-pool": fmt.Sprintf("pool-%d", i%clusterNodePools)}}}
		_, err := k.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		return err
	})
	if l.Errors > 0 {
		return fmt.Errorf("%d of %d nodes not created, first: %w", l.Errors, l.Requests, l.FirstErr)
	}
	r.logf("kube: %d nodes in %s", c.ClusterNodes, l.Elapsed.Round(time.Millisecond))
	var done atomic.Int64
	l = Drive(ctx, clusterWriters, c.ClusterPods, func(ctx context.Context, i int) error {
		pods := k.kube.CoreV1().Pods(clusterNamespace(i))
		p, err := pods.Create(ctx, clusterPod(i, c.ClusterNodes), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// The pod as created holds its resource version: its status is
		// written without a read first.
		p.Status = runningStatus(i)
		if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return err
		}
		if n := done.Add(1); n%20000 == 0 {
			r.logf("kube: %d pods running", n)
		}
		return nil
	})
	if l.Errors > 0 {
		return fmt.Errorf("%d of %d pods not created, first: %w", l.Errors, l.Requests, l.FirstErr)
	}
	k.made = time.Since(start).Round(time.Second).String()
	r.logf("kube: %d pods created and running in %s (%.0f pods/s, two writes each); the cluster made in %s",
		c.ClusterPods, l.Elapsed.Round(time.Millisecond), l.PerSecond(), k.made)
	return nil
}

// clusterPod is pod i as a training workload's controller would make it,
// bound to its node.
func clusterPod(i, nodes int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: clusterPodName(i), Namespace: clusterNamespace(i),
			Labels: map[string]string{"run.ai/workload-id": clusterWorkload(i), "training.kubeflow.org/replica-type": "worker"}},
		Spec: corev1.PodSpec{NodeName: clusterNodeName(i % max(nodes, 1)), RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "nvcr.io/nvidia/pytorch:24.01", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("32Gi"), "nvidia.com/gpu": resource.MustParse("1")},
				Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}},
	}
}

// clusterEpoch is when every pod of the cluster started running.
var clusterEpoch = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

func runningStatus(i int) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.%d.%d.%d", 1+i>>16&0xff, i>>8&0xff, i&0xff), StartTime: &clusterEpoch,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Image: "nvcr.io/nvidia/pytorch:24.01", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: clusterEpoch}}}}}
}

func succeededStatus(i int, at time.Time) corev1.PodStatus {
	s := runningStatus(i)
	s.Phase = corev1.PodSucceeded
	s.ContainerStatuses[0].Ready = false
	s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: clusterEpoch, FinishedAt: metav1.NewTime(at)}}
	return s
}

// setStatus writes pod i's status as a kubelet does, through the status
// subresource: a merge patch, so that no read comes first and no resource
// version can conflict (its container statuses are replaced whole).
func (k *kubeCluster) setStatus(ctx context.Context, i int, s corev1.PodStatus) error {
	b, err := json.Marshal(map[string]any{"status": s})
	if err != nil {
		return err
	}
	_, err = k.kube.CoreV1().Pods(clusterNamespace(i)).Patch(ctx, clusterPodName(i), types.MergePatchType, b, metav1.PatchOptions{}, "status")
	return err
}

// clusterRun is one engine's part of figure 10: its database, server
// process and connector process.
type clusterRun struct {
	*runner
	k        *kubeCluster
	db       *DB
	dir      string
	cluster  string
	server   *proc.Process
	agent    *proc.Process
	app      string // application_name of the server's PostgreSQL connections
	api      *Client
	agentLog string
	// agentBin and agentArgs start the connector (initialSync does).
	agentBin  string
	agentArgs []string
	// syncAgentCPU is the connector's CPU over the initial sync.
	syncAgentCPU time.Duration
}

func (r *runner) clusterFigure(ctx context.Context) error {
	c := r.cfg
	serverBin, err := proc.Binary(c.ServerBinary)
	if err != nil {
		return err
	}
	agentBin, err := proc.Binary(c.AgentBinary)
	if err != nil {
		return fmt.Errorf("the connector: %w", err)
	}
	if c.ClusterRate <= 0 || c.ClusterSteady <= 0 {
		return errors.New("the steady state needs a rate and a duration above 0")
	}
	if err := r.kube.setup(ctx, r); errors.Is(err, kubetest.ErrNotBuilt) {
		return &skipped{err}
	} else if err != nil {
		return err
	}
	changes := int(c.ClusterRate * c.ClusterSteady.Seconds())
	if r.kube.next+changes > c.ClusterPods {
		return fmt.Errorf("the steady state changes %d pods, but only %d of %d are still Running: more pods, or a lower rate or duration", changes, c.ClusterPods-r.kube.next, c.ClusterPods)
	}
	dir, err := os.MkdirTemp("", "gpugraph-bench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cr := &clusterRun{runner: r, k: r.kube, dir: dir, cluster: clusterID(r.index), app: "gpugraph-bench-cluster"}
	defer cr.close()
	if err := cr.start(ctx, serverBin, agentBin); err != nil {
		return err
	}
	if err := cr.initialSync(ctx); err != nil {
		return err
	}
	return cr.steady(ctx, changes)
}

func (cr *clusterRun) close() {
	if cr.agent != nil {
		cr.agent.Stop()
	}
	if cr.server != nil {
		cr.server.Stop()
		TerminateBackends(context.Background(), cr.db, cr.app)
	}
	if cr.db != nil {
		cr.db.Drop()
	}
}

// start makes the database (an organization for Run:ai tenant 1001 and its
// reader key), starts the server on it as main does, and enrolls the
// cluster as an operator does, with gpugraph clusters enroll.
func (cr *clusterRun) start(ctx context.Context, serverBin, agentBin string) error {
	db, err := FreshDB(ctx, cr.engine, cr.cfg.PostgresURL)
	if err != nil {
		return err
	}
	cr.db = db
	if _, err := dataset.Load(ctx, db.Store, fleetgen.Generate(fleetgen.Options{Tenants: 1, Seed: cr.cfg.Seed})); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, serverBin, "clusters", "enroll", "--cluster-id", cr.cluster,
		"--tenant-id", strconv.Itoa(fleetgen.TenantID(0)), "--database-url", db.URL).Output()
	if err != nil {
		return fmt.Errorf("gpugraph clusters enroll: %w", err)
	}
	credFile := filepath.Join(cr.dir, "credential")
	if err := os.WriteFile(credFile, out, 0o600); err != nil {
		return err
	}
	port, err := proc.FreePort()
	if err != nil {
		return err
	}
	// No rate limit, and the whole server the reader key's: the lag
	// sampler's reads alone are above the default rate, and several are in
	// flight at once (a credential's default share is half the cores).
	cr.server, err = proc.Start("gpugraph", filepath.Join(cr.dir, "gpugraph.log"), cr.dir, nil, serverBin,
		"--addr", "127.0.0.1:"+strconv.Itoa(port), "--database-url", WithApplicationName(db.URL, cr.app), "--demo=false",
		"--rate-limit", "0", "--credential-concurrency", "64")
	if err != nil {
		return err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	cr.api = &Client{Base: base, Token: fleetgen.Token(0), HTTP: NewHTTPClient(8)}
	if err := cr.server.WaitReady(ctx, proc.HTTPOK(cr.api.HTTP, base+"/healthz", "")); err != nil {
		return err
	}
	cr.agentLog = filepath.Join(cr.dir, "cluster-agent.log")
	// The connector as an operator runs it, its defaults kept; debug logs
	// its deltas, which the steady state counts.
	cr.agentArgs = []string{"--server", base, "--cluster-id", cr.cluster, "--credential-file", credFile,
		"--kubeconfig", cr.k.cluster.Kubeconfig, "--log-level", "debug"}
	cr.agentBin = agentBin
	return nil
}

// cpuMeter is the CPU the server process and its PostgreSQL backends
// used since it was made: the backends are found again at each read, as
// the pool may open more (one that opened since counts whole).
type cpuMeter struct {
	cr       *clusterRun
	server   time.Duration
	backends map[int]time.Duration
}

func (cr *clusterRun) meter(ctx context.Context) *cpuMeter {
	m := &cpuMeter{cr: cr, server: proc.SumCPU([]int{cr.server.Pid()}), backends: map[int]time.Duration{}}
	for _, pid := range Backends(ctx, cr.db, cr.app) {
		m.backends[pid] = proc.SumCPU([]int{pid})
	}
	return m
}

// used answers the server's CPU and its backends' since m was made.
func (m *cpuMeter) used(ctx context.Context) (server, backends time.Duration) {
	server = proc.SumCPU([]int{m.cr.server.Pid()}) - m.server
	for _, pid := range Backends(ctx, m.cr.db, m.cr.app) {
		backends += proc.SumCPU([]int{pid}) - m.backends[pid]
	}
	return server, backends
}

// count is the cluster's pods the Pods API counts, with the filter more
// (filterBy=…) if not empty.
func (cr *clusterRun) count(ctx context.Context, more string) (int, error) {
	path := "/api/v1/workloads/pods/count?filterBy=" + url.QueryEscape("clusterId=="+cr.cluster)
	if more != "" {
		path += "&filterBy=" + url.QueryEscape(more)
	}
	var a struct{ Count int }
	err := cr.api.Get(ctx, path, &a)
	return a.Count, err
}

// phase is the k8sPhase the Pods API answers for pod i ("" if it lists
// none): read from its workload's pods (ten, found by the workload's
// index), as a filter on the name over the whole table costs SQLite a
// scan in the list's order.
func (cr *clusterRun) phase(ctx context.Context, i int) (string, error) {
	var a struct {
		Pods []struct {
			Name     string `json:"name"`
			K8sPhase string `json:"k8sPhase"`
		}
	}
	if err := cr.api.Get(ctx, "/api/v1/workloads/"+clusterWorkload(i)+"/pods", &a); err != nil {
		return "", err
	}
	for _, p := range a.Pods {
		if p.Name == clusterPodName(i) {
			return p.K8sPhase, nil
		}
	}
	return "", nil
}

// initialSync starts the connector and times it until the Pods API counts
// every pod: the connector's "snapshot sent" (its last part applied) is
// watched in its log, so that counting 150,000 rows over and over is not
// in the server's CPU, and the count then confirms it.
func (cr *clusterRun) initialSync(ctx context.Context) error {
	want := cr.cfg.ClusterPods
	m := cr.meter(ctx)
	started := time.Now()
	var err error
	cr.agent, err = proc.Start("cluster-agent", cr.agentLog, cr.dir, nil, cr.agentBin, cr.agentArgs...)
	if err != nil {
		return err
	}
	agentCPU0 := proc.SumCPU([]int{cr.agent.Pid()})
	deadline := started.Add(time.Hour)
	for {
		b, _ := os.ReadFile(cr.agentLog)
		if bytes.Contains(b, []byte(`msg="snapshot sent"`)) {
			n, err := cr.count(ctx, "")
			if err != nil {
				return err
			}
			if n == want {
				break
			}
			if n > want {
				return fmt.Errorf("the Pods API counts %d pods of a cluster of %d", n, want)
			}
		}
		select {
		case <-cr.agent.Done():
			return fmt.Errorf("the connector exited: %s", cr.agent.Tail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Pods API did not count %d pods within an hour: %s", want, cr.agent.Tail())
		}
	}
	took := time.Since(started)
	server, backends := m.used(ctx)
	agentCPU := proc.SumCPU([]int{cr.agent.Pid()}) - agentCPU0
	b, _ := os.ReadFile(cr.agentLog)
	listed := "?"
	if at, ok := logTime(b, "caches synced"); ok {
		listed = at.Sub(started).Round(100 * time.Millisecond).String()
	}
	_, parts := logInt(b, "snapshot sent", "parts")
	r := cr.runner
	r.logf("initial sync of %d pods: %s (the connector's caches synced at %s, %d parts); server CPU %s, backends %s, connector %s",
		want, took.Round(time.Millisecond), listed, parts, server.Round(time.Millisecond), backends.Round(time.Millisecond), agentCPU.Round(time.Millisecond))
	r.rep.Set(ClusterFigure, rowClusterSync, r.engine, fmt.Sprintf("%.1f s for %s pods on %s nodes (the connector's list done at %s; %d parts of %d)",
		took.Seconds(), thousands(want), thousands(cr.cfg.ClusterNodes), listed, parts, clusterBatchPods))
	r.rep.Set(ClusterFigure, rowClusterSyncCPU, r.engine, fmt.Sprintf("%.1f s (%.0f µs per pod)%s", server.Seconds(),
		float64(server.Microseconds())/float64(want), backendsNote(r.engine, backends, want, "pod")))
	cr.syncAgentCPU = agentCPU
	return nil
}

// clusterBatchPods is the connector's default batch, which the figure runs
// it with.
const clusterBatchPods = 500

func backendsNote(e store.Dialect, d time.Duration, n int, per string) string {
	if e != store.Postgres {
		return ""
	}
	return fmt.Sprintf("; PostgreSQL backends %.1f s (%.0f µs per %s)", d.Seconds(), float64(d.Microseconds())/float64(n), per)
}

// steady changes changes Running pods to Succeeded at the configured rate,
// as a kubelet reports a completed container, the sampler following about
// clusterSamplesPerSecond of them through the Pods API; it ends when the
// API shows every change.
func (cr *clusterRun) steady(ctx context.Context, changes int) error {
	c, r := cr.cfg, cr.runner
	first := cr.k.next
	cr.k.next += changes
	base, err := cr.count(ctx, "k8sPhase==Succeeded")
	if err != nil {
		return err
	}
	// What one of the sampler's reads costs the server, to tell it apart
	// from the changes' cost: reads of a pod that does not change.
	const calibration = 250
	m := cr.meter(ctx)
	for range calibration {
		if _, err := cr.phase(ctx, first); err != nil {
			return err
		}
	}
	pollCPU, _ := m.used(ctx)
	perPoll := pollCPU / calibration

	every := sampleEvery(c.ClusterRate, clusterSamplesPerSecond)
	// The connector is let go quiet first (no delta for 2 s): pods it sends
	// again after its snapshot, before any change, are not the steady
	// state's (none, unless it queued its first list's adds again).
	var b []byte
	for last, since := -1, time.Now(); ; {
		b, _ = os.ReadFile(cr.agentLog)
		if n, _ := deltaStats(b); n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) >= 2*time.Second {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	logFrom := len(b)
	again, resent := deltaStats(b)
	r.logf("before the steady state the connector sent %d deltas of %d pods after its snapshot", again, resent)
	m = cr.meter(ctx)
	agentCPU0 := proc.SumCPU([]int{cr.agent.Pid()})
	var (
		polls   atomic.Int64
		mu      sync.Mutex
		lags    []time.Duration
		lagErr  error
		samples sync.WaitGroup
		writers sync.WaitGroup
		wErrs   atomic.Int64
		wFirst  atomic.Value
	)
	sample := func(i int, acked time.Time) {
		defer samples.Done()
		for {
			p, err := cr.phase(ctx, i)
			polls.Add(1)
			now := time.Now()
			if err == nil && p != string(corev1.PodSucceeded) && now.Sub(acked) > lagWithin {
				err = fmt.Errorf("pod %s not shown Succeeded %s after its change (shown %q)", clusterPodName(i), lagWithin, p)
			}
			if err != nil || p == string(corev1.PodSucceeded) {
				mu.Lock()
				if err != nil && lagErr == nil {
					lagErr = err
				} else if err == nil {
					lags = append(lags, now.Sub(acked))
				}
				mu.Unlock()
				return
			}
			time.Sleep(lagPoll)
		}
	}
	jobs := make(chan int, clusterWriters)
	for range clusterWriters {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range jobs {
				pod := first + i
				if err := cr.k.setStatus(ctx, pod, succeededStatus(pod, time.Now())); err != nil {
					if wErrs.Add(1) == 1 {
						wFirst.Store(err)
					}
					continue
				}
				// From the apiserver's answer: the change is in etcd then.
				if i%every == every/2 {
					samples.Add(1)
					go sample(pod, time.Now())
				}
			}
		}()
	}
	started := time.Now()
	p := newPacer(started, c.ClusterRate)
	for i := 0; i < changes && ctx.Err() == nil; i++ {
		time.Sleep(p.wait(i, time.Now()))
		jobs <- i
	}
	close(jobs)
	writers.Wait()
	written := time.Since(started)
	if n := wErrs.Load(); n > 0 {
		return fmt.Errorf("%d of %d status updates failed, first: %v", n, changes, wFirst.Load())
	}
	samples.Wait()
	if lagErr != nil {
		return lagErr
	}
	for deadline := time.Now().Add(lagWithin); ; {
		n, err := cr.count(ctx, "k8sPhase==Succeeded")
		if err != nil {
			return err
		}
		if n == base+changes {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Pods API shows %d of %d changes %s after the last", n-base, changes, lagWithin)
		}
		time.Sleep(100 * time.Millisecond)
	}
	all := time.Since(started)
	server, backends := m.used(ctx)
	agentCPU := proc.SumCPU([]int{cr.agent.Pid()}) - agentCPU0
	b, _ = os.ReadFile(cr.agentLog)
	batches, pods := deltaStats(b[logFrom:])
	mem, _ := proc.Memory(cr.agent.Pid())

	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	lat := Load{Latencies: lags}
	net := max(server-time.Duration(polls.Load())*perPoll, 0)
	r.logf("steady state: %d changes in %s (%.0f/s), all shown after %s; %d deltas of %d pods; server CPU %s (%d sampler reads at %s each), backends %s; lag p50 %s p99 %s (%d samples)",
		changes, written.Round(time.Millisecond), float64(changes)/written.Seconds(), all.Round(time.Millisecond), batches, pods,
		server.Round(time.Millisecond), polls.Load(), perPoll, backends.Round(time.Millisecond), ms(lat.Quantile(0.5)), ms(lat.Quantile(0.99)), len(lags))
	r.rep.Set(ClusterFigure, rowClusterRate, r.engine, fmt.Sprintf("%.0f/s for %.0f s (target %.0f/s): %s changes, sent as %d deltas (%.0f pods each)",
		float64(changes)/written.Seconds(), written.Seconds(), c.ClusterRate, thousands(changes), batches, float64(pods)/float64(max(batches, 1))))
	r.rep.Set(ClusterFigure, rowClusterDeltaCPU, r.engine, fmt.Sprintf("%.0f µs (%.1f ms per delta; %.0f µs with the lag sampler's %d reads)%s",
		float64(net.Microseconds())/float64(changes), float64(net.Microseconds())/1000/float64(max(batches, 1)),
		float64(server.Microseconds())/float64(changes), polls.Load(), backendsNote(r.engine, backends, changes, "change")))
	r.rep.Set(ClusterFigure, rowClusterLag, r.engine, fmt.Sprintf("%s / %s (%d samples, polled every %s)",
		ms(lat.Quantile(0.5)), ms(lat.Quantile(0.99)), len(lags), lagPoll))
	r.rep.Set(ClusterFigure, rowClusterConnector, r.engine, fmt.Sprintf("initial sync %.1f s CPU; %.0f µs per change; resident %d MiB (%.1f KiB a pod), peak %d MiB",
		cr.syncAgentCPU.Seconds(), float64(agentCPU.Microseconds())/float64(changes), mem.RSS>>20, float64(mem.RSS)/1024/float64(c.ClusterPods), mem.Peak>>20))
	return nil
}

// pacer spaces events at rate per second from start: event i is due at
// start + i/rate, whenever the one before it went, so a slow event is made
// up for by the next ones leaving at once and the rate over the run holds.
type pacer struct {
	start time.Time
	rate  float64
}

func newPacer(start time.Time, rate float64) pacer { return pacer{start: start, rate: rate} }

// due is when event i is due.
func (p pacer) due(i int) time.Time {
	return p.start.Add(time.Duration(float64(i) / p.rate * float64(time.Second)))
}

// wait is how long event i waits at now: none once it is due.
func (p pacer) wait(i int, now time.Time) time.Duration { return max(p.due(i).Sub(now), 0) }

// sampleEvery is which changes the lag sampler follows, one in every
// sampleEvery, so that it follows about perSecond a second at rate.
func sampleEvery(rate, perSecond float64) int {
	return max(1, int(rate/perSecond+0.5))
}

// deltaStats counts the deltas the connector's log (its debug lines) says
// it sent, and the pods they held.
func deltaStats(log []byte) (batches, pods int) {
	for _, line := range bytes.Split(log, []byte("\n")) {
		if ok, n := logInt(line, "delta sent", "pods"); ok {
			batches++
			pods += n
		}
	}
	return batches, pods
}

// logInt is the integer attribute key of the first line of the log (slog's
// text lines) whose message is msg.
func logInt(log []byte, msg, key string) (bool, int) {
	line, ok := logLine(log, msg)
	if !ok {
		return false, 0
	}
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			n, err := strconv.Atoi(v)
			return err == nil, n
		}
	}
	return false, 0
}

// logTime is the time of the first line of the log whose message is msg.
func logTime(log []byte, msg string) (time.Time, bool) {
	line, ok := logLine(log, msg)
	if !ok {
		return time.Time{}, false
	}
	v, ok := strings.CutPrefix(strings.Fields(line)[0], "time=")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

func logLine(log []byte, msg string) (string, bool) {
	want := []byte(`msg="` + msg + `"`)
	for _, line := range bytes.Split(log, []byte("\n")) {
		if bytes.Contains(line, want) {
			return string(line), true
		}
	}
	return "", false
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
