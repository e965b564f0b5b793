package abuse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"gpugraph/bench"
	"gpugraph/bench/proc"
	"gpugraph/internal/store"
)

// env is one engine's run: its database and fixture, the servers now
// started on it, and the measuring.
type env struct {
	cfg    Config
	engine store.Dialect
	db     *bench.DB
	fx     *fixture
	dir    string // the servers' working directory and logs
	reps   []*replica
	http   *http.Client // the attacker's connections
	// victimHTTP holds the victim's connections apart from the attacker's.
	victimHTTP *http.Client
	dirty      bool // a phase was cut with requests in flight: restart before the next
	starts     int
	logf       func(string, ...any)
}

// replica is one server process.
type replica struct {
	proc *proc.Process
	base string // http://127.0.0.1:port
	app  string // application_name of its PostgreSQL connections
}

func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 512
	t.IdleConnTimeout = 30 * time.Second
	// A redirect is an answer to judge, not to follow.
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// start ends the servers running now and starts fresh ones as main starts
// them: the address, the database, and no demo (the fixture is there).
func (e *env) start(ctx context.Context) error {
	e.stop()
	e.http.CloseIdleConnections()
	e.victimHTTP.CloseIdleConnections()
	e.starts++
	for i := 0; i < Replicas(e.engine); i++ {
		port, err := proc.FreePort()
		if err != nil {
			return err
		}
		app := fmt.Sprintf("gpugraph-abuse-%d", i)
		// GOGC empty: the server's own default, whatever this process has.
		p, err := proc.Start(fmt.Sprintf("gpugraph replica %d", i), filepath.Join(e.dir, fmt.Sprintf("server-%03d-%d.log", e.starts, i)),
			e.dir, []string{"GOGC="}, e.cfg.Server,
			"--addr", "127.0.0.1:"+strconv.Itoa(port), "--database-url", bench.WithApplicationName(e.db.URL, app), "--demo=false")
		if err != nil {
			return err
		}
		r := &replica{proc: p, base: fmt.Sprintf("http://127.0.0.1:%d", port), app: app}
		e.reps = append(e.reps, r)
		if err := p.WaitReady(ctx, proc.HTTPOK(e.http, r.base+"/healthz", "")); err != nil {
			return err
		}
	}
	// Each holds its share of the rate limits once it has counted the
	// others (a replica counts the ones started after it at its next
	// heartbeat, within 2 s).
	for _, r := range e.reps {
		if err := e.waitReplicas(ctx, r); err != nil {
			return err
		}
	}
	e.dirty = false
	return nil
}

// waitReplicas waits until r counts every server of e live
// (gpugraph_replicas in its /metrics).
func (e *env) waitReplicas(ctx context.Context, r *replica) error {
	want := fmt.Sprintf("\ngpugraph_replicas %d\n", len(e.reps))
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/metrics", nil)
		if err != nil {
			return err
		}
		if resp, err := e.http.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), want) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s never counted %d replicas live", r.base, len(e.reps))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop kills the servers: what they were doing is of no interest now.
// Their PostgreSQL backends are ended too: a statement a killed server
// left running would go on costing CPU in the next attack's figures.
func (e *env) stop() {
	for _, r := range e.reps {
		r.proc.Kill()
		bench.TerminateBackends(context.Background(), e.db, r.app)
	}
	// A killed server leaves its row in server_replicas, which the next
	// servers would count as live for a few heartbeats, each holding less
	// than its share of the rate limits: every server is gone now.
	if len(e.reps) > 0 && e.db != nil {
		if _, err := e.db.ForgetReplicasBefore(context.Background(), store.Now().Add(time.Hour)); err != nil {
			e.logf("forgetting the killed servers' heartbeats: %v", err)
		}
	}
	e.reps = nil
}

// ready restarts the servers when a phase left them busy.
func (e *env) ready(ctx context.Context) error {
	if e.dirty || len(e.reps) == 0 {
		return e.start(ctx)
	}
	return nil
}

