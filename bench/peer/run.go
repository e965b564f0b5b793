package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gpugraph/bench"
	"gpugraph/bench/fleetgen"
	"gpugraph/bench/proc"
	"gpugraph/internal/dataset"
	"gpugraph/internal/store"
)

// Config sizes a run; Defaults are the issue's.
type Config struct {
	PostgresURL string // the server to make the fleet's database on
	Server      string // the gpugraph binary

	Nodes, Pods, Tenants, VMsPerNode int

	Warmup    int           // untimed rounds before the latency runs
	Runs      int           // latency: interleaved single-client runs per query and server
	Rounds    int           // requests/s: interleaved rounds per query, clients and server
	RoundTime time.Duration // length of one requests/s round
	Clients   []int

	Only map[string]bool // query names to run (all when empty)
	Log  io.Writer
}

// Defaults are the sizes and rounds of the issue.
func Defaults() Config {
	return Config{Nodes: 1500, Pods: 30000, Tenants: 4, VMsPerNode: 1,
		Warmup: 5, Runs: 40, Rounds: 6, RoundTime: 10 * time.Second, Clients: []int{8, 16}}
}

// Side is one server's figures for one query.
type Side struct {
	Latency time.Duration     // median of the single-client runs
	CPU     time.Duration     // server process CPU per request at one client
	DBCPU   time.Duration     // its PostgreSQL backends' CPU per request at one client
	RPS     map[int]float64   // clients → median requests/s of the rounds
	rounds  map[int][]float64 // clients → requests/s of each round
	runs    []time.Duration   // latency of each run
	cpu     [2]time.Duration  // summed over the runs: server, backends
}

// Result is one query on both servers.
type Result struct {
	Query      Query
	Ours, Peer *Side
}

// Report is a whole run.
type Report struct {
	Results  []*Result
	Machine  bench.Machine
	Node     string // Node.js version
	Started  time.Time
	Took     time.Duration
	Objects  map[string]int // query → JSON objects in gpugraph's answer
	Warnings []string
}

type server struct {
	name   string
	proc   *proc.Process
	url    string
	token  string
	app    string // application_name of its PostgreSQL connections
	client *http.Client
}

// post runs query and answers its data; GraphQL errors are errors.
func (s *server) post(ctx context.Context, query string) (json.RawMessage, error) {
	body, _ := json.Marshal(map[string]string{"query": query})
	req, e := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if e != nil {
		return nil, e
	}
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, e := s.client.Do(req)
	if e != nil {
		return nil, e
	}
	defer resp.Body.Close()
	b, e := io.ReadAll(resp.Body)
	if e != nil {
		return nil, e
	}
	var a struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if e := json.Unmarshal(b, &a); e != nil {
		return nil, fmt.Errorf("%s: answer %d is not JSON: %.200s", s.name, resp.StatusCode, b)
	}
	if len(a.Errors) > 0 {
		return nil, fmt.Errorf("%s: %s", s.name, a.Errors[0].Message)
	}
	return a.Data, nil
}

// Run loads the fleet, starts both servers and measures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		}
	}
	rep := &Report{Started: time.Now().UTC(), Objects: map[string]int{}}
	server, e := proc.Binary(cfg.Server)
	if e != nil {
		return nil, e
	}
	cfg.Server = server
	cache, e := CacheDir()
	if e != nil {
		return nil, e
	}
	cli, e := Install(cache, logf)
	if e != nil {
		return nil, e
	}
	if out, e := exec.Command("node", "--version").Output(); e == nil {
		rep.Node = strings.TrimSpace(string(out))
	}
	rep.Machine = bench.Describe(ctx, bench.Config{PostgresURL: cfg.PostgresURL, Engines: []store.Dialect{store.Postgres}})

	db, e := bench.FreshDB(ctx, store.Postgres, cfg.PostgresURL)
	if e != nil {
		return nil, e
	}
	defer db.Drop()
	if e := loadFleet(ctx, cfg, db, logf); e != nil {
		return nil, e
	}

	tmp, e := os.MkdirTemp("", "gpugraph-peer-")
	if e != nil {
		return nil, e
	}
	defer os.RemoveAll(tmp)
	ours, peer, e := startServers(ctx, cfg, cli, db.URL, tmp)
	if ours != nil {
		defer ours.proc.Stop()
	}
	if peer != nil {
		defer peer.proc.Stop()
	}
	if e != nil {
		return nil, e
	}
	logf("gpugraph (pid %d) and PostGraphile %s (pid %d) answer", ours.proc.Pid(), Version, peer.proc.Pid())

	for _, q := range Queries() {
		if len(cfg.Only) > 0 && !cfg.Only[q.Name] {
			continue
		}
		a, e := ours.post(ctx, q.Ours)
		if e != nil {
			return nil, fmt.Errorf("%s: %w", q.Name, e)
		}
		b, e := peer.post(ctx, q.Peer)
		if e != nil {
			return nil, fmt.Errorf("%s: %w", q.Name, e)
		}
		if ok, why := q.Same(a, b); !ok {
			return nil, fmt.Errorf("%s: the two answers differ: %s", q.Name, why)
		}
		rep.Objects[q.Name] = objects(a)
		logf("%s: both answers hold the same objects (%d JSON objects)", q.Name, rep.Objects[q.Name])
		rep.Results = append(rep.Results, &Result{Query: q, Ours: newSide(), Peer: newSide()})
	}

	if e := latency(ctx, cfg, db, rep, ours, peer, logf); e != nil {
		return nil, e
	}
	if e := throughput(ctx, cfg, rep, ours, peer, logf); e != nil {
		return nil, e
	}
	rep.Took = time.Since(rep.Started)
	return rep, nil
}

