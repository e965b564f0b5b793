// Package containerd runs a node's pods in containerd: the assigned image,
// the assigned GPUs exposed the way NVIDIA's container toolkit reads them,
// /workspace a host directory kept across recreate, CPU and memory as
// cgroup limits. It implements agent.Runtime.
//
// Each workload has one container, named by the workload's id, so a
// restarted agent finds (and adopts, or removes) what it left; each
// generation gets a new snapshot, so a recreate starts from the image's
// filesystem again while /workspace, a bind mount, stays.
//
// A run starts no container on a GPU that another workload's container may
// still use: it waits (starting, no stage yet) until that one is removed.
// A preempted workload's stop comes with its preemptor's run on the same
// GPUs, and the server, which gave them over at once, no longer lists them
// with the stop: the runtime goes by the GPUs it started that workload with
// (docs/contract.md#agent, the ordering rule).
package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/containerd"
	"github.com/containerd/containerd/cio"
	"github.com/containerd/containerd/errdefs"
	"github.com/containerd/containerd/namespaces"
	"github.com/containerd/containerd/oci"
	"github.com/containerd/containerd/runtime/v2/runc/options"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"gpugraph/internal/agent/agentapi"
)

// Defaults of Config.
const (
	DefaultNamespace   = "gpugraph"
	DefaultSnapshotter = "overlayfs"
	DefaultStopGrace   = 10 * time.Second
	runcShim           = "io.containerd.runc.v2"
	labelGeneration    = "gpugraph.generation"
)

// Config is what New needs.
type Config struct {
	Client *containerd.Client
	// Namespace holds the agent's containers; "" is DefaultNamespace.
	Namespace string
	// VolumeRoot holds one directory per volume id, mounted at /workspace.
	VolumeRoot string
	// LogDir, when set, receives each container's output as ID.log.
	LogDir      string
	Snapshotter string // "" is DefaultSnapshotter
	// RuncBinary replaces runc as the OCI runtime the shim calls:
	// nvidia-container-runtime on a GPU node, which reads
	// NVIDIA_VISIBLE_DEVICES (or the CDI annotation) and injects the GPUs.
	RuncBinary string
	// DefaultImage runs an assignment that names no image.
	DefaultImage string
	// StopGrace is how long a stop waits after SIGTERM before SIGKILL.
	StopGrace time.Duration
	Log       *slog.Logger
}

// Runtime runs pods in containerd; New makes one, Close stops its workers
// and leaves the containers running for the next agent to adopt.
type Runtime struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	work map[string]*workload
	held map[string]bool // volume ids mounted since New: never emptied as fresh
	// gpus are the GPUs each workload's container may use, from its
	// start until its removal; freed is closed (and replaced) whenever an
	// entry goes, waking the runs that wait for their GPUs.
	gpus  map[string]gpuUse
	freed chan struct{}
}

// gpuUse is what a container may hold: its GPUs' UUIDs, or any GPU when
// the runtime never started it (a container an earlier agent left, told
// stop with no GPUs).
type gpuUse struct {
	uuids []string
	any   bool
}

type workload struct {
	want chan Spec // the latest desired spec; capacity 1, newest wins

	mu       sync.Mutex
	gen      int
	state    string
	message  string
	stage    string // provisioning stage while starting
	unlisted bool   // no longer assigned: stopping, then forgotten once gone is reported
	ended    bool   // its loop returned (gone while unlisted): assigned again, it needs a new one
}

