// Package abuse replays the attacks of the hostile-tenants issues (issue
// 23, and issue 39's round on the surfaces that landed after it) against
// the real server binary and measures what each costs the
// server: its CPU (user + system time from /proc/<pid>/stat, plus its
// PostgreSQL backends'), its memory (peak resident set from VmHWM after a
// reset, and the heap the last collection kept, from /metrics'
// go_memstats_next_gc_bytes), what the attack's requests answered, and,
// for the attacks that may starve other tenants, the victim tenant's
// latency during the attack against its own baseline.
//
// The servers run as processes of their own, started as main starts them
// (only the address, the database and --demo=false on the command line):
// one on SQLite, two replicas on one PostgreSQL database, the attacks
// spread over both. Each attack gets freshly started servers, so one
// attack's heap, its rate-limit buckets or a request still burning CPU
// do not count against the next; the database and its fixture (two
// tenants, an attacker holding a read-only key and a victim, plus a
// platform operator) are loaded once per engine.
//
// Every attack is judged by what its finding requires, not by what the
// server answers today: the bounds are 0.5 s of CPU and 100 MB of memory
// per request, a victim p99 at most twice its baseline with no victim
// errors, and the attack's own outcome (a forged token answers 401, a
// subscription sent as a plain POST a 400, …). cmd/abusereport runs them
// and writes the table into BENCHMARKS.md; make abuse is that command.
package abuse
