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
// (docs/contract.md#agent, the ordering rule). That rule, each workload's
// worker and the following of the server's list are package supervise's,
// shared with the QEMU runtime; this package keeps the containers.
package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	"gpugraph/internal/agent/supervise"
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
	// sup keeps the workloads, their workers and the GPUs each
	// container may use, from its start until its removal.
	sup *supervise.Supervisor[Spec]

	mu   sync.Mutex
	held map[string]bool // volume ids mounted since New: never emptied as fresh
}

type workload = supervise.Workload[Spec]

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
	r := &Runtime{cfg: cfg, ctx: ctx, cancel: cancel, held: map[string]bool{}}
	r.sup = supervise.New(supervise.Config[Spec]{Ctx: ctx, Run: r.loop,
		Stop: func(id string, gen int) Spec { return Spec{ID: id, Generation: gen, Action: ActionStop} },
		// A container this runtime did not start: it may hold any GPU
		// (or those the stop names) until it is removed.
		Stranger: func(s Spec) supervise.Use { return supervise.Use{UUIDs: s.GPUs, Any: len(s.GPUs) == 0} }})
	return r, nil
}

// Close stops the workers; containers keep running.
func (r *Runtime) Close() {
	r.cancel()
	r.sup.Wait()
}

// Assign implements agent.Runtime.
func (r *Runtime) Assign(as []agentapi.Assignment) { r.Apply(supervise.Specs(as, FromAssignment)) }

// Apply makes ss the set of pods that should exist: a new id or
// generation starts (a recreate on a new snapshot), a stop tears down, an
// id not listed is stopped and forgotten after it was reported gone. It
// does not wait: each workload's worker does the work.
func (r *Runtime) Apply(ss []Spec) {
	ss = slices.Clone(ss)
	for i := range ss {
		if ss[i].Image == "" {
			ss[i].Image = r.cfg.DefaultImage
		}
	}
	r.sup.Apply(ss)
}

// Report implements agent.Runtime.
func (r *Runtime) Report() []agentapi.WorkloadReport { return r.sup.Report() }

// loop is the one goroutine that touches workload id's container, so its
// steps never interleave.
func (r *Runtime) loop(id string, w *workload) {
	var cur Spec
	var have bool
	var exitC <-chan containerd.ExitStatus
	log := r.cfg.Log.With("workload", id)
	for {
		var s Spec
		select {
		case <-r.ctx.Done():
			return
		case s = <-w.Want():
		case st := <-exitC:
			exitC = nil
			state, msg := exitState(st, cur)
			log.Info("workload ended", "generation", cur.Generation, "state", state, "message", msg)
			w.Set(cur.Generation, state, msg, "")
			continue
		}
		if have && supervise.Same(s, cur) {
			continue
		}
		cur, have = s, true
		exitC = nil
		if s.Action == ActionStop {
			err := r.remove(id)
			if err == nil && s.Volume.Delete {
				err = r.deleteVolume(s)
			}
			if r.sup.Stopped(id, w, s.Generation, "the runtime could not remove its container: ", err, log) {
				return
			}
			continue
		}
		if s.Unsupported != "" {
			w.Set(s.Generation, agentapi.StateFailed, s.Unsupported, "")
			continue
		}
		if !r.sup.Claim(id, s, w, log) {
			// The runtime closes, or another spec came while s waited
			// for its GPUs: the next read acts on what was pushed last,
			// s itself included.
			have = false
			continue
		}
		c, err := r.start(s, w)
		if err != nil {
			r.sup.StartFailed(id, w, s.Generation, err, log)
			continue
		}
		exitC = c
		log.Info("workload running", "generation", s.Generation, "image", s.Image, "gpus", len(s.GPUs))
		w.Set(s.Generation, agentapi.StateRunning, "", "")
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
	w.SetStage(agentapi.StagePullingImage)
	img, err := r.image(s.Image)
	if err != nil {
		return nil, err
	}
	w.SetStage(agentapi.StageCreatingVolume)
	dir, err := r.volumeDir(s)
	if err != nil {
		return nil, err
	}
	w.SetStage(agentapi.StageBooting)
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