// base is the address of the replica that serves request i: requests
// spread over every replica.
func (e *env) base(i int) string { return e.reps[i%len(e.reps)].base }

// do sends one request to replica i%n over the attacker's connections
// and reads the answer (at most 64 MiB).
func (e *env) do(ctx context.Context, i int, method, path, token string, body []byte, header ...string) (int, []byte, error) {
	return e.send(e.http, ctx, i, method, path, token, body, header...)
}

// send is do over client's connections.
func (e *env) send(client *http.Client, ctx context.Context, i int, method, path, token string, body []byte, header ...string) (int, []byte, error) {
	status, _, b, err := e.exchange(client, ctx, i, method, path, token, body, header...)
	return status, b, err
}

// exchange is send that also answers the answer's headers.
func (e *env) exchange(client *http.Client, ctx context.Context, i int, method, path, token string, body []byte, header ...string) (int, http.Header, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.base(i)+path, r)
	if err != nil {
		return 0, nil, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for j := 0; j+1 < len(header); j += 2 {
		req.Header.Set(header[j], header[j+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, resp.Header, b, err
}

// graphql posts query with variables to replica i%n as token.
func (e *env) graphql(ctx context.Context, i int, token, query string, vars map[string]any) (int, []byte, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return e.do(ctx, i, http.MethodPost, "/graphql", token, body)
}

// answer is the Statuses key of a request's outcome.
func answer(status int, err error) string {
	switch {
	case err == nil:
		return strconv.Itoa(status)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "open"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "reset"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "open"
	}
	return "error"
}

// gqlCode is the extensions.code of a GraphQL answer's first error, and
// its message.
func gqlCode(body []byte) (code, message string) {
	var a struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &a) != nil || len(a.Errors) == 0 {
		return "", ""
	}
	c, _ := a.Errors[0].Extensions["code"].(string)
	return c, a.Errors[0].Message
}

// snapshot is the servers' CPU and memory at one instant.
type snapshot struct {
	cpu     time.Duration         // the server processes'
	backend map[int]time.Duration // each PostgreSQL backend's, by pid
	mem     []proc.Mem
}

func (e *env) snap(ctx context.Context) snapshot {
	s := snapshot{backend: map[int]time.Duration{}}
	for _, r := range e.reps {
		c, _ := proc.CPU(r.proc.Pid())
		s.cpu += c
		for _, pid := range bench.Backends(ctx, e.db, r.app) {
			if c, err := proc.CPU(pid); err == nil {
				s.backend[pid] = c
			}
		}
		m, _ := proc.Memory(r.proc.Pid())
		s.mem = append(s.mem, m)
	}
	return s
}

// cpuSince is the CPU spent between before and s: the servers' and their
// backends' (a backend that started since counts whole, one that ended is
// lost).
func (s snapshot) cpuSince(before snapshot) time.Duration {
	d := s.cpu - before.cpu
	for pid, c := range s.backend {
		d += c - before.backend[pid]
	}
	return d
}

// figures are what one measured phase cost.
type figures struct {
	cpu      time.Duration
	peak     int64 // peak resident memory grown, summed over the replicas
	took     time.Duration
	timedOut bool
}

// measure runs fn within box and reads what it cost: CPU
// between the snapshots around it, and each replica's peak resident set
// (VmHWM reset at the start, and sampled every 20 ms where the reset is
// refused) over its resident set at the start.
func (e *env) measure(ctx context.Context, box time.Duration, fn func(ctx context.Context)) figures {
	before := e.snap(ctx)
	reset := true
	for _, r := range e.reps {
		reset = reset && proc.ResetPeak(r.proc.Pid()) == nil
	}
	sampled := make([]int64, len(e.reps))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			for i, r := range e.reps {
				if m, err := proc.Memory(r.proc.Pid()); err == nil {
					sampled[i] = max(sampled[i], m.RSS)
				}
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	pctx, cancel := context.WithTimeout(ctx, box)
	start := time.Now()
	fn(pctx)
	f := figures{took: time.Since(start), timedOut: errors.Is(pctx.Err(), context.DeadlineExceeded)}
	cancel()
	close(stop)
	wg.Wait()
	after := e.snap(ctx)
	f.cpu = after.cpuSince(before)
	for i := range e.reps {
		peak := sampled[i]
		if reset && i < len(after.mem) {
			peak = max(peak, after.mem[i].Peak)
		}
		if i < len(before.mem) {
			f.peak += max(peak-before.mem[i].RSS, 0)
		}
	}
	if f.timedOut {
		e.dirty = true
	}
	return f
}

// record sets r's per-request figures from a phase of requests requests,
// inFlight at once, that cost cpu, unless an earlier phase set them.
func (r *Result) record(f figures, cpu time.Duration, requests, inFlight int) {
	r.recordEach(cpu/time.Duration(max(requests, 1)), f.peak/int64(max(inFlight, 1)), f.timedOut, requests, inFlight)
}

// recordEach sets r's figures from one request's CPU and memory, unless an
// earlier phase set them; lower says a phase ran out of its box.
func (r *Result) recordEach(cpu time.Duration, memory int64, lower bool, requests, inFlight int) {
	r.Lower = r.Lower || lower
	if r.measured {
		return
	}
	r.measured = true
	r.Requests, r.InFlight, r.CPU, r.Memory = requests, inFlight, cpu, memory
}

// alone measures requests requests one after another, each alone:
// fn(ctx, i) sends request i. The figures are the costliest request's.
func (e *env) alone(ctx context.Context, r *Result, requests int, fn func(ctx context.Context, i int)) error {
	var worst figures
	for i := 0; i < requests; i++ {
		if err := e.ready(ctx); err != nil {
			return err
		}
		f := e.measure(ctx, e.cfg.Box, func(ctx context.Context) { fn(ctx, i) })
		worst.cpu, worst.peak = max(worst.cpu, f.cpu), max(worst.peak, f.peak)
		worst.timedOut = worst.timedOut || f.timedOut
	}
	r.recordEach(worst.cpu, worst.peak, worst.timedOut, requests, 1)
	return nil
}

// set measures an attack of requests requests, inFlight at once, with no
// victim, within the time box.
func (e *env) set(ctx context.Context, r *Result, requests, inFlight int, fn func(ctx context.Context)) error {
	return e.setWithin(ctx, e.cfg.Box, r, requests, inFlight, fn)
}

// setWithin is set with a box of its own, for an attack paced to take
// longer than the default one.
func (e *env) setWithin(ctx context.Context, box time.Duration, r *Result, requests, inFlight int, fn func(ctx context.Context)) error {
	if err := e.ready(ctx); err != nil {
		return err
	}
	f := e.measure(ctx, box, fn)
	r.record(f, f.cpu, requests, inFlight)
	return nil
}

// noisy measures the victim's latency alone for the baseline, then runs
// fn (requests requests, inFlight at once) while the victim keeps its
// pace, for at least the baseline's length, then (unless the attack ran
// out of its box) the victim alone again. The attack's CPU is the phase's
// less what the victim's requests cost at baseline.
func (e *env) noisy(ctx context.Context, r *Result, v victimLoad, requests, inFlight int, fn func(ctx context.Context)) error {
	return e.noisyWithin(ctx, e.cfg.Box, r, v, func() int { return requests }, inFlight, fn)
}

// flood is the noisy-neighbour attack of a key that keeps n requests in
// flight for the whole attack window: each of n workers sends its next
// request (send(ctx, i), i counting every request sent) as soon as its
// last is answered, never faster than the key's rate limit would let
// through (KeyPace a second in all after a burst of at most KeyBurst:
// the limits are the deployment's, however many replicas), so what is
// measured is what the requests cost, not how cheap a 429 is.
func (e *env) flood(ctx context.Context, r *Result, n int, send func(ctx context.Context, i int)) error {
	var sent atomic.Int64
	pace := rate.NewLimiter(KeyPace, min(n, KeyBurst))
	return e.noisyWithin(ctx, e.cfg.Box, r, e.victimQuery(), func() int { return int(sent.Load()) }, n, func(ctx context.Context) {
		wait, cancel := context.WithTimeout(ctx, e.cfg.Window)
		defer cancel()
		parallel(n, func(int) {
			for pace.Wait(wait) == nil {
				send(ctx, int(sent.Add(1)))
			}
		})
	})
}

// noisyWithin is noisy with a box of its own and the count of requests
// read once the attack is over.
func (e *env) noisyWithin(ctx context.Context, box time.Duration, r *Result, v victimLoad, requests func() int, inFlight int, fn func(ctx context.Context)) error {
	if err := e.ready(ctx); err != nil {
		return err
	}
	// The attacker's connections are open before the baseline, as a
	// client's would be: setting up a hundred at once is not the attack.
	parallel(min(inFlight, 256), func(i int) {
		status, _, err := e.do(ctx, i, http.MethodGet, "/healthz", "", nil)
		if err != nil || status != http.StatusOK {
			e.logf("warming the attacker's connection %d: %d %v", i, status, err)
		}
	})
	// A fresh server opens its database connections on the first
	// requests: those are not the victim's baseline.
	warm := make(chan struct{})
	time.AfterFunc(v.warmup, func() { close(warm) })
	e.victimLoop(ctx, v, warm)
	b0 := e.snap(ctx)
	stop := make(chan struct{})
	time.AfterFunc(e.cfg.Baseline, func() { close(stop) })
	baseline := e.victimLoop(ctx, v, stop)
	perVictim := e.snap(ctx).cpuSince(b0) / time.Duration(max(baseline.sent(), 1))

	var during Latencies
	f := e.measure(ctx, box, func(pctx context.Context) {
		stop := make(chan struct{})
		got := make(chan Latencies, 1)
		go func() { got <- e.victimLoop(ctx, v, stop) }()
		start := time.Now()
		fn(pctx)
		if rest := e.cfg.Baseline - time.Since(start); rest > 0 {
			select {
			case <-time.After(rest):
			case <-ctx.Done():
			}
		}
		close(stop)
		during = <-got
	})
	r.Victim = &Victim{What: v.what, Baseline: baseline, During: during}
	if !f.timedOut {
		stop := make(chan struct{})
		time.AfterFunc(e.cfg.Baseline, func() { close(stop) })
		after := e.victimLoop(ctx, v, stop)
		r.Victim.After = &after
	}
	r.record(f, max(f.cpu-perVictim*time.Duration(during.sent()), 0), requests(), inFlight)
	if during.First != "" {
		e.logf("%s: the victim's first error during the attack: %s", r.Attack.Name, during.First)
	}
	return nil
}

func (l Latencies) sent() int { return len(l.OK) + l.Errors }

// victimLoad is what the victim does, at its pace.
type victimLoad struct {
	what   string
	rate   float64       // requests per second
	warmup time.Duration // of requests before the baseline, not counted
	do     func(ctx context.Context, i int) error
}

// victimTimeout bounds each of the victim's requests.
const victimTimeout = 10 * time.Second

// victimLoop sends the victim's requests at its rate, each on its own
// (an open loop: a slow answer does not slow the next request), until
// stop, and waits for the last ones.
func (e *env) victimLoop(ctx context.Context, v victimLoad, stop <-chan struct{}) Latencies {
	var (
		mu  sync.Mutex
		out Latencies
		wg  sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if out.Errors++; out.First == "" {
			out.First = err.Error()
		}
	}
	sem := make(chan struct{}, 256)
	t := time.NewTicker(time.Duration(float64(time.Second) / v.rate))
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
		case <-ctx.Done():
		case <-t.C:
			select {
			case sem <- struct{}{}:
			default:
				fail(errors.New("256 of the victim's requests wait unanswered"))
				continue
			}
			wg.Add(1)
			go func(i int) {
				defer func() { <-sem; wg.Done() }()
				rctx, cancel := context.WithTimeout(ctx, victimTimeout)
				defer cancel()
				start := time.Now()
				err := v.do(rctx, i)
				d := time.Since(start)
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				out.OK = append(out.OK, d)
				mu.Unlock()
			}(i)
			continue
		}
		break
	}
	wg.Wait()
	sort.Slice(out.OK, func(i, j int) bool { return out.OK[i] < out.OK[j] })
	return out
}

// victimQuery is the victim's console read: a page of its VMs with their
// nodes, over GraphQL, 200 with no error.
func (e *env) victimQuery() victimLoad {
	body, _ := json.Marshal(map[string]string{"query": `{ vms(limit: 20) { total vms { id name status node { name status } } } }`})
	return victimLoad{what: "vms(limit: 20) with nodes, GraphQL", rate: e.cfg.VictimRate, warmup: time.Second,
		do: func(ctx context.Context, i int) error {
			status, body, err := e.send(e.victimHTTP, ctx, i, http.MethodPost, "/graphql", e.fx.victimKey, body)
			if err != nil {
				return err
			}
			if code, msg := gqlCode(body); status != http.StatusOK || code != "" {
				return fmt.Errorf("%d %s %s", status, code, msg)
			}
			return nil
		}}
}

// victimRestart is the victim restarting its running VM (rebooted in
// place) once a second: its restart budget is one a second.
func (e *env) victimRestart() victimLoad {
	return victimLoad{what: "POST /v1/vms/{id}/restart of a running VM", rate: 1, warmup: 2 * time.Second,
		do: func(ctx context.Context, i int) error {
			status, body, err := e.send(e.victimHTTP, ctx, i, http.MethodPost, "/v1/vms/"+e.fx.victimVM+"/restart", e.fx.victimKey, nil)
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("%d %.200s", status, body)
			}
			return nil
		}}
}