// New checks cfg and answers a Runtime.
func New(cfg Config) (*Runtime, error) {
	if cfg.Client == nil {
		return nil, errors.New("containerd runtime: no client")
	}
	if cfg.VolumeRoot == "" {
		return nil, errors.New("containerd runtime: no volume root")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.Snapshotter == "" {
		cfg.Snapshotter = DefaultSnapshotter
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if err := os.MkdirAll(cfg.VolumeRoot, 0o755); err != nil {
		return nil, fmt.Errorf("containerd runtime: volume root: %w", err)
	}
	ctx, cancel := context.WithCancel(namespaces.WithNamespace(context.Background(), cfg.Namespace))
	return &Runtime{cfg: cfg, ctx: ctx, cancel: cancel, work: map[string]*workload{}, held: map[string]bool{},
		gpus: map[string]gpuUse{}, freed: make(chan struct{})}, nil
}

// Close stops the workers; containers keep running.
func (r *Runtime) Close() {
	r.cancel()
	r.wg.Wait()
}

// Assign implements agent.Runtime.
func (r *Runtime) Assign(as []agentapi.Assignment) {
	ss := make([]Spec, len(as))
	for i, a := range as {
		ss[i] = FromAssignment(a)
	}
	r.Apply(ss)
}

// Apply makes ss the set of pods that should exist: a new id or
// generation starts (a recreate on a new snapshot), a stop tears down, an
// id not listed is stopped and forgotten after it was reported gone. It
// does not wait: each workload's worker does the work.
func (r *Runtime) Apply(ss []Spec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	listed := make(map[string]bool, len(ss))
	for _, s := range ss {
		if s.Image == "" {
			s.Image = r.cfg.DefaultImage
		}
		listed[s.ID] = true
		w := r.work[s.ID]
		if w != nil {
			w.mu.Lock()
			w.unlisted = false
			ended := w.ended
			w.mu.Unlock()
			if ended {
				// Gone and its loop over, but not yet forgotten by a
				// Report: it is assigned afresh.
				w = nil
			}
		}
		if w == nil {
			if _, ok := r.gpus[s.ID]; !ok && s.Action == ActionStop {
				// A container this runtime did not start: it may hold any
				// GPU (or those the stop names) until it is removed.
				r.gpus[s.ID] = gpuUse{uuids: s.GPUs, any: len(s.GPUs) == 0}
			}
			w = &workload{want: make(chan Spec, 1), gen: s.Generation, state: agentapi.StateStarting}
			r.work[s.ID] = w
			r.wg.Go(func() { r.loop(s.ID, w) })
		}
		w.push(s)
	}
	for id, w := range r.work {
		if listed[id] {
			continue
		}
		w.mu.Lock()
		first := !w.unlisted
		w.unlisted = true
		gen := w.gen
		w.mu.Unlock()
		if first {
			w.push(Spec{ID: id, Generation: gen, Action: ActionStop})
		}
	}
}

func (w *workload) push(s Spec) {
	select {
	case <-w.want:
	default:
	}
	w.want <- s
}

func (w *workload) set(gen int, state, message string) {
	w.mu.Lock()
	w.gen, w.state, w.message = gen, state, message
	w.stage = ""
	if state == agentapi.StateRunning {
		w.stage = agentapi.StageReady
	}
	w.mu.Unlock()
}

func (w *workload) setStage(stage string) {
	w.mu.Lock()
	w.stage = stage
	w.mu.Unlock()
}

// Report implements agent.Runtime.
func (r *Runtime) Report() []agentapi.WorkloadReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := slices.Sorted(maps.Keys(r.work))
	out := make([]agentapi.WorkloadReport, 0, len(ids))
	for _, id := range ids {
		w := r.work[id]
		w.mu.Lock()
		out = append(out, agentapi.WorkloadReport{ID: id, Generation: w.gen, State: w.state, Message: w.message, ProvisioningStage: w.stage})
		forget := w.unlisted && w.state == StateGone
		w.mu.Unlock()
		if forget {
			delete(r.work, id)
		}
	}
	return out
}

// loop is the one goroutine that touches workload id's container, so its
// steps never interleave.
func (r *Runtime) loop(id string, w *workload) {
	var cur Spec
	var have bool
	var exitC <-chan containerd.ExitStatus
	var next *Spec // a spec that came while a run waited for its GPUs
	log := r.cfg.Log.With("workload", id)
	for {
		var s Spec
		if next != nil {
			s, next = *next, nil
		} else {
			select {
			case <-r.ctx.Done():
				return
			case s = <-w.want:
			case st := <-exitC:
				exitC = nil
				state, msg := exitState(st, cur)
				log.Info("workload ended", "generation", cur.Generation, "state", state, "message", msg)
				w.set(cur.Generation, state, msg)
				continue
			}
		}
		if have && s.Generation == cur.Generation && s.Action == cur.Action {
			continue
		}
		cur, have = s, true
		exitC = nil
		if s.Action == ActionStop {
			err := r.remove(id)
			if err == nil && s.Volume.Delete {
				err = r.deleteVolume(s)
			}
			if err != nil {
				log.Error("stop", "generation", s.Generation, "err", err)
				w.set(s.Generation, agentapi.StateFailed, "the runtime could not remove its container: "+err.Error())
				continue
			}
			log.Info("workload gone", "generation", s.Generation)
			w.set(s.Generation, StateGone, "")
			// Gone is reported before a run waiting for its GPUs starts.
			r.release(id)
			w.mu.Lock() // Apply reads ended and writes unlisted under it
			w.ended = w.unlisted
			w.mu.Unlock()
			if w.ended {
				return
			}
			continue
		}
		if s.Unsupported != "" {
			w.set(s.Generation, agentapi.StateFailed, s.Unsupported)
			continue
		}
		w.set(s.Generation, agentapi.StateStarting, "")
		newer, ok := r.claim(id, s, w, log)
		if !ok {
			return
		}
		if newer != nil {
			next = newer
			continue
		}
		c, err := r.start(s, w)
		if err != nil {
			log.Error("start", "generation", s.Generation, "err", err)
			w.set(s.Generation, agentapi.StateFailed, err.Error())
			// What it made is cleaned up: its GPUs are free again.
			r.release(id)
			continue
		}
		exitC = c
		log.Info("workload running", "generation", s.Generation, "image", s.Image, "gpus", len(s.GPUs))
		w.set(s.Generation, agentapi.StateRunning, "")
	}
}

// claim waits until no other workload's container may use one of s's
// GPUs, then records them as id's. A spec for id that differs from s and
// comes meanwhile is answered instead (the run waited for is moot); the
// server repeats s itself every report. It answers false when the runtime
// closes.
func (r *Runtime) claim(id string, s Spec, w *workload, log *slog.Logger) (*Spec, bool) {
	logged := false
	for {
		r.mu.Lock()
		other := r.usedBy(id, s.GPUs)
		if other == "" {
			r.gpus[id] = gpuUse{uuids: s.GPUs}
		}
		freed := r.freed
		r.mu.Unlock()
		if other == "" {
			return nil, true
		}
		if !logged {
			log.Info("waiting for a GPU that another workload still tears down", "generation", s.Generation, "other", other)
			logged = true
		}
		select {
		case <-r.ctx.Done():
			return nil, false
		case n := <-w.want:
			if n.Generation != s.Generation || n.Action != s.Action {
				return &n, true
			}
		case <-freed:
		}
	}
}

// usedBy answers a workload other than id whose container may use one of
// gpus, or ""; r.mu is held.
func (r *Runtime) usedBy(id string, gpus []string) string {
	if len(gpus) == 0 {
		return ""
	}
	for other, u := range r.gpus {
		if other != id && (u.any || agentapi.SharesGPU(u.uuids, gpus)) {
			return other
		}
	}
	return ""
}

// release forgets the GPUs of id's container, which is removed, and
// wakes the runs waiting for GPUs.
func (r *Runtime) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.gpus[id]; ok {
		delete(r.gpus, id)
		close(r.freed)
		r.freed = make(chan struct{})
	}
}

