// Package bench measures gpugraph at fleet scale: an in-process server over
// a fresh database per engine, a fixture from package fleet or bulk SQL,
// the seven figures of the performance issue, the live-updates figure (8),
// create and the queue (9), the cluster connector at scale (10), the metering pass (11) and heartbeats at
// fleet scale (12). cmd/benchreport prints them as a table and writes BENCHMARKS.md.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"gpugraph/internal/store/sqlcount"

	"gpugraph/internal/httpapi"
	"gpugraph/internal/httpapi/loaders"
	"gpugraph/internal/services"
	"gpugraph/internal/store"
)

// Config sizes a run. The defaults are the sizes the issue names.
type Config struct {
	PostgresURL string // empty: SQLite only
	Engines     []store.Dialect

	FleetNodes int // figure 7 (and 1, 2, 4 run on its data): 1,500 nodes = 12,000 GPUs
	FleetPods  int // 30,000
	Tenants    int

	BigPods int // figure 3 on PostgreSQL: 1,000,000
	// SQLiteBigPods is figure 3's size on SQLite: a filtered page there
	// takes seconds at a million rows, too long for the run's budget.
	SQLiteBigPods int

	Samples      int // figure 6: 1,000,000 stored samples
	SeriesPoints int // figure 6: 1,000 points read

	RestartNodes int // figures 5 and 9: 1,000 nodes
	VMsPerNode   int
	VMGPUs       int

	QueuePending int // figure 9: 10,000 pending VMs
	QueueSamples int // figure 9: stops timed until a pending VM is placed

	LiveSubscribers int // figure 8: 1,000 WebSocket subscribers
	LiveEvents      int // figure 8: events committed while they listen

	// Figure 10, the cluster connector: a Kubernetes cluster of
	// ClusterNodes nodes and ClusterPods pods (5,000 and 150,000), then
	// pods' phases changed at ClusterRate a second (200) for ClusterSteady.
	ClusterNodes  int
	ClusterPods   int
	ClusterRate   float64
	ClusterSteady time.Duration
	// ServerBinary and AgentBinary are the gpugraph and cluster-agent
	// binaries figure 10 runs as processes (make build makes both).
	ServerBinary, AgentBinary string

	// Figure 11, the metering pass: MeteringWorkloads running workloads
	// (10,000) of MeteringOrgs organizations (1,000), MeteringPasses passes
	// timed (the median is reported).
	MeteringWorkloads int
	MeteringOrgs      int
	MeteringPasses    int

	// Figure 12, heartbeats at fleet scale: HeartbeatNodes nodes (20,000),
	// HeartbeatClients agents at once (64), HeartbeatRequests heartbeats
	// timed (40,000).
	HeartbeatNodes    int
	HeartbeatClients  int
	HeartbeatRequests int

	Clients      int // figures 4, 5 and 9: 16
	LoadRequests int // figure 4: requests per query
	LatencyRuns  int // figures 1, 3, 6: timed runs (the median is reported)

	// Figures picks the figures to run (all when empty). Figures 1, 2, 4
	// and 6 read the fleet that figure 7 loads, so it always runs with them.
	Figures map[int]bool

	LoaderWait time.Duration // httpapi.Config.LoaderWait; 0 = the server's default
	// ProfileDir, when set, gets a CPU profile of each figure but 7:
	// fig<N>-<engine>.pprof (the server runs in this process, so the
	// profile holds the server's side of every request).
	ProfileDir string
	Seed       uint64
	Log        io.Writer
}

// Defaults are the sizes.
func Defaults() Config {
	return Config{
		FleetNodes: 1500, FleetPods: 30000, Tenants: 4,
		BigPods: 1_000_000, SQLiteBigPods: 100_000,
		Samples: 1_000_000, SeriesPoints: 1000,
		RestartNodes: 1000, VMsPerNode: 5, VMGPUs: 2,
		LiveSubscribers: 1000, LiveEvents: 100,
		QueuePending: 10000, QueueSamples: 50,
		ClusterNodes: 5000, ClusterPods: 150_000, ClusterRate: 200, ClusterSteady: time.Minute,
		ServerBinary: "bin/gpugraph", AgentBinary: "bin/cluster-agent",
		MeteringWorkloads: 10_000, MeteringOrgs: 1000, MeteringPasses: 9,
		HeartbeatNodes: 20_000, HeartbeatClients: 64, HeartbeatRequests: 40_000,
		Clients: 16, LoadRequests: 2000, LatencyRuns: 21,
		Seed: 1,
	}
}

// Run measures every figure on every engine of cfg into one report.
func Run(ctx context.Context, cfg Config) *Report {
	rep := &Report{Engines: cfg.Engines}
	// Figure 10's Kubernetes cluster is made once, for every engine.
	kube := &kubeCluster{}
	defer kube.close()
	for i, e := range cfg.Engines {
		r := &runner{cfg: cfg, engine: e, rep: rep, index: i, kube: kube}
		r.run(ctx)
	}
	return rep
}

type runner struct {
	cfg    Config
	engine store.Dialect
	rep    *Report
	index  int          // the engine's place in cfg.Engines
	kube   *kubeCluster // figure 10's, shared by the engines
}

func (r *runner) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, "[%s %s] %s\n", time.Now().Format("15:04:05"), engineName(r.engine), fmt.Sprintf(format, args...))
	}
}

