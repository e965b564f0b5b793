package clusterconnector

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"gpugraph/internal/cluster/clusterbatch"
	"gpugraph/internal/cluster/kubetest"
	"gpugraph/internal/store/storetest"
)

func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ok := Config{Server: "https://gpugraph.example.com", ClusterID: clusterA, Credential: constant("gpgcl_x")}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no server", func(c *Config) { c.Server = "" }, "a connector needs the server, the cluster id and the credential"},
		{"no cluster", func(c *Config) { c.ClusterID = "" }, "a connector needs the server, the cluster id and the credential"},
		{"no credential", func(c *Config) { c.Credential = nil }, "a connector needs the server, the cluster id and the credential"},
		{"not http", func(c *Config) { c.Server = "ftp://gpugraph.example.com" }, `server "ftp://gpugraph.example.com" is not an http(s) URL`},
		{"no host", func(c *Config) { c.Server = "https://" }, `server "https://" is not an http(s) URL`},
		{"not a URL", func(c *Config) { c.Server = "http://[::1" }, `server "http://[::1" is not an http(s) URL`},
		{"batch too large", func(c *Config) { c.BatchPods = clusterbatch.MaxPods + 1 }, "a batch holds at most 5000 pods, not 5001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			if _, err := New(kube, cfg); err == nil || err.Error() != c.want {
				t.Errorf("New answered %v, want %s", err, c.want)
			}
		})
	}
	c, err := New(kube, Config{Server: "http://gpugraph.example.com/", ClusterID: "CCCC/1", Credential: constant("gpgcl_x"), FirstSequence: 7})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.send.url, c.send.seq, c.cfg.BatchPods, c.cfg.FlushAfter, c.cfg.Resync, c.send.minBackoff, c.send.maxBackoff, c.cfg.HTTPClient.Timeout}
	want := []any{"http://gpugraph.example.com/api/v1/clusters/CCCC%2F1/sync", int64(7), 500, 200 * time.Millisecond, 30 * time.Minute,
		250 * time.Millisecond, 30 * time.Second, time.Minute}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("New's defaults: %v, want %v", got, want)
	}
}

// connectorGoroutines are the stacks of the goroutines Run starts, and
// its informers' and watches', still running.
func connectorGoroutines() string {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "clusterconnector.(*Connector)") || strings.Contains(g, "k8s.io/client-go/tools/cache.") ||
			strings.Contains(g, "k8s.io/apimachinery/pkg/watch.") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// stopRun cancels Run and fails unless it answers nil within a second and
// leaves none of its goroutines behind within five.
func stopRun(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	if connectorGoroutines() == "" {
		t.Fatal("no goroutine of the connector runs before Run is canceled: the check below would pass on anything")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run answered %v after its context was canceled, want nil", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Run still runs a second after its context was canceled")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := connectorGoroutines()
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the connector left 5 s after Run returned:\n%s", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Run ends with its context while the caches have not synced (the
// apiserver cannot be reached): nil, nothing sent, nothing left running.
func TestRunStopsBeforeTheCachesSync(t *testing.T) {
	st := storetest.Open(t, storetest.Engines()[0])
	h := newHarness(t, st)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // nothing listens there
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(kube, Config{Server: h.front.URL, ClusterID: clusterA, Credential: constant("gpgcl_x"), Log: h.logger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	time.Sleep(300 * time.Millisecond)
	stopRun(t, cancel, done)
	if n := len(h.exchanges()); n != 0 || c.Snapshots.Load() != 0 {
		t.Errorf("%d requests, %d snapshots before the caches synced; want none", n, c.Snapshots.Load())
	}
	if strings.Contains(h.log.String(), "caches synced") {
		t.Errorf("the log says the caches synced:\n%s", h.log.String())
	}
}

// kubeCase is one engine's run against the shared kube-apiserver.
type kubeCase struct {
	t    *testing.T
	kube *kubernetes.Clientset
	ns   string
}

func (k *kubeCase) create(p *corev1.Pod) *corev1.Pod {
	k.t.Helper()
	p, err := k.kube.CoreV1().Pods(k.ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	return p
}

func (k *kubeCase) pod(name, node string) *corev1.Pod {
	return k.create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: name + ":1"}}}})
}

