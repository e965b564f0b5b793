package clusterconnector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"gpugraph/internal/cluster/clusterbatch"
)

// Config is a connector's.
type Config struct {
	// Server is gpugraph's base URL; ClusterID the cluster's, as enrolled.
	Server, ClusterID string
	// Credential answers the cluster's credential; it is called for every
	// request, so a rotated credential in a mounted file is picked up.
	Credential  func() (string, error)
	Conventions Conventions
	// Namespace limits the connector to one namespace ("" for all).
	Namespace string
	// BatchPods bounds a batch (a snapshot's part or a delta); FlushAfter
	// is how long a change waits for others to join its delta.
	BatchPods  int
	FlushAfter time.Duration
	// Resync is how often the whole cluster is sent again as a snapshot,
	// so that anything the server lost is put right.
	Resync time.Duration
	// MinBackoff and MaxBackoff bound the waits between retries.
	MinBackoff, MaxBackoff time.Duration
	// FirstSequence is the sequence before the first batch's (the Unix
	// time in milliseconds when 0: above what an earlier run sent, unless
	// it sent more than a batch a millisecond).
	FirstSequence int64
	HTTPClient    *http.Client
	Log           *slog.Logger
}

// Defaults of Config's bounds.
const (
	DefaultBatchPods  = 500
	DefaultFlushAfter = 200 * time.Millisecond
	DefaultResync     = 30 * time.Minute
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// Connector watches a cluster's pods and reports them.
type Connector struct {
	cfg        Config
	kube       kubernetes.Interface
	q          *queue
	send       *sender
	relisted   atomic.Bool  // the pods were listed again: the next send is a snapshot
	lists      atomic.Int64 // the pod informer's lists
	pods       cache.SharedIndexInformer
	nodes      cache.SharedIndexInformer
	namespaces cache.SharedIndexInformer
	rsets      cache.SharedIndexInformer
	// Snapshots counts the snapshots completed, for tests and logs.
	Snapshots atomic.Int64
}

// Indexes of the pod cache, to find the pods a node's, namespace's or
// ReplicaSet's change touches.
const (
	byNode  = "node"
	byOwner = "owner"
)

// New is a connector of the cluster kube reaches.
func New(kube kubernetes.Interface, cfg Config) (*Connector, error) {
	if cfg.Server == "" || cfg.ClusterID == "" || cfg.Credential == nil {
		return nil, errors.New("a connector needs the server, the cluster id and the credential")
	}
	u, err := url.Parse(cfg.Server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server %q is not an http(s) URL", cfg.Server)
	}
	cfg.BatchPods = cmpOr(cfg.BatchPods, DefaultBatchPods)
	if cfg.BatchPods > clusterbatch.MaxPods {
		return nil, fmt.Errorf("a batch holds at most %d pods, not %d", clusterbatch.MaxPods, cfg.BatchPods)
	}
	cfg.FlushAfter = cmpOr(cfg.FlushAfter, DefaultFlushAfter)
	cfg.Resync = cmpOr(cfg.Resync, DefaultResync)
	cfg.MinBackoff = cmpOr(cfg.MinBackoff, DefaultMinBackoff)
	cfg.MaxBackoff = cmpOr(cfg.MaxBackoff, DefaultMaxBackoff)
	cfg.FirstSequence = cmpOr(cfg.FirstSequence, time.Now().UnixMilli())
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: time.Minute}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	c := &Connector{cfg: cfg, kube: kube, q: newQueue()}
	c.send = &sender{url: strings.TrimRight(cfg.Server, "/") + "/api/v1/clusters/" + url.PathEscape(cfg.ClusterID) + "/sync",
		credential: cfg.Credential, client: cfg.HTTPClient, log: cfg.Log, minBackoff: cfg.MinBackoff, maxBackoff: cfg.MaxBackoff,
		seq: cfg.FirstSequence}
	return c, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Run watches and reports until ctx ends: a snapshot once the caches have
// synced, then deltas, a snapshot again after a watch expired (the
// informer relisted) and every Resync.
func (c *Connector) Run(ctx context.Context) error {
	if err := c.informers(ctx); err != nil {
		return err
	}
	resync := time.NewTicker(c.cfg.Resync)
	defer resync.Stop()
	snapshot := true
	for {
		if c.relisted.Swap(false) {
			snapshot = true
		}
		if snapshot {
			if err := c.snapshot(ctx); err != nil {
				return err
			}
			snapshot = false
		}
		// Wait for a change (or a relist, or the resync), then let others
		// join it for FlushAfter unless a batch is full already.
		select {
		case <-ctx.Done():
			return nil
		case <-resync.C:
			snapshot = true
			continue
		case <-c.q.wake:
		}
		if c.q.len() < c.cfg.BatchPods {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(c.cfg.FlushAfter):
			}
		}
		for c.q.len() > 0 && !c.relisted.Load() {
			if err := c.delta(ctx); err != nil {
				return err
			}
		}
	}
}