// retainedHeap is the heap each replica's last collection kept, summed:
// the heap goal (go_memstats_next_gc_bytes) over 1 + GOGC/100
// (go_gc_gogc_percent), from /metrics.
func (e *env) retainedHeap(ctx context.Context) (int64, error) {
	var total int64
	for i := range e.reps {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		status, body, err := e.do(ctx, i, http.MethodGet, "/metrics", "", nil)
		cancel()
		if err != nil || status != http.StatusOK {
			return 0, fmt.Errorf("/metrics: %d %v", status, err)
		}
		goal, gogc := metricValue(body, "go_memstats_next_gc_bytes"), metricValue(body, "go_gc_gogc_percent")
		if goal <= 0 || gogc <= 0 {
			return 0, errors.New("/metrics has no go_memstats_next_gc_bytes or go_gc_gogc_percent")
		}
		total += int64(goal / (1 + gogc/100))
	}
	return total, nil
}

// metricValue is the value of an exposition's unlabelled series name, 0
// when absent.
func metricValue(body []byte, name string) float64 {
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// logErrors counts the lines of level ERROR and the panics the servers
// logged since the offsets (each log's size when the phase began).
func (e *env) logErrors(offsets []int64) int {
	n := 0
	for i, r := range e.reps {
		b, err := os.ReadFile(r.proc.Log)
		if err != nil || i >= len(offsets) || int64(len(b)) < offsets[i] {
			continue
		}
		for _, line := range strings.Split(string(b[offsets[i]:]), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, "panic") {
				n++
			}
		}
	}
	return n
}

// logOffsets are the servers' log sizes now.
func (e *env) logOffsets() []int64 {
	var out []int64
	for _, r := range e.reps {
		st, err := os.Stat(r.proc.Log)
		if err != nil {
			out = append(out, 0)
			continue
		}
		out = append(out, st.Size())
	}
	return out
}