// waitFor waits for the first request from the from'th on that ok is
// true of, and answers its index.
func (h *harness) waitFor(from int, what string, ok func(exchange) bool) int {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		xs := h.exchanges()
		for i := from; i < len(xs); i++ {
			if ok(xs[i]) {
				return i
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no request %s within 30 s; the log:\n%s", what, h.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func names(b clusterbatch.Batch) string {
	var out []string
	for _, p := range b.Pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func podOf(b clusterbatch.Batch, id string) *clusterbatch.Pod {
	for i := range b.Pods {
		if b.Pods[i].ID == id {
			return &b.Pods[i]
		}
	}
	return nil
}

// Connector.Run in-process against a real kube-apiserver and a real
// gpugraph server on each engine.
func TestConnectorAgainstKubeAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	kc := kubetest.Start(t)
	kube, err := kubernetes.NewForConfig(kc.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			h := newHarness(t, storetest.Open(t, d))
			cluster := fmt.Sprintf("cccccccc-0000-4000-8000-0000000001%02d", i)
			cred := h.enroll(cluster)
			k := &kubeCase{t: t, kube: kube, ns: "conn-" + string(d)}
			node := "gpu-" + string(d)
			if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
				Labels: map[string]string{"runai/node-pool": "a100"}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns,
				Labels: map[string]string{"runai/queue": "team-k"}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// Before the connector starts: three pods, one bound.
			p1, p2, p3 := k.pod("p1", node), k.pod("p2", ""), k.pod("p3", "")

			c, err := New(kube, Config{Server: h.front.URL, ClusterID: cluster, Credential: constant(cred), Conventions: RunaiConventions(),
				Namespace: k.ns, BatchPods: 2, FlushAfter: 20 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
				FirstSequence: 1000, Log: h.logger()})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- c.Run(runCtx) }()

			// The snapshot first, in parts of BatchPods, by namespace/name.
			xs := h.waitExchanges(2)
			for j, want := range []string{"snapshot 1001 more=true p1,p2", "snapshot 1002 more=false p3"} {
				if got := fmt.Sprintf("%s %d more=%v %s", xs[j].batch.Kind, xs[j].batch.Sequence, xs[j].batch.More, names(xs[j].batch)); got != want {
					t.Errorf("request %d: %s, want %s", j+1, got, want)
				}
			}
			if !strings.Contains(xs[1].answer, `"sequence":1002,"kind":"snapshot","podsCreated":1,"podsUpdated":0,"podsUnchanged":0,"podsDeleted":0,`) ||
				!strings.HasSuffix(xs[1].answer, `"snapshotComplete":true}`) {
				t.Errorf("the snapshot's last part answered %s", xs[1].answer)
			}
			if p := podOf(xs[0].batch, string(p1.UID)); p == nil || p.CurrentNodePool == nil || *p.CurrentNodePool != "a100" {
				t.Errorf("p1 in the snapshot: %+v", p)
			}

			// Then deltas: a pod created, bound, its node's pool changed, deleted.
			p4 := k.pod("p4", "")
			n := h.waitFor(2, "naming p4", func(x exchange) bool { return podOf(x.batch, string(p4.UID)) != nil })
			if x := h.exchanges()[n]; x.batch.Kind != clusterbatch.KindDelta || names(x.batch) != "p4" || podOf(x.batch, string(p4.UID)).NodeName != nil {
				t.Errorf("p4's delta: %s %s", x.batch.Kind, x.body)
			}
			if err := kube.CoreV1().Pods(k.ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p4"},
				Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			n = h.waitFor(n+1, "binding p4", func(x exchange) bool {
				p := podOf(x.batch, string(p4.UID))
				return p != nil && p.NodeName != nil && *p.NodeName == node && p.CurrentNodePool != nil && *p.CurrentNodePool == "a100"
			})
			nd, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			nd.Labels["runai/node-pool"] = "h100"
			if _, err := kube.CoreV1().Nodes().Update(ctx, nd, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			// The node's pods, and only they, are sent again with its new pool.
			n = h.waitFor(n+1, "the node's new pool", func(x exchange) bool { return strings.Contains(string(x.body), `"currentNodePool":"h100"`) })
			if x := h.exchanges()[n]; x.batch.Kind != clusterbatch.KindDelta || names(x.batch) != "p1,p4" && names(x.batch) != "p4,p1" {
				t.Errorf("the node's delta: %s %s", x.batch.Kind, names(x.batch))
			}
			zero := int64(0)
			if err := kube.CoreV1().Pods(k.ns).Delete(ctx, "p4", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			n = h.waitFor(n+1, "deleting p4", func(x exchange) bool {
				p := podOf(x.batch, string(p4.UID))
				return p != nil && p.DeletedAt != nil
			})
			deletedAt := podOf(h.exchanges()[n].batch, string(p4.UID)).DeletedAt.UTC()
			if deletedAt.Before(p4.CreationTimestamp.Time) || deletedAt.After(time.Now()) || deletedAt.Nanosecond() != 0 {
				t.Errorf("p4's deletedAt %v: want its deletionTimestamp (whole seconds, after %v)", deletedAt, p4.CreationTimestamp)
			}

			// Every request in order, one sequence each, each taken.
			xs = h.exchanges()
			for j, x := range xs {
				if x.batch.Sequence != int64(1001+j) || x.status != 200 || (j >= 2) != (x.batch.Kind == clusterbatch.KindDelta) {
					t.Errorf("request %d: %s %d answered %d, want sequence %d", j+1, x.batch.Kind, x.batch.Sequence, x.status, 1001+j)
				}
			}
			if c.Snapshots.Load() != 1 {
				t.Errorf("%d snapshots completed, want 1", c.Snapshots.Load())
			}

			// The Pods API answers the cluster as it is.
			live, gone := h.pods(false), h.pods(true)
			if len(live) != 3 || len(gone) != 1 {
				t.Errorf("%d live pods, %d deleted; want 3 and 1", len(live), len(gone))
			}
			fields(t, "p1", live[string(p1.UID)], map[string]any{"name": "p1", "clusterId": cluster, "projectId": "team-k", "projectName": "team-k",
				"workloadId": string(p1.UID), "workloadName": "p1", "nodeName": node, "currentNodePool": "h100", "k8sPhase": "Pending",
				"createdAt": p1.CreationTimestamp.UTC().Format("2006-01-02T15:04:05.000Z"), "deletedAt": nil,
				"containers": []any{map[string]any{"name": "main", "image": "p1:1", "startedAt": nil}}})
			for _, p := range []*corev1.Pod{p2, p3} {
				fields(t, p.Name, live[string(p.UID)], map[string]any{"name": p.Name, "nodeName": nil, "currentNodePool": nil, "deletedAt": nil})
			}
			fields(t, "p4", gone[string(p4.UID)], map[string]any{"name": "p4", "nodeName": node, "currentNodePool": "h100",
				"deletedAt": deletedAt.Format("2006-01-02T15:04:05.000Z")})

			stopRun(t, cancel, done)
		})
	}

	// A snapshot the server refuses is not retried: it is abandoned, and
	// sent again (a new sequence) at each resync; Run goes on.
	t.Run("refused snapshot", func(t *testing.T) {
		h := newHarness(t, storetest.Open(t, storetest.Engines()[0]))
		cred := h.enroll(clusterA)
		k := &kubeCase{t: t, kube: kube, ns: "conn-refused"}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		k.pod("r1", "")
		// Cluster A's credential writing cluster B: 403.
		c, err := New(kube, Config{Server: h.front.URL, ClusterID: clusterB, Credential: constant(cred), Namespace: k.ns,
			Resync: 100 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, FirstSequence: 500, Log: h.logger()})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx) }()
		h.waitExchanges(3)
		stopRun(t, cancel, done)
		for j, x := range h.exchanges() {
			if x.batch.Kind != clusterbatch.KindSnapshot || x.batch.Sequence != int64(501+j) || x.status != 403 || names(x.batch) != "r1" {
				t.Errorf("request %d: %s %d answered %d with %s, want snapshot %d refused", j+1, x.batch.Kind, x.batch.Sequence, x.status, names(x.batch), 501+j)
			}
		}
		if c.Snapshots.Load() != 0 {
			t.Errorf("%d snapshots completed, want 0", c.Snapshots.Load())
		}
		want := `msg="the server refused a snapshot's part: the snapshot is abandoned until the next resync" part=1 err="the server refused the batch: 403 this credential is cluster \"` +
			clusterA + `\"'s; it cannot write cluster \"` + clusterB + `\""`
		if !strings.Contains(h.log.String(), want) {
			t.Errorf("the log holds no %s:\n%s", want, h.log.String())
		}
		if strings.Contains(h.log.String(), "retrying") {
			t.Errorf("a refused snapshot was retried:\n%s", h.log.String())
		}
	})

	// The informers keep only what the mapping reads, read in protobuf
	// as cluster-agent reads: a pod with a 100 KiB annotation and managed
	// fields is cached in under a KiB, and maps from the cache exactly as
	// the apiserver's whole pod, node, namespace and ReplicaSet map.
	t.Run("caches", func(t *testing.T) {
		cfg := rest.CopyConfig(kc.Config)
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		pb, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		const ns, node = "conn-cache", "gpu-cache"
		big := strings.Repeat("x", 100<<10)
		if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
			Labels: map[string]string{"runai/node-pool": "h200", "zone": "b"}, Annotations: map[string]string{"big": big}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{"runai/queue": "team-z", "env": "prod"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rs, err := kube.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "train-5c", Annotations: map[string]string{"big": big},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "train", UID: "aaaaaaaa-0000-4000-8000-0000000000c1", Controller: new(true)}}},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "train:1"}}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p := noisy(trainPod())
		p.Namespace, p.UID, p.CreationTimestamp, p.DeletionTimestamp, p.Finalizers = ns, "", metav1.Time{}, nil, nil
		p.Spec.NodeName, p.Spec.Overhead, p.Spec.PriorityClassName = node, nil, "" // no RuntimeClass nor PriorityClass here
		p.Labels["runai/node-pool"] = "h200"                                       // a label holds no list
		p.Annotations["gpu-fraction"], p.Annotations["big"] = "0.5", big
		p.OwnerReferences[1].Name, p.OwnerReferences[1].UID, p.OwnerReferences[1].APIVersion = rs.Name, rs.UID, "apps/v1"
		p.OwnerReferences[0].UID = "99999999-0000-4000-8000-0000000000c2"
		status := p.Status
		p.Status = corev1.PodStatus{}
		made, err := kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		made.Status = status
		if _, err := kube.CoreV1().Pods(ns).UpdateStatus(ctx, made, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}

		c, err := New(pb, Config{Server: "http://127.0.0.1:1", ClusterID: clusterA, Credential: constant("gpgcl_x"), Conventions: RunaiConventions(),
			Namespace: ns, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		if err := c.informers(runCtx); err != nil {
			t.Fatal(err)
		}
		whole, err := kube.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		obj, ok, err := c.pods.GetStore().GetByKey(ns + "/" + p.Name)
		if err != nil || !ok {
			t.Fatalf("the pod is not cached: %v", err)
		}
		cp := obj.(*cachedPod)
		kept, err := cp.pod(c.cfg.Conventions)
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.ManagedFields) == 0 || whole.Size() < 300<<10 || len(cp.raw) > 1024 {
			t.Errorf("the apiserver's pod is %d bytes with %d managed fields; the cache keeps %d bytes: want at most 1 KiB of over 300 KiB",
				whole.Size(), len(whole.ManagedFields), len(cp.raw))
		}
		if len(kept.ManagedFields) != 0 || mustJSON(kept.Annotations) != `{"gpu-fraction":"0.5"}` || len(kept.Labels) != 2 ||
			len(kept.OwnerReferences) != 1 || kept.Spec.Containers[0].Env != nil || kept.Spec.Volumes != nil || kept.Status.Conditions != nil && kept.Status.Conditions[0].Message != "" {
			t.Errorf("the cache keeps what the mapping does not read: %s", mustJSON(kept))
		}
		wholeNode, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wholeNS, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cached := func(s interface {
			GetByKey(string) (any, bool, error)
		}, key string) any {
			obj, ok, err := s.GetByKey(key)
			if err != nil || !ok {
				t.Fatalf("%s is not cached: %v", key, err)
			}
			return obj
		}
		cNode, cNS, cRS := cached(c.nodes.GetStore(), node).(*corev1.Node), cached(c.namespaces.GetStore(), ns).(*corev1.Namespace),
			cached(c.rsets.GetStore(), ns+"/"+rs.Name).(*appsv1.ReplicaSet)
		if mustJSON(cNode.Labels) != `{"runai/node-pool":"h200"}` || cNode.Annotations != nil || cNode.ManagedFields != nil ||
			mustJSON(cNS.Labels) != `{"runai/queue":"team-z"}` || cNS.ManagedFields != nil || cRS.Annotations != nil || cRS.ManagedFields != nil ||
			len(cRS.OwnerReferences) != 1 || cRS.Spec.Template.Spec.Containers != nil {
			t.Errorf("the caches keep more than the mapping reads: %s %s %s", mustJSON(cNode), mustJSON(cNS), mustJSON(cRS))
		}
		want := c.cfg.Conventions.Map(whole, Related{ClusterID: clusterA, Node: wholeNode, Namespace: wholeNS, ReplicaSet: &rs.ObjectMeta})
		got, ok := c.mapCached(cp, nil)
		if g, w := mustJSON(got), mustJSON(want); !ok || g != w {
			t.Errorf("the cached pod maps as\n%s\nwant\n%s", g, w)
		}
		if want.Workload.ID != "aaaaaaaa-0000-4000-8000-0000000000c1" || *want.Pod.CurrentNodePool != "h200" || want.Project.ID != "team-z" ||
			*want.Pod.RequestedResources.GPU.Request != 2 || want.Pod.Containers[0].StartedAt == nil {
			t.Errorf("the whole pod maps as %s", mustJSON(want))
		}
		cancel()
		deadline := time.Now().Add(5 * time.Second)
		for connectorGoroutines() != "" && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	})

}