// figure is one figure: the rows it fills and how.
type figure struct {
	num  int
	rows []string
	run  func(ctx context.Context) error
}

// fail fills every row of f that has no value on this engine yet with the
// error, so a broken figure shows in the table instead of a number.
func (r *runner) fail(f figure, err error) {
	v := "error: " + err.Error()
	r.logf("figure %d: %v", f.num, err)
	for _, label := range f.rows {
		x := r.rep.row(f.num, label)
		if x.Value[r.engine] == "" {
			x.Value[r.engine] = v
		}
	}
}

// skipped is a figure's error where what it needs is not on this machine
// (figure 10 without kube-apiserver): its rows stay empty, and its
// section of BENCHMARKS.md is left as it was.
type skipped struct{ why error }

func (s *skipped) Error() string { return "skipped: " + s.why.Error() }

func (c Config) wants(fig int) bool { return len(c.Figures) == 0 || c.Figures[fig] }

func (r *runner) do(ctx context.Context, f figure) {
	if !r.cfg.wants(f.num) {
		return
	}
	if r.cfg.ProfileDir != "" && f.num != 7 {
		stop, err := startProfile(filepath.Join(r.cfg.ProfileDir, fmt.Sprintf("fig%d-%s.pprof", f.num, r.engine)))
		if err != nil {
			r.fail(f, err)
			return
		}
		defer stop()
	}
	start := time.Now()
	err := f.run(ctx)
	var skip *skipped
	if errors.As(err, &skip) {
		r.logf("figure %d skipped: %v", f.num, skip.why)
		return
	}
	if err != nil {
		r.fail(f, err)
		return
	}
	r.logf("figure %d done in %s", f.num, time.Since(start).Round(time.Millisecond))
}

func (r *runner) run(ctx context.Context) {
	// One database for the fleet: figure 7 loads it, figures 1, 2, 4 and 6 read it.
	fl := &fleetRun{runner: r}
	for _, f := range []figure{
		{7, []string{rowLoad}, fl.loadFleet},
		{1, []string{rowFlat, rowNested, rowObjects, rowPerFlat, rowPerNested}, fl.nestedVsFlat},
		{2, []string{rowStmts50, rowStmts500}, fl.statements},
		{4, []string{rowRPSNested, rowRPSRest}, fl.throughput},
		{6, []string{rowMetrics}, fl.metricsRead},
	} {
		if f.num == 7 && !r.cfg.wants(7) && (r.cfg.wants(1) || r.cfg.wants(2) || r.cfg.wants(4) || r.cfg.wants(6)) {
			if err := f.run(ctx); err != nil {
				r.fail(f, err)
			}
			continue
		}
		if f.num != 7 && fl.srv == nil {
			if !r.cfg.wants(f.num) {
				continue
			}
			r.fail(f, errors.New("no fleet: its load failed"))
			continue
		}
		r.do(ctx, f)
	}
	fl.close()
	r.do(ctx, figure{3, []string{rowPage, rowPageSQL, rowPageRatio, rowCount, rowCountSQL, rowCountRatio}, r.bigPods})
	r.do(ctx, figure{5, []string{rowRestarts, rowInvariant}, r.restarts})
	r.do(ctx, figure{8, []string{rowLiveRate, rowLiveLatency, rowLiveMemory}, r.liveFigure})
	r.do(ctx, figure{9, []string{rowCreates, rowSchedulerPass, rowQueueLatency, rowCreateInvar}, r.creates})
	r.do(ctx, figure{ClusterFigure, []string{rowClusterSync, rowClusterSyncCPU, rowClusterRate, rowClusterDeltaCPU, rowClusterLag, rowClusterConnector}, r.clusterFigure})
	r.do(ctx, figure{MeteringFigure, []string{rowMeteringPass, rowMeteringRecords}, r.meteringFigure})
	r.do(ctx, figure{HeartbeatFigure, []string{rowHeartbeatRate, rowHeartbeatStmts}, r.heartbeatFigure})
}

// Server is the whole HTTP surface over one database, on a loopback port.
type Server struct {
	DB     *DB
	Stmts  *sqlcount.Counter
	HTTP   *httptest.Server
	Client *Client
}

// Serve starts a server on db; token is the key its Client uses.
func Serve(db *DB, cfg Config, token string) (*Server, error) {
	stmts, err := sqlcount.Register(db.DB)
	if err != nil {
		return nil, err
	}
	// The load clients are one key measuring the server's capacity: the
	// whole budget is theirs (a credential's default share is half the cores).
	// The services and loaders are built as the command builds them.
	svc := services.New(db.Store, services.Config{})
	h := httpapi.New(httpapi.Config{Services: svc, Loaders: loaders.NewFactory(db.Store, svc.Metering, cfg.LoaderWait),
		Database: db.Store, CredentialConcurrency: 64})
	srv := httptest.NewServer(h)
	return &Server{DB: db, Stmts: stmts, HTTP: srv,
		Client: &Client{Base: srv.URL, Token: token, HTTP: NewHTTPClient(max(cfg.Clients, 1))}}, nil
}

// Close stops the server and drops its database.
func (s *Server) Close() {
	s.HTTP.Close()
	s.DB.Drop()
}

func startProfile(path string) (stop func(), err error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
