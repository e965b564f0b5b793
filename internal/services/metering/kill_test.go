package metering_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpugraph/bench/proc"
	"gpugraph/internal/auth"
	"gpugraph/internal/services/metering"
	"gpugraph/internal/store"
	"gpugraph/internal/store/storetest"
	"gpugraph/models"
)

// The kill test's sizes: enough workloads that a pass is several
// transactions (metering.DefaultBatch each) while they run and more while
// their history is closed, over organizations of which every third is
// prepaid; the SIGKILLs of one replica at a time, alternately, before the
// last one of both.
const (
	killWorkloads = 700
	killOrgs      = 12
	killNodes     = 4
	killRounds    = 6
	// killHistory is how far before the close point the lifecycles begin.
	killHistory = 3 * time.Hour
	// killSeedEnv names the variable that replays a run's lifecycles.
	killSeedEnv = "METERING_KILL_SEED"
)

// Two server processes (the built binary, started as main starts it,
// through bench/proc) meter one database, each with --metering-interval
// 1s, over random lifecycles seeded in the past: 700 workloads of twelve
// organizations (every third prepaid) created, run, interrupted, resumed,
// stopped with their disks kept or lost, failed, restarted at new prices
// and terminated, at random milliseconds of the three hours before the
// close point C (the hour boundary before now). While they meter, each is
// killed with SIGKILL in turn, in the middle of a pass, and started again,
// six times; once every workload's usage is closed past C and every event
// applied, both are killed at once, mid-pass. In the middle of a pass: the
// database shows one under way (a batch of records committed within the
// last 50 ms, cursors with something to close still behind), and the
// victim is inside it. On PostgreSQL that is read from pg_stat_activity by
// the replica's application_name, and the kills land at each statement of
// a batch in turn (locking the cursors, reading the events, inserting the
// records, writing the cursors, debiting the ledgers: killPhases), so a
// bug whose window is one statement is met. On SQLite (WAL mode, every
// transaction BEGIN IMMEDIATE: two processes share the file as two
// replicas share a PostgreSQL database) the victim holds the database's
// write lock, read from /proc/locks by its pid, so a kill lands anywhere
// in one of its transactions; where /proc/locks cannot be read (not
// Linux), the database's evidence alone decides.
//
// Then every second is recorded exactly once: per workload and kind, the
// records never overlap nor cross an hour, and they add up (milliseconds,
// GPU-milliseconds and micro-cents) to the bill the test computes from the
// transitions it made, on its own (rational arithmetic, rounded down once),
// both up to C (a bill fixed before the servers start) and up to where
// each workload's usage is closed now; each prepaid organization's usage
// debits add up to its workloads' bills, and a postpaid one has none;
// gpugraph billing reconcile exits 0 with no difference. The seed is
// logged, and METERING_KILL_SEED=<seed> replays the lifecycles (the kills'
// moments are the machine's).
func TestKilledReplicasRecordEverySecondOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server and runs it as processes")
	}
	bin := buildServer(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(killSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", killSeedEnv, s, err)
		}
	}
	t.Logf("lifecycles of seed %d (%s=%d replays them)", seed, killSeedEnv, seed)
	for _, d := range storetest.Engines() {
		t.Run(string(d), func(t *testing.T) {
			e := &killEnv{t: t, d: d, bin: bin, dir: t.TempDir(), url: storetest.URL(t, d)}
			e.run(rand.New(rand.NewPCG(seed, 35)))
		})
	}
}

