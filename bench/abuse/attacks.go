package abuse

import "context"

// Attack is one attack of the issue: which finding it reproduces, what it
// sends, and what the finding requires of its outcome.
type Attack struct {
	No      int    // its row in the report
	Issue   int    // the issue whose finding it reproduces: 23 or 39
	Finding int    // the finding of that issue it reproduces
	Name    string // what it sends, in words
	Want    string // the outcome the finding requires, in words
	run     func(ctx context.Context, e *env, r *Result) error
}

// Attacks are every attack, in the report's order.
func Attacks() []*Attack {
	return []*Attack{
		{No: 1, Issue: 23, Finding: 1, Name: "forged access token signed with an empty key, claiming platform-operator permissions, a flood (noisy)",
			Want: "401 on every request", run: forgedToken},
		{No: 2, Issue: 23, Finding: 1, Name: "token signed with the stored key (as if leaked), claiming more than its application holds",
			Want: "admin paths 401/403, its application's own permission 200", run: leakedKey},
		{No: 3, Issue: 23, Finding: 2, Name: "another organization's agent key on shared nodes: fail a GPU, stop a workload, inflate RAM, register a rogue node",
			Want: "every report refused (401/403), nothing changed, no answer naming another organization's VMs", run: agentKey},
		{No: 4, Issue: 23, Finding: 3, Name: "9,900 `__typename` (109 KB), one alone, then a flood (noisy)",
			Want: "400 (429 at the key's share)", run: typenameBomb},
		{No: 5, Issue: 23, Finding: 3, Name: "9,000 repeated fields in one selection, one alone, then a flood (noisy)",
			Want: "400 (429 at the key's share)", run: repeatedFields},
		{No: 6, Issue: 23, Finding: 4, Name: "1,000 distinct refused documents (3,000 aliases each), paced under the rate limit",
			Want: "400 each (429 at the key's share); heap kept ≤ 100 MB after all", run: refusedDocuments},
		{No: 7, Issue: 23, Finding: 5, Name: "slow-body POSTs (one byte every 2 s), a flood (noisy)",
			Want: "victim served; no 500", run: slowBodies},
		{No: 8, Issue: 23, Finding: 5, Name: "subscriptions sent as plain POSTs, a flood (noisy)",
			Want: "400 at once, each (429 at the rate limit)", run: subscriptionPosts},
		{No: 9, Issue: 23, Finding: 6, Name: "20,000 invented HTTP methods (no key), then a /metrics scrape",
			Want: "exposition within 5 % of its size before; a scrape ≤ 0.5 s CPU", run: inventedMethods},
		{No: 10, Issue: 23, Finding: 7, Name: "1,000 queries over one WebSocket (noisy)",
			Want: "no more run than the rate limit allows (burst 100 + 50/s; its replica's share)", run: websocketQueries},
		{No: 11, Issue: 23, Finding: 7, Name: "100 WebSocket upgrades that never send `connection_init`",
			Want: "each refused or closed by the server within 10 s", run: websocketNoInit},
		{No: 12, Issue: 23, Finding: 8, Name: "20 aliased `podMetrics` (19 types, 1,000 samples, one hour of 18 series), one alone, then a flood (noisy)",
			Want: "200, or 400 BAD_REQUEST (429 at the key's share) before any work; no 5xx", run: aliasedPodMetrics},
		{No: 13, Issue: 23, Finding: 8, Name: "the largest ingestion batch accepted (from 31.6 MB, halved while refused), the victim restarting its VM (noisy)",
			Want: "2xx within 10 s; CPU ≤ 10 s; the victim's restart p99 at most 0.5 s above its baseline", run: largestBatch},
		{No: 14, Issue: 23, Finding: 9, Name: "33,000- and 70,000-value enum lists: `vms(status:)`, `nodes(status:)`",
			Want: "data, or BAD_REQUEST naming `status`; never INTERNAL", run: enumLists},
		{No: 15, Issue: 23, Finding: 10, Name: "malformed GraphQL bodies: truncated, non-string query, variables array, deep nesting, 10 MB chunked",
			Want: "400 (413 for size) with extensions.code; no ERROR line or panic logged", run: malformedBodies},
		{No: 16, Issue: 23, Finding: 11, Name: "an organization created with another organization's Run:ai tenant id",
			Want: "409", run: duplicateTenant},
		{No: 17, Issue: 23, Finding: 12, Name: "event ids of two of the attacker's own events with the victim's between",
			Want: "the ids do not count the victim's events", run: eventIDs},
		{No: 18, Issue: 23, Finding: 12, Name: "lenient parsing: repeated scalar parameters, `limit=+5`, trailing JSON, duplicate JSON keys, `//` in a path",
			Want: "400 (404 for the path); never 2xx or 3xx", run: lenientParsing},
		// Issue 39: the surfaces that landed after issue 23.
		{No: 19, Issue: 39, Finding: 1, Name: "priority 1000 against another tenant's older pending VM: the attacker fills a GPU model, queues behind the victim's one, frees one slot at a time",
			Want: "the victim's VM placed within two frees", run: fairQueue},
		{No: 20, Issue: 39, Finding: 2, Name: "a NUL in a cluster sync's project, workload and pod texts, a token request's clientId and AppId, an admin path",
			Want: "400 naming the field (401 for the token request); never 5xx", run: nulText},
		{No: 21, Issue: 39, Finding: 3, Name: "the attacker's cluster registers project ids \"7\" … \"1006\", then the victim's cluster its own project \"42\"",
			Want: "200 each; the victim's project 42 its own", run: projectIDs},
		{No: 22, Issue: 39, Finding: 4, Name: "the attacker's cluster id enrolled again in upper case for the victim's tenant",
			Want: "409", run: clusterIDCase},
		{No: 23, Issue: 39, Finding: 5, Name: "synced pods whose id, workloadId or revisionId is not a UUID, then that workload's pods read",
			Want: "400 each, nothing stored (the workload's pods 404)", run: podIDsNotUUID},
		{No: 24, Issue: 39, Finding: 6, Name: "two tenants' connectors sync one fresh pod id at once, each to another replica, 30 rounds",
			Want: "one 200 and one 403 a round", run: racingPodIDs},
		{No: 25, Issue: 39, Finding: 7, Name: "`POST /v1/vms` sent twice with one `Idempotency-Key`",
			Want: "201 twice, one body, one `Location`", run: replayLocation},
		{No: 26, Issue: 39, Finding: 9, Name: "`createVm` sent twice with one key, by the header and by `@idempotent`",
			Want: "200 each, one VM a key, the replay the first answer", run: graphqlReplay},
		{No: 27, Issue: 39, Finding: 10, Name: "GraphQL request errors (no parse, no validation, a variable that does not coerce) under each `Accept`",
			Want: "400 without a `data` member", run: requestErrors},
		{No: 28, Issue: 39, Finding: 8, Name: "1,002 pending creates of one organization, then another's",
			Want: "the 1,001st pending refused 409 `PENDING_LIMIT_EXCEEDED`; the victim's queued", run: pendingFlood},
	}
}