// informers starts the caches and waits for their first lists.
func (c *Connector) informers(ctx context.Context) error {
	// Each informer keeps only what the mapping reads (cache.go).
	opts := []informers.SharedInformerOption{informers.WithTransform(c.cfg.Conventions.slimObject)}
	if c.cfg.Namespace != "" {
		opts = append(opts, informers.WithNamespace(c.cfg.Namespace))
	}
	// No informer resync: each would send every pod again as a delta;
	// Resync sends them as a snapshot instead.
	f := informers.NewSharedInformerFactoryWithOptions(c.kube, 0, opts...)
	all := informers.NewSharedInformerFactoryWithOptions(c.kube, 0, informers.WithTransform(c.cfg.Conventions.slimObject)) // nodes are cluster-wide
	c.rsets = f.Apps().V1().ReplicaSets().Informer()
	c.nodes = all.Core().V1().Nodes().Informer()
	c.namespaces = all.Core().V1().Namespaces().Informer()
	// The pods' informer lists through listed, which counts its lists: a
	// list after the first is a relist (a watch expired, 410 Gone: etcd
	// compacted past it, or the apiserver's watch cache no longer reaches
	// back; or a watch broken by an error), after which the connector
	// sends a snapshot. A list is a LIST, or a watch asking for the
	// initial events (client-go's streaming list).
	pods := c.kube.CoreV1().Pods(c.cfg.Namespace)
	listed := func() {
		if c.lists.Add(1) > 1 {
			c.cfg.Log.Warn("the pod informer lists again (its watch expired or broke): a snapshot follows")
			c.relisted.Store(true)
			select {
			case c.q.wake <- struct{}{}:
			default:
			}
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			listed()
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				listed()
			}
			return pods.Watch(ctx, o)
		},
	}
	c.pods = cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{Indexers: cache.Indexers{
		cache.NamespaceIndex: func(obj any) ([]string, error) {
			if p, ok := obj.(*cachedPod); ok {
				return []string{p.namespace.Value()}, nil
			}
			return nil, nil
		},
		byNode: func(obj any) ([]string, error) {
			if p, ok := obj.(*cachedPod); ok && p.nodeName.Value() != "" {
				return []string{p.nodeName.Value()}, nil
			}
			return nil, nil
		},
		byOwner: func(obj any) ([]string, error) {
			if p, ok := obj.(*cachedPod); ok && p.controller != "" {
				return []string{string(p.controller)}, nil
			}
			return nil, nil
		},
	}})
	if err := c.pods.SetTransform(c.cfg.Conventions.cachePod); err != nil {
		return err
	}
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		// An add of an informer's first list queues nothing: the first
		// snapshot, which waits for every handler's sync, sends it (150,000
		// keys queued only to be dropped by its reset).
		{c.pods, cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, first bool) {
				if !first {
					c.podChanged(obj)
				}
			},
			UpdateFunc: func(old, obj any) {
				if o, n := old.(*cachedPod), obj.(*cachedPod); o.resourceVersion != n.resourceVersion {
					c.podChanged(obj)
				}
			},
			DeleteFunc: c.podDeleted,
		}},
		{c.nodes, labelsChanged(func(n metav1.Object) { c.touch(byNode, n.GetName()) })},
		{c.namespaces, labelsChanged(func(n metav1.Object) { c.touch(cache.NamespaceIndex, n.GetName()) })},
		{c.rsets, cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, first bool) {
				if !first {
					c.touch(byOwner, string(obj.(*appsv1.ReplicaSet).UID))
				}
			},
			UpdateFunc: func(old, obj any) {
				o, n := old.(*appsv1.ReplicaSet), obj.(*appsv1.ReplicaSet)
				if !slices.EqualFunc(o.OwnerReferences, n.OwnerReferences, func(a, b metav1.OwnerReference) bool { return a.UID == b.UID }) {
					c.touch(byOwner, string(n.UID))
				}
			},
		}},
	}
	// Synced is each handler's, not each informer's: an informer has synced
	// once its first list is in its cache, while its handlers may still
	// be handed that list's adds. The snapshot comes after them, so that
	// what they queue after its reset is only what changed since (were
	// those adds queued, the snapshot would be sent a second time as
	// deltas: 150,000 pods, minutes of deltas ahead of the first change).
	var synced []cache.InformerSynced
	for _, h := range handlers {
		reg, err := h.inf.AddEventHandler(h.h)
		if err != nil {
			return err
		}
		synced = append(synced, reg.HasSynced)
	}
	f.Start(ctx.Done())
	all.Start(ctx.Done())
	go c.pods.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("the caches did not sync")
	}
	c.cfg.Log.Info("caches synced", "pods", len(c.pods.GetStore().ListKeys()), "nodes", len(c.nodes.GetStore().ListKeys()))
	return nil
}