// buildServer builds the gpugraph command into a temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	bin := filepath.Join(t.TempDir(), "gpugraph")
	start := time.Now()
	if out, err := exec.Command(goTool, "build", "-o", bin, "gpugraph").CombinedOutput(); err != nil {
		t.Fatalf("go build gpugraph: %v\n%s", err, out)
	}
	t.Logf("built gpugraph in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// killStep is one transition of a seeded lifecycle as the test made it:
// when, the status after it, the row's price then (cents an hour) and
// the GB of disk the workload keeps in that status (a stopped one's).
type killStep struct {
	at     time.Time
	to     models.VMStatus
	price  int
	keptGb int
}

// killWorkload is one seeded workload and its lifecycle.
type killWorkload struct {
	id, org    string
	gpus, disk int
	steps      []killStep
}

// killBill is a workload's usage of each kind up to some instant.
type killBill struct {
	computeMs, gpuMs, storageMs int64
	computeCost, storageCost    int64 // µ¢
}

// bill is what w's transitions say it costs from its first to end: it
// runs at the price of the transition that made it run (a restart's new
// one), keeps its disk while stopped at storagePrice µ¢ a GB-hour, and
// accrues nothing else; each kind's exact cost (a rational number of
// cents) is rounded down to the micro-cent once.
func (w *killWorkload) bill(end time.Time, storagePrice int64) killBill {
	var b killBill
	compute, storage := new(big.Rat), new(big.Rat)
	for i, s := range w.steps {
		if !s.at.Before(end) {
			break
		}
		until := end
		if i+1 < len(w.steps) && w.steps[i+1].at.Before(end) {
			until = w.steps[i+1].at
		}
		ms := until.Sub(s.at).Milliseconds()
		switch {
		case s.to == models.VMRunning:
			b.computeMs += ms
			// cents an hour × ms / (ms an hour)
			compute.Add(compute, big.NewRat(int64(s.price)*ms, int64(time.Hour/time.Millisecond)))
		case s.to == models.VMStopped && s.keptGb > 0:
			b.storageMs += ms
			// µ¢ a GB-hour × GB × ms / (ms an hour), in cents
			storage.Add(storage, new(big.Rat).SetFrac64(storagePrice*int64(s.keptGb)*ms, int64(time.Hour/time.Millisecond)*1_000_000))
		}
	}
	b.gpuMs = b.computeMs * int64(w.gpus)
	b.computeCost, b.storageCost = microCentsDown(compute), microCentsDown(storage)
	return b
}

// microCentsDown is an amount of cents in micro-cents, rounded down.
func microCentsDown(cents *big.Rat) int64 {
	mc := new(big.Rat).Mul(cents, big.NewRat(1_000_000, 1))
	return new(big.Int).Quo(mc.Num(), mc.Denom()).Int64()
}

// killCandidates are the transitions a seeded lifecycle picks from, after
// its create (the lifecycle table says which apply to the row as it
// stands); the ones that end it are drawn rarely.
var killCandidates = []models.TransitionName{models.AgentRunning, models.AgentFailedStart, models.ProvisionTimeout,
	models.RestartReboot, models.RestartResume, models.RestartDeploy, models.RestartReplace,
	models.NodeLost, models.NodeBack, models.VMExited, models.UserStop, models.SpotReclaimed,
	models.UserTerminate, models.NodeRemoval}

// killEnv is one engine's run: its database, the two server processes,
// and the seeded workloads.
type killEnv struct {
	t         *testing.T
	d         store.Dialect
	bin, dir  string
	url       string
	st        *store.Store // the test's own connections: the seed and the watching
	c         time.Time    // the close point
	workloads []*killWorkload
	reps      [2]*proc.Process
	starts    int
	kills     []string
	phase     int // the killPhases index of the first kill
}

var killReplicaNames = [2]string{"a", "b"}

func (e *killEnv) run(rng *rand.Rand) {
	t := e.t
	ctx := context.Background()
	st, err := store.Open(e.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	e.st = st
	// Registered after the database's cleanups, so run before them: the
	// servers are gone before their database is dropped.
	t.Cleanup(func() {
		for i, p := range e.reps {
			if p != nil {
				p.Kill()
				if t.Failed() {
					t.Logf("replica %s's log ends:\n%s", killReplicaNames[i], p.Tail())
				}
			}
		}
	})
	began := time.Now()
	e.c = time.Now().UTC().Truncate(time.Hour)
	e.seed(ctx, rng)
	e.phase = rng.IntN(len(killPhases))
	ends := map[string]int{}
	for _, w := range e.workloads {
		last := w.steps[len(w.steps)-1]
		end := string(last.to)
		if last.keptGb > 0 {
			end += " (disk kept)"
		}
		ends[end]++
	}
	t.Logf("seeded %d workloads (%d transitions) of %d organizations before %s in %v; at C: %v", len(e.workloads), e.transitions(),
		killOrgs, e.c.Format(time.RFC3339), time.Since(began).Round(time.Millisecond), ends)

	// Replica a alone meets the history first: it is killed while it
	// closes it. Then both meter, and each is killed in turn.
	e.start(0)
	e.kill(rng, []int{0}, true)
	e.start(0)
	e.start(1)
	for round := 1; round < killRounds; round++ {
		victim := round % 2
		e.kill(rng, []int{victim}, false)
		e.start(victim)
	}
	e.waitClosed(ctx)
	e.kill(rng, []int{0, 1}, false)
	t.Logf("%d SIGKILLs in %d server starts, each in the middle of a pass:\n  %s", len(e.kills)+1, e.starts,
		strings.Join(e.kills, "\n  "))

	e.check(ctx)
	e.reconcile(ctx)
	t.Logf("the whole run took %v", time.Since(began).Round(time.Millisecond))
}

func (e *killEnv) transitions() int {
	n := 0
	for _, w := range e.workloads {
		n += len(w.steps)
	}
	return n
}

// seed writes the organizations, nodes and workloads, and their
// lifecycles through the lifecycle's own code (store.Apply, as the
// services do) at past times, recording each step as the test sees it.
// The nodes have never sent a heartbeat nor had an agent, so no sweep of
// the servers touches their rows (no node-lost, no teardown); a deploying
// row waits its --provision-timeout of a day.
func (e *killEnv) seed(ctx context.Context, rng *rand.Rand) {
	t, st := e.t, e.st
	m := metering.New(st, nil)
	var orgs []string
	for o := range killOrgs {
		org := fmt.Sprintf("org-kill-%02d", o)
		if err := st.CreateOrganization(ctx, org, org, 35_000+o, false); err != nil {
			t.Fatal(err)
		}
		if o%3 == 0 {
			// Prepaid, with a balance no run of this test exhausts (a stop
			// would be a transition the test did not make).
			if _, err := m.Grant(ctx, auth.SystemCaller(), org, 100_000_000, "the kill test's credit", ""); err != nil {
				t.Fatal(err)
			}
		}
		orgs = append(orgs, org)
	}
	var nodes []string
	for n := range killNodes {
		id := fmt.Sprintf("node-kill-%d", n)
		node := models.Node{ID: id, Name: id, Status: models.NodeOnline, CPUCores: 64, RAMGb: 512, DiskGb: 10_000}
		if err := st.DB.Create(&node).Error; err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, id)
	}
	const chunk = 50
	for first := 0; first < killWorkloads; first += chunk {
		var vms []*models.VM
		for i := first; i < min(first+chunk, killWorkloads); i++ {
			w := &killWorkload{id: fmt.Sprintf("vm-kill-%04d", i), org: orgs[rng.IntN(len(orgs))], gpus: 1 + rng.IntN(8)}
			if rng.IntN(5) > 0 {
				w.disk = 10 * (1 + rng.IntN(100))
			}
			node := nodes[rng.IntN(len(nodes))]
			vms = append(vms, &models.VM{ID: w.id, Name: w.id, OrganizationID: w.org, Status: models.VMPending, NodeID: &node,
				GPUCount: w.gpus, DiskSizeGb: w.disk, PricePerHourCents: 1 + rng.IntN(999)})
			e.workloads = append(e.workloads, w)
		}
		if err := st.DB.Create(vms).Error; err != nil {
			t.Fatal(err)
		}
		// A transaction the engine replays draws the same lifecycles.
		chunkSeed := rng.Uint64()
		var lived []models.VM
		err := st.InTx(ctx, func(tx *store.Txn) error {
			crng := rand.New(rand.NewPCG(chunkSeed, 35))
			lived = make([]models.VM, len(vms))
			for j, vm := range vms {
				lived[j] = *vm
				e.workloads[first+j].steps = nil
				if err := e.live(tx, crng, e.workloads[first+j], &lived[j]); err != nil {
					return fmt.Errorf("%s: %w", vm.ID, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The row keeps the price it was last restarted with, as the
		// events say (what the burn rate reads).
		for j, vm := range lived {
			if vm.PricePerHourCents != vms[j].PricePerHourCents {
				if err := st.DB.Model(&models.VM{}).Where("id = ?", vm.ID).Update("price_per_hour_cents", vm.PricePerHourCents).Error; err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// live applies a random lifecycle to the pending row vm of w: its create
// within the first hour of the history, then transitions at random
// milliseconds until the close point, each recorded in w.steps.
func (e *killEnv) live(tx *store.Txn, rng *rand.Rand, w *killWorkload, vm *models.VM) error {
	actor := models.Actor{Kind: models.ActorUser, ID: "key:kill-test"}
	at := e.c.Add(-killHistory).Add(time.Duration(rng.Int64N(int64(time.Hour/time.Millisecond))) * time.Millisecond)
	hasDisk := false
	apply := func(name models.TransitionName) error {
		if _, err := e.st.Apply(tx, vm, store.Change{Transition: name, Actor: actor}, at); err != nil {
			return fmt.Errorf("%s at %s: %w", name, at.Format(time.RFC3339Nano), err)
		}
		// The disk: bound when a run starts on the node, gone with the
		// row or the node; kept, and billed, while stopped.
		switch {
		case vm.Status == models.VMDeploying:
			hasDisk = w.disk > 0
		case name == models.UserTerminate || name == models.NodeRemoval:
			hasDisk = false
		}
		s := killStep{at: at, to: vm.Status, price: vm.PricePerHourCents}
		if s.to == models.VMStopped && hasDisk {
			s.keptGb = w.disk
		}
		w.steps = append(w.steps, s)
		return nil
	}
	if err := apply(models.CreatePlaced); err != nil {
		return err
	}
	for {
		// Mostly minutes apart, now and then within the same second.
		// A run deploys in minutes.
		gap := time.Duration(rng.Int64N(int64(50*time.Minute/time.Millisecond))) * time.Millisecond
		if vm.Status == models.VMDeploying {
			gap = (gap / 10).Truncate(time.Millisecond)
		}
		if rng.IntN(8) == 0 {
			gap = time.Duration(rng.IntN(1000)) * time.Millisecond
		}
		if at = at.Add(gap); !at.Before(e.c) {
			return nil
		}
		var allowed []models.TransitionName
		for _, c := range killCandidates {
			if (c == models.UserTerminate || c == models.NodeRemoval) && rng.IntN(12) != 0 {
				continue
			}
			if tr := models.Step(c); tr.Allows(vm) {
				allowed = append(allowed, c)
				// Towards running, mostly: most workloads accrue at the
				// end, so that a pass closing them is several batches.
				if tr.To == models.VMRunning || tr.To == models.VMDeploying {
					allowed = append(allowed, c, c, c, c, c)
				}
			}
		}
		if len(allowed) == 0 {
			return nil // terminated
		}
		name := allowed[rng.IntN(len(allowed))]
		switch name {
		case models.RestartReboot, models.RestartResume, models.RestartDeploy, models.RestartReplace:
			// A restart may come at a new price: the one its event
			// carries, billed from it.
			vm.PricePerHourCents = 1 + rng.IntN(999)
		}
		if err := apply(name); err != nil {
			return err
		}
	}
}

// start starts replica i as main starts it, on the database, and waits
// until it answers.
func (e *killEnv) start(i int) {
	t := e.t
	t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	e.starts++
	name := killReplicaNames[i]
	// Nothing but the flags: no fixture of the environment's.
	p, err := proc.Start("gpugraph replica "+name, filepath.Join(e.dir, fmt.Sprintf("%s-%d.log", name, e.starts)), e.dir,
		[]string{"GPUGRAPH_FIXTURES="}, e.bin,
		"--addr", fmt.Sprintf("127.0.0.1:%d", port), "--database-url", e.replicaURL(i), "--demo=false",
		"--metering-interval", "1s", "--provision-timeout", "24h", "--log-format", "json")
	if err != nil {
		t.Fatal(err)
	}
	e.reps[i] = p
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.WaitReady(ctx, proc.HTTPOK(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/healthz", port), "")); err != nil {
		t.Fatal(err)
	}
}

// replicaURL is the database URL replica i connects with: on PostgreSQL
// named by application_name, so pg_stat_activity tells its statements.
func (e *killEnv) replicaURL(i int) string {
	if e.d != store.Postgres {
		return e.url
	}
	u, err := url.Parse(e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", "gpugraph-kill-"+killReplicaNames[i])
	u.RawQuery = q.Encode()
	return u.String()
}

// progress is what the database shows of the metering: the last record
// written; the cursors that accrue (running, or stopped with a disk kept:
// Open); those with something to close (they accrue, or have events not
// applied yet) not yet closed as far as the furthest cursor (Behind: a
// pass that committed some batches and not the others leaves some); the
// workloads with no cursor yet; the cursors not closed past C.
type progress struct {
	LastRecord                            int64
	Open, Behind, Uncursored, BeforeClose int64
}

func (e *killEnv) progress() progress {
	var p progress
	err := e.st.DB.Raw(`SELECT
		(SELECT COALESCE(MAX(id), 0) FROM usage_records) AS last_record,
		(SELECT COUNT(*) FROM usage_cursors WHERE done = ? AND (status = ? OR (status = ? AND storage_gb > 0))) AS open,
		(SELECT COUNT(*) FROM usage_cursors c WHERE done = ? AND through < (SELECT MAX(through) FROM usage_cursors)
			AND (status = ? OR (status = ? AND storage_gb > 0)
				OR EXISTS (SELECT 1 FROM vm_events e WHERE e.vm_id = c.vm_id AND e.id > c.last_event_id))) AS behind,
		(SELECT COUNT(*) FROM vms WHERE NOT EXISTS (SELECT 1 FROM usage_cursors c WHERE c.vm_id = vms.id)) AS uncursored,
		(SELECT COUNT(*) FROM usage_cursors WHERE done = ? AND through < ?) AS before_close`,
		false, models.VMRunning, models.VMStopped, false, models.VMRunning, models.VMStopped, false, e.c).Scan(&p).Error
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// killPhases are the statements of a batch of the pass (closeBatch's,
// in its order) that the kills on PostgreSQL land at, in turn: the
// victim's backend runs it, or ran it last in its transaction still open
// (a regular expression of the head of pg_stat_activity's query).
var killPhases = []struct{ name, re string }{
	{"locking its batch's cursors", `^SELECT \* FROM "usage_cursors" WHERE .*vm_id IN`},
	{"reading their events", `^SELECT e\.\* FROM vm_events e JOIN usage_cursors`},
	{"inserting the records", `^INSERT INTO usage_records `},
	{"writing the cursors", `^INSERT INTO usage_cursors `},
	{"debiting the ledgers", `^(SELECT DISTINCT organization_id FROM ledger_entries|INSERT INTO ledger_entries)`},
}

// anyPhase matches every statement of a pass's transactions.
const anyPhase = `usage_|ledger_entries|storage_prices`

// inPass reports whether replica i is inside a metering pass now: on
// PostgreSQL its backend runs a statement re matches (killPhases) or ran
// it last in its transaction still open; on SQLite its
// process holds the database's write lock (WAL mode: an exclusive POSIX
// lock on byte 120 of the -shm file, in /proc/locks), which a batch of
// the pass holds from its BEGIN IMMEDIATE to its commit. found says
// whether the engine's evidence could be read at all.
func (e *killEnv) inPass(i int, re string) (in, found bool) {
	if e.d == store.Postgres {
		var n int64
		err := e.st.DB.Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()
			AND application_name = ? AND xact_start IS NOT NULL AND state IN ('active', 'idle in transaction')
			AND query ~ ?`, "gpugraph-kill-"+killReplicaNames[i], re).Scan(&n).Error
		if err != nil {
			e.t.Fatal(err)
		}
		return n > 0, true
	}
	return holdsSQLiteWriteLock(e.reps[i].Pid(), strings.TrimPrefix(e.url, "sqlite:")+"-shm")
}

// holdsSQLiteWriteLock reports whether process pid holds the write lock
// of the SQLite database in WAL mode whose shared-memory file is shm;
// found is false where /proc/locks or the file cannot be read.
func holdsSQLiteWriteLock(pid int, shm string) (held, found bool) {
	var fi syscall.Stat_t
	if err := syscall.Stat(shm, &fi); err != nil {
		return false, false
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false, false
	}
	ino := ":" + strconv.FormatUint(fi.Ino, 10)
	for _, line := range strings.Split(string(b), "\n") {
		// 7: POSIX  ADVISORY  WRITE 4242 fe:00:778394 120 120
		f := strings.Fields(line)
		if len(f) == 8 && f[1] == "POSIX" && f[3] == "WRITE" && f[4] == strconv.Itoa(pid) &&
			strings.HasSuffix(f[5], ino) && f[6] == "120" {
			return true, true
		}
	}
	return false, true
}

// kill waits, from a random moment, until a pass is under way in the
// database (a record committed within the last 50 ms, cursors with
// something to close still behind, and with history the workloads not
// all closed past C yet) and one of the victims is inside it (on
// PostgreSQL at the statement of killPhases whose turn it is; after 15 s
// without, or in the history's pass, at any), lets a random number of such moments go by, then
// kills the victims with SIGKILL at once.
func (e *killEnv) kill(rng *rand.Rand, victims []int, history bool) {
	t := e.t
	t.Helper()
	time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
	skip := rng.IntN(3)
	began := time.Now()
	phase := killPhases[(e.phase+len(e.kills))%len(killPhases)]
	last, lastAt := e.progress().LastRecord, time.Time{}
	for {
		waited := time.Since(began)
		if waited > 45*time.Second {
			t.Fatalf("no pass under way with replica(s) %v inside it within 45 s (the database shows %+v)", victims, e.progress())
		}
		// The history is closed in a second or two: any statement of it.
		re := phase.re
		if history || waited > 15*time.Second {
			re = anyPhase
		}
		p := e.progress()
		if p.LastRecord > last {
			last, lastAt = p.LastRecord, time.Now()
		}
		underWay := time.Since(lastAt) < 50*time.Millisecond && p.Behind+p.Uncursored > 0
		if history {
			underWay = underWay && p.BeforeClose+p.Uncursored > 0
		}
		inside, evidence := -1, true
		for _, i := range victims {
			in, found := e.inPass(i, re)
			evidence = evidence && found
			if in {
				inside = i
			}
		}
		if !underWay || inside < 0 && evidence {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		if skip > 0 {
			skip--
			time.Sleep(time.Duration(1+rng.IntN(40)) * time.Millisecond)
			continue
		}
		for _, i := range victims {
			e.reps[i].Kill()
			e.reps[i] = nil
		}
		after := e.progress()
		names := make([]string, len(victims))
		for j, i := range victims {
			names[j] = killReplicaNames[i]
		}
		what := "replica " + killReplicaNames[max(inside, 0)]
		switch {
		case !evidence:
			what = "(no lock table to read)"
		case e.d == store.Postgres && history:
			what += " in the pass closing the history"
		case e.d == store.Postgres && re == anyPhase:
			what += " in the pass (not " + phase.name + " within 15 s)"
		case e.d == store.Postgres:
			what += " " + phase.name
		default:
			what += " holding the write lock"
		}
		e.kills = append(e.kills, fmt.Sprintf("%s killed, %s: it left %d cursors to close behind the furthest (%d accruing in all), %d workloads without a cursor, %d not closed past C; last record %d",
			strings.Join(names, " and "), what, after.Behind, after.Open, after.Uncursored, after.BeforeClose, after.LastRecord))
		return
	}
}

// waitClosed waits until every workload has a cursor that applied all of
// its events and, where it accrues, closed its usage past C.
func (e *killEnv) waitClosed(ctx context.Context) {
	deadline := time.Now().Add(time.Minute)
	for {
		var open int64
		err := e.st.DB.WithContext(ctx).Raw(`SELECT
			(SELECT COUNT(*) FROM vms WHERE NOT EXISTS (SELECT 1 FROM usage_cursors c WHERE c.vm_id = vms.id))
			+ (SELECT COUNT(*) FROM usage_cursors c WHERE EXISTS (SELECT 1 FROM vm_events v WHERE v.vm_id = c.vm_id AND v.id > c.last_event_id))
			+ (SELECT COUNT(*) FROM usage_cursors WHERE done = ? AND through < ? AND (status = ? OR (status = ? AND storage_gb > 0)))`,
			false, e.c, models.VMRunning, models.VMStopped).Scan(&open).Error
		if err != nil {
			e.t.Fatal(err)
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("after a minute %d workloads' usage is still not closed past %s", open, e.c.Format(time.RFC3339))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check compares what the killed servers recorded with the bills of the
// transitions.
func (e *killEnv) check(ctx context.Context) {
	t, st := e.t, e.st
	price, err := st.StoragePriceNow(ctx)
	if err != nil || price <= 0 {
		t.Fatalf("the catalog's storage price: %d, %v", price, err)
	}
	// The servers made no transition of their own: the log holds the
	// seeded ones alone, so the transitions are the whole truth.
	var events int64
	storetest.Scan(t, st, &events, "SELECT COUNT(*) FROM vm_events")
	if events != int64(e.transitions()) {
		t.Fatalf("the event log holds %d events; the test made %d transitions (a server changed a row by itself?)", events, e.transitions())
	}
	var cursors []models.UsageCursor
	if err := st.DB.WithContext(ctx).Find(&cursors).Error; err != nil {
		t.Fatal(err)
	}
	through := map[string]time.Time{}
	for _, c := range cursors {
		through[c.VMID] = c.Through.UTC()
	}
	var recs []models.UsageRecord
	if err := st.DB.WithContext(ctx).Order("vm_id, kind, period_start").Find(&recs).Error; err != nil {
		t.Fatal(err)
	}
	type key struct {
		vm   string
		kind models.UsageKind
	}
	got, gotC := map[key]*killBill{}, map[key]*killBill{}
	lastEnd := map[key]time.Time{}
	byOrg := map[string]int64{}
	wrong := 0 // the errors written: the first 20
	for _, r := range recs {
		k := key{r.VMID, r.Kind}
		start, end := r.PeriodStart.UTC(), r.PeriodEnd.UTC()
		if l, ok := lastEnd[k]; ok && start.Before(l) {
			if wrong++; wrong <= 20 {
				t.Errorf("%s %s: record %d (%s–%s) overlaps the one before, which ends %s", r.VMID, r.Kind, r.ID,
					start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano), l.Format(time.RFC3339Nano))
			}
		}
		if !end.After(start) || end.Sub(start.Truncate(time.Hour)) > time.Hour || r.Milliseconds > end.Sub(start).Milliseconds() {
			if wrong++; wrong <= 20 {
				t.Errorf("%s %s: record %d (%s–%s, %d ms) is empty, crosses an hour or holds more than its span", r.VMID, r.Kind, r.ID,
					start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano), r.Milliseconds)
			}
		}
		if end.After(lastEnd[k]) {
			lastEnd[k] = end
		}
		for _, g := range []map[key]*killBill{got, gotC} {
			if g[k] == nil {
				g[k] = &killBill{}
			}
		}
		add := func(b *killBill) {
			if r.Kind == models.UsageCompute {
				b.computeMs += r.Milliseconds
				b.gpuMs += r.GPUMilliseconds
				b.computeCost += r.CostMicroCents
			} else {
				b.storageMs += r.Milliseconds
				b.storageCost += r.CostMicroCents
			}
		}
		add(got[k])
		if start.Before(e.c) {
			// A record never crosses an hour, so those that start
			// before C (an hour boundary) end by it.
			add(gotC[k])
		}
		byOrg[r.OrganizationID] += r.CostMicroCents
	}
	sum := func(m map[key]*killBill, vm string) killBill {
		var b killBill
		for _, kind := range []models.UsageKind{models.UsageCompute, models.UsageStorage} {
			if g := m[key{vm, kind}]; g != nil {
				b.computeMs += g.computeMs
				b.gpuMs += g.gpuMs
				b.computeCost += g.computeCost
				b.storageMs += g.storageMs
				b.storageCost += g.storageCost
			}
		}
		return b
	}
	want := map[string]int64{}
	var all killBill
	for _, w := range e.workloads {
		th, ok := through[w.id]
		last := w.steps[len(w.steps)-1]
		if !ok || th.Before(last.at) || th.Before(e.c) && (last.to == models.VMRunning || last.keptGb > 0) {
			t.Errorf("%s: its usage is closed only up to %v", w.id, th)
			continue
		}
		for _, c := range []struct {
			what      string
			want, got killBill
		}{{"up to C " + e.c.Format(time.RFC3339), w.bill(e.c, price), sum(gotC, w.id)},
			{"up to its cursor " + th.Format(time.RFC3339Nano), w.bill(th, price), sum(got, w.id)}} {
			if c.want != c.got {
				if wrong++; wrong <= 20 {
					t.Errorf("%s (%s, %d transitions) %s: recorded %+v; its transitions say %+v", w.id, w.org, len(w.steps), c.what, c.got, c.want)
				}
			}
		}
		b := w.bill(th, price)
		want[w.org] += b.computeCost + b.storageCost
		all.computeMs += b.computeMs
		all.storageMs += b.storageMs
		all.computeCost += b.computeCost
		all.storageCost += b.storageCost
	}
	if wrong > 20 {
		t.Errorf("… %d records and bills wrong in all", wrong)
	}
	if all.computeMs == 0 || all.storageMs == 0 {
		t.Errorf("the lifecycles ran %d ms and kept storage %d ms: the test meters too little", all.computeMs, all.storageMs)
	}
	t.Logf("%d records: %d ms running for %d µ¢, %d ms of kept disks for %d µ¢, as the transitions say", len(recs),
		all.computeMs, all.computeCost, all.storageMs, all.storageCost)

	// The ledgers: each prepaid organization's usage debits are its
	// workloads' bills (every record was closed after its credit); a
	// postpaid one is debited nothing.
	var debits []struct {
		OrganizationID string
		Sum            int64
		N              int64
	}
	storetest.Scan(t, st, &debits, `SELECT organization_id, SUM(amount_micro_cents) AS sum, COUNT(*) AS n FROM ledger_entries
		WHERE kind = ? GROUP BY organization_id`, models.LedgerUsage)
	debited := map[string]int64{}
	for _, d := range debits {
		debited[d.OrganizationID] = -d.Sum
	}
	for o := range killOrgs {
		org := fmt.Sprintf("org-kill-%02d", o)
		switch {
		case o%3 == 0 && debited[org] != want[org]:
			t.Errorf("%s (prepaid): usage debits %d µ¢; its workloads' transitions say %d µ¢ (its records %d µ¢)", org, debited[org], want[org], byOrg[org])
		case o%3 != 0 && debited[org] != 0:
			t.Errorf("%s (postpaid): debited %d µ¢", org, debited[org])
		}
	}
}

// reconcile runs gpugraph billing reconcile over every hour the records
// start in: it must find the records, the event log and the ledgers in
// agreement.
func (e *killEnv) reconcile(ctx context.Context) {
	t := e.t
	from := e.c.Add(-killHistory).Add(-time.Hour)
	to := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	cmd := exec.CommandContext(ctx, e.bin, "billing", "reconcile", "--database-url", e.url,
		"--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339))
	cmd.Dir = e.dir
	out, err := cmd.CombinedOutput()
	var records int64
	storetest.Scan(t, e.st, &records, "SELECT COUNT(*) FROM usage_records")
	want := fmt.Sprintf("reconciled %s to %s: %d workloads, %d usage records, %d prepaid organizations' ledgers; 0 workloads not in the event log; 0 differences\n",
		from.Format(time.RFC3339), to.Format(time.RFC3339), killWorkloads, records, (killOrgs+2)/3)
	if err != nil || string(out) != want {
		t.Errorf("gpugraph billing reconcile: %v\n%s\nwant exit 0 and %q", err, out, want)
	}
}
