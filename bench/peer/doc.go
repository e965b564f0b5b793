// Package peer measures gpugraph side by side with PostGraphile v4 and v5,
// the GraphQL layer that compiles a whole nested query into one SQL
// statement, over the same PostgreSQL database: one fleet fixture, every
// server a process of its own, the four queries a fleet console sends
// (Q1–Q4), answers checked to hold the same objects, then latency medians
// of interleaved single-client runs with each server's CPU per request
// (its process and its PostgreSQL backends, from /proc), and requests/s of
// interleaved closed-loop rounds at 8 and 16 clients, and each server's
// resident memory after those rounds; gpugraph's figures are read against
// the best of the peers (its memory against the lightest's). cmd/benchpeer
// runs it and writes the tables into BENCHMARKS.md.
//
// Both releases run with the smart tags of TagsFile: gpugraph's nodes table
// is renamed (its type would be Node, which Relay's Node interface takes),
// and pods → node, which has no foreign key (a pod names its node by
// cluster and name, as Run:ai does), is declared with @foreignKey over a
// @unique (cluster_id, name) — the join gpugraph's loader makes. v5 runs
// with the amber preset (ConfigV5) on the Node.js release it needs,
// installed from npm beside it.
package peer