// labelsChanged calls touch when an object is added (but in its
// informer's first list), deleted, or its labels change (a node's pool, a
// namespace's project).
func labelsChanged(touch func(metav1.Object)) cache.ResourceEventHandler {
	meta := func(obj any) metav1.Object {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		m, _ := obj.(metav1.Object)
		return m
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, first bool) {
			if m := meta(obj); m != nil && !first {
				touch(m)
			}
		},
		UpdateFunc: func(old, obj any) {
			if o, n := meta(old), meta(obj); o != nil && n != nil && !maps.Equal(o.GetLabels(), n.GetLabels()) {
				touch(n)
			}
		},
		DeleteFunc: func(obj any) {
			if m := meta(obj); m != nil {
				touch(m)
			}
		},
	}
}

func (c *Connector) podChanged(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.q.add(key)
	}
}

// podDeleted keeps the pod's final state, as the cache no longer has it:
// a tombstone's (a delete the watch missed, found by a relist) is its
// last known one.
func (c *Connector) podDeleted(obj any) {
	at := time.Now().UTC()
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	cp, ok := obj.(*cachedPod)
	if !ok {
		return
	}
	p, err := cp.pod(c.cfg.Conventions)
	if err != nil {
		c.cfg.Log.Error("deleted pod left out", "err", err)
		return
	}
	if p.DeletionTimestamp != nil && p.DeletionTimestamp.Time.Before(at) {
		at = p.DeletionTimestamp.UTC() // when it went, for a delete without grace
	}
	c.q.remove(p, at)
}

// touch marks changed the pods of the index value (a node, a namespace,
// a ReplicaSet).
func (c *Connector) touch(index, value string) {
	keys, err := c.pods.GetIndexer().IndexKeys(index, value)
	if err != nil {
		return
	}
	for _, k := range keys {
		c.q.add(k)
	}
}

