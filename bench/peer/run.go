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

	Peers []Peer // the PostGraphile releases beside gpugraph
	// NoGzip makes the clients ask for answers uncompressed. By default they
	// accept gzip, as Go's client does: gpugraph then compresses its
	// answers (at the fastest level) and PostGraphile, which compresses
	// nothing, answers them whole.
	NoGzip bool
	Only   map[string]bool // query names to run (all when empty)
	Log    io.Writer
}

// Defaults are the sizes and rounds of the issue.
func Defaults() Config {
	return Config{Nodes: 1500, Pods: 30000, Tenants: 4, VMsPerNode: 1,
		Warmup: 5, Runs: 40, Rounds: 6, RoundTime: 10 * time.Second, Clients: []int{8, 16}, Peers: Peers()}
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

// Result is one query on every server.
type Result struct {
	Query Query
	Ours  *Side
	Peers []*Side // in Config.Peers' order
}

// side is server i's: 0 gpugraph, then the peers.
func (r *Result) side(i int) *Side {
	if i == 0 {
		return r.Ours
	}
	return r.Peers[i-1]
}

// BestLatency is the lowest of the peers' latencies.
func (r *Result) BestLatency() time.Duration {
	var best time.Duration
	for _, p := range r.Peers {
		if best == 0 || (p.Latency > 0 && p.Latency < best) {
			best = p.Latency
		}
	}
	return best
}

// BestRPS is the highest of the peers' requests/s at c clients.
func (r *Result) BestRPS(c int) float64 {
	best := 0.0
	for _, p := range r.Peers {
		best = max(best, p.RPS[c])
	}
	return best
}

// Report is a whole run.
type Report struct {
	Results []*Result
	Machine bench.Machine
	Node    map[string]string // peer name → the Node.js version it ran on
	Load    [2]float64        // the host's 1-minute load average when the measuring started and ended
	Started time.Time
	Took    time.Duration
	Objects map[string]int // query → JSON objects in gpugraph's answer
	// Memory is each server's resident memory after the load rounds,
	// gpugraph's first, then the peers' in Config.Peers' order (the issue:
	// gpugraph's stays under the lightest peer's).
	Memory   []proc.Mem
	Warnings []string
}

type server struct {
	name   string
	query  func(Query) string // the query's text as this server spells it
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
	rep := &Report{Started: time.Now().UTC(), Objects: map[string]int{}, Node: map[string]string{}}
	server, e := proc.Binary(cfg.Server)
	if e != nil {
		return nil, e
	}
	cfg.Server = server
	var peers []*Installed
	for _, p := range cfg.Peers {
		cache, e := p.CacheDir()
		if e != nil {
			return nil, e
		}
		in, e := p.Install(cache, logf)
		if e != nil {
			return nil, e
		}
		if out, e := exec.Command(in.node, "--version").Output(); e == nil {
			rep.Node[p.Name] = strings.TrimSpace(string(out))
		}
		peers = append(peers, in)
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
	servers, e := startServers(ctx, cfg, peers, db.URL, tmp)
	for _, s := range servers {
		defer s.proc.Stop()
	}
	if e != nil {
		return nil, e
	}
	for _, s := range servers {
		logf("%s answers (pid %d)", s.name, s.proc.Pid())
	}

	for _, q := range Queries() {
		if len(cfg.Only) > 0 && !cfg.Only[q.Name] {
			continue
		}
		a, e := servers[0].post(ctx, q.Ours)
		if e != nil {
			return nil, fmt.Errorf("%s: %w", q.Name, e)
		}
		res := &Result{Query: q, Ours: newSide()}
		for _, s := range servers[1:] {
			b, e := s.post(ctx, s.query(q))
			if e != nil {
				return nil, fmt.Errorf("%s: %w", q.Name, e)
			}
			if ok, why := q.Same(a, b); !ok {
				return nil, fmt.Errorf("%s: gpugraph's and %s's answers differ: %s", q.Name, s.name, why)
			}
			res.Peers = append(res.Peers, newSide())
		}
		rep.Objects[q.Name] = objects(a)
		logf("%s: every answer holds the same objects (%d JSON objects)", q.Name, rep.Objects[q.Name])
		rep.Results = append(rep.Results, res)
	}

	rep.Load[0], _ = proc.LoadAverage()
	if e := latency(ctx, cfg, db, rep, servers, logf); e != nil {
		return nil, e
	}
	if e := throughput(ctx, cfg, rep, servers, logf); e != nil {
		return nil, e
	}
	for _, s := range servers {
		m, e := proc.Memory(s.proc.Pid())
		if e != nil {
			return nil, fmt.Errorf("%s's memory: %w", s.name, e)
		}
		rep.Memory = append(rep.Memory, m)
		logf("%s: resident %d MiB after the load rounds, peak %d MiB", s.name, m.RSS>>20, m.Peak>>20)
	}
	rep.Load[1], _ = proc.LoadAverage()
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

// startServers starts gpugraph, then each peer, every one in a directory
// of its own under tmp: the servers that started, the first error.
func startServers(ctx context.Context, cfg Config, peers []*Installed, dbURL, tmp string) (servers []*server, e error) {
	// Idle connections close before Node.js's 5 s keep-alive timeout would, so
	// a reused one is never the one PostGraphile is closing.
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 64, IdleConnTimeout: 2 * time.Second,
		DisableCompression: cfg.NoGzip}}
	pOurs, e := proc.FreePort()
	if e != nil {
		return nil, e
	}
	p, e := proc.Start("gpugraph", filepath.Join(tmp, "gpugraph.log"), tmp, nil, cfg.Server,
		"--database-url", bench.WithApplicationName(dbURL, "peer-gpugraph"), "--addr", "127.0.0.1:"+strconv.Itoa(pOurs),
		"--demo=false", "--heartbeat-grace", "10000h",
		// PostGraphile has no rate limits or shares; one load client is one key.
		"--rate-limit", "0", "--credential-concurrency", "64")
	if e != nil {
		return nil, e
	}
	ours := &server{name: "gpugraph", query: func(q Query) string { return q.Ours }, proc: p, url: fmt.Sprintf("http://127.0.0.1:%d/graphql", pOurs), token: fleetgen.Token(0), app: "peer-gpugraph", client: client}
	servers = append(servers, ours)
	if e := p.WaitReady(ctx, proc.HTTPOK(client, fmt.Sprintf("http://127.0.0.1:%d/healthz", pOurs), "")); e != nil {
		return servers, e
	}
	for _, in := range peers {
		port, e := proc.FreePort()
		if e != nil {
			return servers, e
		}
		dir := filepath.Join(tmp, "postgraphile-"+in.Name)
		if e := os.MkdirAll(dir, 0o755); e != nil {
			return servers, e
		}
		if e := os.WriteFile(filepath.Join(dir, "postgraphile.tags.json5"), []byte(TagsFile), 0o644); e != nil {
			return servers, e
		}
		app := "peer-postgraphile-" + in.Name
		bin, args, env := in.Command(bench.WithApplicationName(dbURL, app), "127.0.0.1", port)
		p, e := proc.Start(in.Label(), filepath.Join(dir, "postgraphile.log"), dir, env, bin, args...)
		if e != nil {
			return servers, e
		}
		in := in
		s := &server{name: in.Label(), query: func(q Query) string { return q.PeerQuery(in.Peer) }, proc: p,
			url: fmt.Sprintf("http://127.0.0.1:%d/graphql", port), app: app, client: client}
		servers = append(servers, s)
		if e := p.WaitReady(ctx, proc.HTTPOK(client, s.url, `{"query":"{ __typename }"}`)); e != nil {
			return servers, e
		}
	}
	return servers, nil
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

// latency runs every query on every server once per round, the order
// rotating, one client: medians, and CPU per request.
func latency(ctx context.Context, cfg Config, db *bench.DB, rep *Report, servers []*server, logf func(string, ...any)) error {
	for r := -cfg.Warmup; r < cfg.Runs; r++ {
		procs := map[*server][]int{}
		for _, s := range servers {
			procs[s] = bench.Backends(ctx, db, s.app)
		}
		for _, res := range rep.Results {
			for _, o := range interleaved(r, servers, res) {
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
		line := res.Query.Name + " latency:"
		for i, s := range servers {
			x := res.side(i)
			x.Latency = median(x.runs)
			n := time.Duration(max(len(x.runs), 1))
			x.CPU, x.DBCPU = x.cpu[0]/n, x.cpu[1]/n
			line += fmt.Sprintf(" %s %s", s.name, ms(x.Latency))
		}
		logf("%s (%.2f of the best peer)", line, ratio(res.Ours.Latency, res.BestLatency()))
	}
	return nil
}

// turn is one server's run of one query in a round.
type turn struct {
	s    *server
	q    string
	side *Side
}

// interleaved is round r's order of the servers on res: each round starts
// one server further on (gpugraph first in round 0, the first peer in round
// 1, …), so none always runs on a cache another warmed.
func interleaved(r int, servers []*server, res *Result) []turn {
	n := len(servers)
	order := make([]turn, 0, n)
	for k := range n {
		i := ((r+k)%n + n) % n
		order = append(order, turn{servers[i], servers[i].query(res.Query), res.side(i)})
	}
	return order
}

// throughput runs closed loops of each client count for RoundTime, per
// query, the servers rotating; the median round is the figure.
func throughput(ctx context.Context, cfg Config, rep *Report, servers []*server, logf func(string, ...any)) error {
	for _, c := range cfg.Clients {
		for r := 0; r < cfg.Rounds; r++ {
			for _, res := range rep.Results {
				for _, o := range interleaved(r, servers, res) {
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
			line := fmt.Sprintf("%s at %d clients:", res.Query.Name, c)
			for i, s := range servers {
				x := res.side(i)
				x.RPS[c] = medianF(x.rounds[c])
				line += fmt.Sprintf(" %s %.0f/s", s.name, x.RPS[c])
			}
			logf("%s (%.2f of the best peer)", line, res.Ours.RPS[c]/max(res.BestRPS(c), 1e-9))
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