func newSide() *Side { return &Side{RPS: map[int]float64{}, rounds: map[int][]float64{}} }

func loadFleet(ctx context.Context, cfg Config, db *bench.DB, logf func(string, ...any)) error {
	file := fleetgen.Generate(fleetgen.Options{Nodes: cfg.Nodes, Pods: cfg.Pods, Tenants: cfg.Tenants, VMsPerNode: cfg.VMsPerNode, VMGPUs: 2, Seed: 1})
	b, e := json.Marshal(file)
	if e != nil {
		return e
	}
	start := time.Now()
	stats, e := dataset.LoadFile(ctx, db.Store, b)
	if e != nil {
		return fmt.Errorf("load the fleet: %w", e)
	}
	// Autovacuum may be off or late: neither server should plan without
	// statistics.
	if e := db.WithContext(ctx).Exec("VACUUM (ANALYZE)").Error; e != nil {
		return e
	}
	logf("loaded %d nodes, %d GPUs, %d pods, %d VMs and analyzed in %s", stats.Nodes, stats.GPUs, stats.Pods, len(file.VMs), time.Since(start).Round(time.Millisecond))
	return nil
}

func startServers(ctx context.Context, cfg Config, cli, dbURL, tmp string) (ours, peer *server, e error) {
	if e := os.WriteFile(filepath.Join(tmp, "postgraphile.tags.json5"), []byte(TagsFile), 0o644); e != nil {
		return nil, nil, e
	}
	// Idle connections close before Node.js's 5 s keep-alive timeout would, so
	// a reused one is never the one PostGraphile is closing.
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 64, IdleConnTimeout: 2 * time.Second}}
	pOurs, e := proc.FreePort()
	if e != nil {
		return nil, nil, e
	}
	p, e := proc.Start("gpugraph", filepath.Join(tmp, "gpugraph.log"), tmp, nil, cfg.Server,
		"--database-url", bench.WithApplicationName(dbURL, "peer-gpugraph"), "--addr", "127.0.0.1:"+strconv.Itoa(pOurs),
		"--demo=false", "--heartbeat-grace", "10000h",
		// PostGraphile has no rate limits or shares; one load client is one key.
		"--rate-limit", "0", "--credential-concurrency", "64")
	if e != nil {
		return nil, nil, e
	}
	ours = &server{name: "gpugraph", proc: p, url: fmt.Sprintf("http://127.0.0.1:%d/graphql", pOurs), token: fleetgen.Token(0), app: "peer-gpugraph", client: client}
	if e := p.WaitReady(ctx, proc.HTTPOK(client, fmt.Sprintf("http://127.0.0.1:%d/healthz", pOurs), "")); e != nil {
		return ours, nil, e
	}
	pPeer, e := proc.FreePort()
	if e != nil {
		return ours, nil, e
	}
	p, e = proc.Start("PostGraphile", filepath.Join(tmp, "postgraphile.log"), tmp, []string{"NODE_ENV=production"}, "node", cli,
		"-c", bench.WithApplicationName(dbURL, "peer-postgraphile"), "--schema", "public", "--classic-ids", "--host", "127.0.0.1", "--port", strconv.Itoa(pPeer),
		"--disable-default-mutations", "--disable-query-log", "--disable-graphiql")
	if e != nil {
		return ours, nil, e
	}
	peer = &server{name: "PostGraphile", proc: p, url: fmt.Sprintf("http://127.0.0.1:%d/graphql", pPeer), app: "peer-postgraphile", client: client}
	return ours, peer, p.WaitReady(ctx, proc.HTTPOK(client, peer.url, `{"query":"{ __typename }"}`))
}