// snapshot sends every pod of the cache, in parts, and the deleted pods
// not yet sent. Each part is mapped as it is sent, so that the mapped
// cluster (a Mapped a pod, with all its pointers) is never held whole.
func (c *Connector) snapshot(ctx context.Context) error {
	started := time.Now()
	deleted := c.q.reset()
	objs := c.pods.GetStore().List()
	type keyed struct {
		key string
		pod *cachedPod
	}
	pods := make([]keyed, 0, len(objs))
	for _, o := range objs {
		p := o.(*cachedPod)
		pods = append(pods, keyed{p.namespace.Value() + "/" + p.name, p})
	}
	objs = nil
	slices.SortFunc(pods, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	// next is the next pod mapped (the cache's by namespace/name, then the
	// deleted ones), false after the last: the pods mapPod leaves out
	// are skipped.
	i, j := 0, 0
	next := func() (Mapped, bool) {
		for ; i < len(pods); i++ {
			if m, ok := c.mapCached(pods[i].pod, nil); ok {
				i++
				return m, true
			}
		}
		for ; j < len(deleted); j++ {
			at := deleted[j].at
			if m, ok := c.mapPod(deleted[j].pod, &at); ok {
				j++
				return m, true
			}
		}
		return Mapped{}, false
	}
	parts, sent := 0, 0
	m, more := next()
	for first := true; first || more; first = false {
		part := make([]Mapped, 0, c.cfg.BatchPods)
		for more && len(part) < c.cfg.BatchPods {
			part = append(part, m)
			m, more = next()
		}
		b := c.batch(clusterbatch.KindSnapshot, part)
		b.More = more
		a, err := c.send.send(ctx, b)
		if errors.Is(err, errRefused) {
			// Its last part would mark the refused part's pods deleted: the
			// snapshot stops here and the next resync sends it again.
			c.cfg.Log.Error("the server refused a snapshot's part: the snapshot is abandoned until the next resync", "part", parts+1, "err", err)
			return nil
		}
		if err != nil {
			return ignoreCanceled(err)
		}
		parts++
		sent += len(part)
		if !b.More {
			c.Snapshots.Add(1)
			c.cfg.Log.Info("snapshot sent", "pods", sent, "parts", parts, "sequence", a.Sequence, "deleted", a.PodsDeleted,
				"took", time.Since(started).Round(time.Millisecond))
		}
	}
	return nil
}

// delta sends up to a batch of changed pods.
func (c *Connector) delta(ctx context.Context) error {
	keys, deleted := c.q.take(c.cfg.BatchPods)
	var mapped []Mapped
	for _, k := range keys {
		if g, ok := deleted[k]; ok {
			at := g.at
			if m, ok := c.mapPod(g.pod, &at); ok {
				mapped = append(mapped, m)
			}
			continue
		}
		obj, ok, err := c.pods.GetStore().GetByKey(k)
		if err != nil || !ok {
			continue // deleted since: its deletion is queued under its UID
		}
		if m, ok := c.mapCached(obj.(*cachedPod), nil); ok {
			mapped = append(mapped, m)
		}
	}
	if len(mapped) == 0 {
		return nil
	}
	a, err := c.send.send(ctx, c.batch(clusterbatch.KindDelta, mapped))
	if errors.Is(err, errRefused) {
		c.cfg.Log.Error("the server refused a delta: its pods are sent again by the next snapshot", "pods", len(mapped), "err", err)
		return nil
	}
	if err != nil {
		return ignoreCanceled(err)
	}
	c.cfg.Log.Debug("delta sent", "pods", len(mapped), "sequence", a.Sequence, "created", a.PodsCreated, "updated", a.PodsUpdated)
	return nil
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// mapCached is mapPod of a cached pod.
func (c *Connector) mapCached(cp *cachedPod, deletedAt *time.Time) (Mapped, bool) {
	p, err := cp.pod(c.cfg.Conventions)
	if err != nil {
		c.cfg.Log.Error("pod left out", "err", err)
		return Mapped{}, false
	}
	return c.mapPod(p, deletedAt)
}

// mapPod is p mapped with what the caches know of it and checked as the
// server will check it: a pod whose resources the server would refuse is
// sent without them, and one it would refuse even so is left out (false),
// so one bad pod never holds up its batch.
func (c *Connector) mapPod(p *corev1.Pod, deletedAt *time.Time) (Mapped, bool) {
	r := Related{ClusterID: c.cfg.ClusterID, DeletedAt: deletedAt}
	if p.Spec.NodeName != "" {
		if obj, ok, _ := c.nodes.GetStore().GetByKey(p.Spec.NodeName); ok {
			r.Node = obj.(*corev1.Node)
		}
	}
	if obj, ok, _ := c.namespaces.GetStore().GetByKey(p.Namespace); ok {
		r.Namespace = obj.(*corev1.Namespace)
	}
	if o := metav1.GetControllerOfNoCopy(p); o != nil && o.Kind == "ReplicaSet" {
		if obj, ok, _ := c.rsets.GetStore().GetByKey(p.Namespace + "/" + o.Name); ok {
			r.ReplicaSet = &obj.(*appsv1.ReplicaSet).ObjectMeta
		}
	}
	m := c.cfg.Conventions.Map(p, r)
	for _, problem := range m.Problems {
		c.cfg.Log.Warn("pod field left out", "pod", p.Namespace+"/"+p.Name, "problem", problem)
	}
	if err := clusterbatch.CheckPod("pod", &m.Pod); err != nil {
		m.Pod.RequestedResources, m.Pod.AllocatedResources = nil, nil
		if again := clusterbatch.CheckPod("pod", &m.Pod); again != nil {
			c.cfg.Log.Error("pod left out: the server would refuse it", "pod", p.Namespace+"/"+p.Name, "id", m.Pod.ID, "err", again)
			return Mapped{}, false
		}
		c.cfg.Log.Warn("pod's resources left out: the server would refuse them", "pod", p.Namespace+"/"+p.Name, "err", err)
	}
	return m, true
}

// batch is the pods (checked by mapPod) with their workloads and
// projects, each once.
func (c *Connector) batch(kind string, pods []Mapped) *clusterbatch.Batch {
	// Every list is sent, empty or not: the API's document has none nullable.
	b := &clusterbatch.Batch{Kind: kind, Pods: []clusterbatch.Pod{}, Workloads: []clusterbatch.Workload{}, Projects: []clusterbatch.Project{},
		DeletedPodIDs: []string{}}
	workloads, projects := map[string]bool{}, map[string]bool{}
	for _, m := range pods {
		b.Pods = append(b.Pods, m.Pod)
		if !projects[m.Project.ID] {
			projects[m.Project.ID] = true
			b.Projects = append(b.Projects, m.Project)
		}
		if !workloads[m.Workload.ID] {
			workloads[m.Workload.ID] = true
			b.Workloads = append(b.Workloads, m.Workload)
		}
	}
	return b
}
