// Command cluster-agent is gpugraph's cluster connector. It runs in (or
// beside) a Kubernetes cluster, watches its pods with client-go's shared
// informers (with their nodes, namespaces and ReplicaSets, to derive
// workloads, projects and node pools) and reports them to gpugraph's
// POST /api/v1/clusters/{clusterId}/sync, so that the Run:ai Pods API
// answers the live cluster:
//
//	cluster-agent --server URL --cluster-id UUID [--credential-file FILE]
//	      [--kubeconfig FILE] [--namespace NS] [--batch-pods 500]
//	      [--flush-after 200ms] [--resync 30m] [--log-level info]
//	      [--workload-id-label run.ai/workload-id] [--revision-id-label run.ai/revision-id]
//	      [--project-label runai/queue] [--task-label training.kubeflow.org/replica-type]
//	      [--node-pool-label runai/node-pool] [--gpu-resource nvidia.com/gpu]
//	      [--gpu-fraction-annotation gpu-fraction] [--gpu-devices-annotation gpu-fraction-num-devices]
//	      [--gpu-memory-annotation gpu-memory]
//
// The cluster's credential (gpgcl_…, from gpugraph clusters enroll) is
// read from --credential-file, a mounted Secret, before every request, so
// a rotated Secret is picked up without a restart; or from
// GPUGRAPH_CLUSTER_CREDENTIAL. It is never a flag: a flag's value shows
// in the process list. Without --kubeconfig the pod's in-cluster
// configuration is used, else $KUBECONFIG.
//
// The logic is package clusterconnector's; this is its command line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"gpugraph/internal/cluster/clusterconnector"
)

const prog = "cluster-agent"

// credentialEnv holds the credential where no file does.
const credentialEnv = "GPUGRAPH_CLUSTER_CREDENTIAL"

type options struct {
	cfg                  clusterconnector.Config
	kubeconfig, credFile string
	logLevel             string
	gpuResource          string
	getenv               func(string) string // the environment's
}

// parseFlags reads the command line (args, without the program's name)
// and the environment (getenv).
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{cfg: clusterconnector.Config{Conventions: clusterconnector.RunaiConventions()}, getenv: getenv}
	c := &o.cfg.Conventions
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.cfg.Server, "server", "", "gpugraph's base `URL` (https://gpugraph.example.com)")
	fs.StringVar(&o.cfg.ClusterID, "cluster-id", "", "the cluster's `UUID`, as enrolled (gpugraph clusters enroll)")
	fs.StringVar(&o.credFile, "credential-file", "", "a `FILE` holding the cluster's credential (a mounted Secret), read before every request; else $"+credentialEnv)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "a kubeconfig `FILE`; without it the in-cluster configuration, else $KUBECONFIG")
	fs.StringVar(&o.cfg.Namespace, "namespace", "", "watch only this `NS` (default every namespace)")
	fs.IntVar(&o.cfg.BatchPods, "batch-pods", clusterconnector.DefaultBatchPods, "the most pods a batch (a snapshot's part, a delta) holds, up to 5000")
	fs.DurationVar(&o.cfg.FlushAfter, "flush-after", clusterconnector.DefaultFlushAfter, "how long a change waits for others to join its delta")
	fs.DurationVar(&o.cfg.Resync, "resync", clusterconnector.DefaultResync, "how often the whole cluster is sent again as a snapshot")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.WorkloadIDLabel, "workload-id-label", c.WorkloadIDLabel, "the pod label naming its workload's id (else its controller's uid, else the pod's)")
	fs.StringVar(&c.RevisionIDLabel, "revision-id-label", c.RevisionIDLabel, "the pod label naming its workload's revision (else a Deployment's ReplicaSet)")
	fs.StringVar(&c.ProjectLabel, "project-label", c.ProjectLabel, "the pod or namespace label naming its project (else the namespace)")
	fs.StringVar(&c.TaskLabel, "task-label", c.TaskLabel, "the pod label naming its task in a distributed workload")
	fs.StringVar(&c.NodePoolLabel, "node-pool-label", c.NodePoolLabel, "the node label naming its node pool (on a pod or in its selector: the pools it asks for)")
	fs.StringVar(&o.gpuResource, "gpu-resource", string(c.GPUResource), "the extended resource whole GPUs are requested as")
	fs.StringVar(&c.GPUFractionAnnotation, "gpu-fraction-annotation", c.GPUFractionAnnotation, "the pod annotation asking for a portion of a GPU (0.5)")
	fs.StringVar(&c.GPUDevicesAnnotation, "gpu-devices-annotation", c.GPUDevicesAnnotation, "the pod annotation saying on how many GPUs the portion is taken")
	fs.StringVar(&c.GPUMemoryAnnotation, "gpu-memory-annotation", c.GPUMemoryAnnotation, "the pod annotation asking for GPU memory (MiB, or a quantity: 4Gi)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.GPUResource = corev1.ResourceName(o.gpuResource)
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.cfg.Server == "":
		return nil, errors.New("--server is required: gpugraph's base URL")
	case o.cfg.ClusterID == "":
		return nil, errors.New("--cluster-id is required: the cluster's UUID, as enrolled with gpugraph clusters enroll")
	case o.credFile == "" && getenv(credentialEnv) == "":
		return nil, errors.New("no credential: give --credential-file FILE (a mounted Secret) or set " + credentialEnv +
			"; gpugraph clusters enroll --cluster-id ID --tenant-id N prints it")
	}
	return o, nil
}

// credential reads the credential from the file each time (a rotated
// Secret replaces it in place), else from the environment.
func (o *options) credential() (string, error) {
	if o.credFile == "" {
		return o.getenv(credentialEnv), nil
	}
	b, err := os.ReadFile(o.credFile)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", o.credFile)
	}
	return s, nil
}

func kubeConfig(path string, getenv func(string) string) (*rest.Config, error) {
	if path == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
		path = getenv("KUBECONFIG")
		if path == "" {
			return nil, errors.New("not in a cluster, and neither --kubeconfig nor $KUBECONFIG names a kubeconfig")
		}
	}
	return clientcmd.BuildConfigFromFlags("", path)
}

// run is the command with its arguments (without the program's name),
// its environment (getenv) and its standard error.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	o, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: debug, info, warn or error", o.logLevel)
	}
	o.cfg.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	o.cfg.Credential = o.credential
	if _, err := o.credential(); err != nil {
		return fmt.Errorf("the cluster credential: %w", err)
	}
	kc, err := kubeConfig(o.kubeconfig, getenv)
	if err != nil {
		return err
	}
	kc.UserAgent = prog
	// Protobuf, as Kubernetes' own controllers read: the first list of a
	// large cluster decodes in a fraction of JSON's time and garbage (every
	// kind the connector watches is built in, so has it).
	kc.ContentType = "application/vnd.kubernetes.protobuf"
	kc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	kube, err := kubernetes.NewForConfig(kc)
	if err != nil {
		return err
	}
	c, err := clusterconnector.New(kube, o.cfg)
	if err != nil {
		return err
	}
	o.cfg.Log.Info("starting", "server", o.cfg.Server, "cluster", o.cfg.ClusterID, "kubernetes", kc.Host)
	return c.Run(ctx)
}

// gcPercent is the connector's GOGC unless the environment sets one. Its
// heap is nearly all its caches, which live as long as it does, and it
// allocates little once synced (a change's mapping and its batch): Go's
// default, collecting at twice the live heap, would hold as much again as
// the caches in garbage. At 1.5× the resident memory follows the cluster
// more closely for a few more collections while it syncs.
const gcPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, prog+":", err)
		os.Exit(2)
	}
}