// exitState reads a task's exit: status 0 is exited (it ended by itself),
// anything else failed.
func exitState(st containerd.ExitStatus, s Spec) (string, string) {
	code, _, err := st.Result()
	switch {
	case err != nil:
		return agentapi.StateFailed, "the runtime lost its process: " + err.Error()
	case code == 0:
		return agentapi.StateExited, "its process exited with status 0."
	case code == 128+uint32(syscall.SIGKILL) && s.MemoryBytes > 0:
		return agentapi.StateFailed, fmt.Sprintf("its process was killed (status 137), as the kernel does when it passes its memory limit of %d MiB.", s.MemoryBytes>>20)
	default:
		return agentapi.StateFailed, fmt.Sprintf("its process exited with status %d.", code)
	}
}

func (r *Runtime) opCtx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, d)
}

// remove tears down container id: SIGTERM, SIGKILL after the grace, then
// the task, the container and its snapshot. A missing container is done.
func (r *Runtime) remove(id string) error {
	ctx, cancel := r.opCtx(r.cfg.StopGrace + time.Minute)
	defer cancel()
	c, err := r.cfg.Client.LoadContainer(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if task, err := c.Task(ctx, nil); err == nil {
		if st, err := task.Status(ctx); err == nil && st.Status == containerd.Running {
			waitC, err := task.Wait(ctx)
			if err == nil {
				task.Kill(ctx, syscall.SIGTERM)
				select {
				case <-waitC:
				case <-time.After(r.cfg.StopGrace):
					task.Kill(ctx, syscall.SIGKILL)
					<-waitC
				}
			}
		}
		if _, err := task.Delete(ctx, containerd.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("delete task: %w", err)
		}
	} else if !errdefs.IsNotFound(err) {
		return fmt.Errorf("load task: %w", err)
	}
	if err := c.Delete(ctx, containerd.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("delete container: %w", err)
	}
	return nil
}

// volumeID is what a volume id may be: one path element.
var volumeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// volumeOf is the directory name of s's volume under VolumeRoot: its id,
// the workload's for an assignment that names none (an older server).
func volumeOf(s Spec) (string, error) {
	id := s.Volume.ID
	if id == "" {
		id = s.ID
	}
	if !volumeID.MatchString(id) {
		return "", fmt.Errorf("volume id %q is not a valid directory name", id)
	}
	return id, nil
}

// volumeDir answers the host directory of s's volume, made when absent
// and emptied when the volume is fresh.
func (r *Runtime) volumeDir(s Spec) (string, error) {
	id, err := volumeOf(s)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(r.cfg.VolumeRoot, id)
	r.mu.Lock()
	held := r.held[id]
	r.held[id] = true
	r.mu.Unlock()
	if s.Volume.Fresh && !held {
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("empty the fresh volume: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("make the volume: %w", err)
	}
	return dir, nil
}

// deleteVolume removes s's volume directory for good.
func (r *Runtime) deleteVolume(s Spec) error {
	id, err := volumeOf(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.held, id)
	r.mu.Unlock()
	return os.RemoveAll(filepath.Join(r.cfg.VolumeRoot, id))
}

// start runs generation s, adopting the container a previous agent left
// when it runs this very generation, and answers its task's exit.
func (r *Runtime) start(s Spec, w *workload) (<-chan containerd.ExitStatus, error) {
	if s.Image == "" {
		return nil, errors.New("the assignment names no image and the agent has no default image")
	}
	ctx, cancel := r.opCtx(time.Minute)
	defer cancel()
	if c, err := r.cfg.Client.LoadContainer(ctx, s.ID); err == nil {
		if labels, err := c.Labels(ctx); err == nil && labels[labelGeneration] == strconv.Itoa(s.Generation) {
			if task, err := c.Task(ctx, nil); err == nil {
				if st, err := task.Status(ctx); err == nil && st.Status == containerd.Running {
					return task.Wait(r.ctx)
				}
			}
		}
	}
	if err := r.remove(s.ID); err != nil {
		return nil, fmt.Errorf("remove the previous container: %w", err)
	}
	w.setStage(agentapi.StagePullingImage)
	img, err := r.image(s.Image)
	if err != nil {
		return nil, err
	}
	w.setStage(agentapi.StageCreatingVolume)
	dir, err := r.volumeDir(s)
	if err != nil {
		return nil, err
	}
	w.setStage(agentapi.StageBooting)
	mount := s.Volume.MountPath
	if mount == "" {
		mount = WorkspacePath
	}
	opts := []oci.SpecOpts{
		oci.WithImageConfig(img),
		oci.WithEnv(s.env()),
		oci.WithMounts([]specs.Mount{{Destination: mount, Type: "bind", Source: dir, Options: []string{"rbind", "rw"}}}),
		// No CNI here: the pod shares the node's network, so its public
		// endpoint is the node's address and port.
		oci.WithHostNamespace(specs.NetworkNamespace),
		oci.WithHostHostsFile,
		oci.WithHostResolvconf,
	}
	if a := s.annotations(); a != nil {
		opts = append(opts, oci.WithAnnotations(a))
	}
	if len(s.Args) > 0 {
		opts = append(opts, oci.WithProcessArgs(s.Args...))
	}
	if s.MemoryBytes > 0 {
		opts = append(opts, oci.WithMemoryLimit(s.MemoryBytes))
	}
	if s.CPUs > 0 {
		const period = 100_000
		opts = append(opts, oci.WithCPUCFS(int64(s.CPUs*period), period))
	}
	var runtimeOpts any
	if r.cfg.RuncBinary != "" {
		runtimeOpts = &options.Options{BinaryName: r.cfg.RuncBinary}
	}
	c, err := r.cfg.Client.NewContainer(ctx, s.ID,
		containerd.WithImage(img),
		containerd.WithSnapshotter(r.cfg.Snapshotter),
		// A new snapshot per generation: a recreate resets the filesystem.
		containerd.WithNewSnapshot(s.ID+"-"+strconv.Itoa(s.Generation), img),
		containerd.WithRuntime(runcShim, runtimeOpts),
		containerd.WithContainerLabels(map[string]string{labelGeneration: strconv.Itoa(s.Generation)}),
		containerd.WithNewSpec(opts...),
	)
	if err != nil {
		return nil, fmt.Errorf("create the container: %w", err)
	}
	ioc := cio.NullIO
	if r.cfg.LogDir != "" {
		if err := os.MkdirAll(r.cfg.LogDir, 0o755); err != nil {
			return nil, err
		}
		ioc = cio.LogFile(filepath.Join(r.cfg.LogDir, s.ID+".log"))
	}
	task, err := c.NewTask(ctx, ioc)
	if err != nil {
		c.Delete(ctx, containerd.WithSnapshotCleanup)
		return nil, fmt.Errorf("create the task: %w", err)
	}
	exitC, err := task.Wait(r.ctx)
	if err == nil {
		err = task.Start(ctx)
	}
	if err != nil {
		task.Delete(ctx, containerd.WithProcessKill)
		c.Delete(ctx, containerd.WithSnapshotCleanup)
		return nil, fmt.Errorf("start the task: %w", err)
	}
	return exitC, nil
}

// image answers ref, pulled and unpacked when the node lacks it.
func (r *Runtime) image(ref string) (containerd.Image, error) {
	ctx, cancel := r.opCtx(30 * time.Minute)
	defer cancel()
	img, err := r.cfg.Client.GetImage(ctx, ref)
	if errdefs.IsNotFound(err) {
		img, err = r.cfg.Client.Pull(ctx, ref, containerd.WithPullUnpack, containerd.WithPullSnapshotter(r.cfg.Snapshotter))
	}
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	if ok, err := img.IsUnpacked(ctx, r.cfg.Snapshotter); err != nil || !ok {
		if err := img.Unpack(ctx, r.cfg.Snapshotter); err != nil {
			return nil, fmt.Errorf("unpack %s: %w", ref, err)
		}
	}
	return img, nil
}