// objects counts the JSON objects of an answer.
func objects(data json.RawMessage) int {
	n := 0
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		t, e := dec.Token()
		if e != nil {
			return n
		}
		if t == json.Delim('{') {
			n++
		}
	}
}

// latency runs every query on both servers once per round, the order
// alternating, one client: medians, and CPU per request.
func latency(ctx context.Context, cfg Config, db *bench.DB, rep *Report, ours, peer *server, logf func(string, ...any)) error {
	for r := -cfg.Warmup; r < cfg.Runs; r++ {
		procs := map[*server][]int{ours: bench.Backends(ctx, db, ours.app), peer: bench.Backends(ctx, db, peer.app)}
		for _, res := range rep.Results {
			for _, o := range interleaved(r, ours, peer, res) {
				c0, d0 := proc.SumCPU([]int{o.s.proc.Pid()}), proc.SumCPU(procs[o.s])
				t := time.Now()
				if _, e := o.s.post(ctx, o.q); e != nil {
					return fmt.Errorf("%s: %w", res.Query.Name, e)
				}
				took := time.Since(t)
				c1, d1 := proc.SumCPU([]int{o.s.proc.Pid()}), proc.SumCPU(procs[o.s])
				if r >= 0 {
					o.side.runs = append(o.side.runs, took)
					o.side.cpu[0] += c1 - c0
					o.side.cpu[1] += d1 - d0
				}
			}
		}
	}
	for _, res := range rep.Results {
		for _, s := range []*Side{res.Ours, res.Peer} {
			s.Latency = median(s.runs)
			n := time.Duration(max(len(s.runs), 1))
			s.CPU, s.DBCPU = s.cpu[0]/n, s.cpu[1]/n
		}
		logf("%s latency: gpugraph %s, PostGraphile %s (%.2f)", res.Query.Name, ms(res.Ours.Latency), ms(res.Peer.Latency), ratio(res.Ours.Latency, res.Peer.Latency))
	}
	return nil
}

// turn is one server's run of one query in a round.
type turn struct {
	s    *server
	q    string
	side *Side
}

// interleaved is round r's order of the two servers on res: gpugraph first
// in even rounds, PostGraphile first in odd ones, so neither always runs on
// a cache the other warmed.
func interleaved(r int, ours, peer *server, res *Result) []turn {
	order := []turn{{ours, res.Query.Ours, res.Ours}, {peer, res.Query.Peer, res.Peer}}
	if r%2 != 0 {
		order[0], order[1] = order[1], order[0]
	}
	return order
}

// throughput runs closed loops of each client count for RoundTime, per
// query, the servers alternating; the median round is the figure.
func throughput(ctx context.Context, cfg Config, rep *Report, ours, peer *server, logf func(string, ...any)) error {
	for _, c := range cfg.Clients {
		for r := 0; r < cfg.Rounds; r++ {
			for _, res := range rep.Results {
				for _, o := range interleaved(r, ours, peer, res) {
					rps, failed, first := drive(ctx, c, cfg.RoundTime, func(ctx context.Context) error {
						_, e := o.s.post(ctx, o.q)
						return e
					})
					if failed > 0 {
						return fmt.Errorf("%s at %d clients on %s: %d requests failed, first: %w", res.Query.Name, c, o.s.name, failed, first)
					}
					o.side.rounds[c] = append(o.side.rounds[c], rps)
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		for _, res := range rep.Results {
			res.Ours.RPS[c], res.Peer.RPS[c] = medianF(res.Ours.rounds[c]), medianF(res.Peer.rounds[c])
			logf("%s at %d clients: gpugraph %.0f/s, PostGraphile %.0f/s (%.2f)", res.Query.Name, c, res.Ours.RPS[c], res.Peer.RPS[c], res.Ours.RPS[c]/max(res.Peer.RPS[c], 1e-9))
		}
	}
	return nil
}

// drive runs do from clients goroutines in a closed loop: each starts
// requests until d has passed, and every request started is waited for and
// counted. It answers requests/s over the whole time and the failures.
func drive(ctx context.Context, clients int, d time.Duration, do func(context.Context) error) (float64, int, error) {
	var done, failed atomic.Int64
	var first atomic.Value
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if e := do(ctx); e != nil {
					if failed.Add(1) == 1 {
						first.Store(e)
					}
					continue
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	fe, _ := first.Load().(error)
	return float64(done.Load()) / time.Since(start).Seconds(), int(failed.Load()), fe
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func medianF(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
