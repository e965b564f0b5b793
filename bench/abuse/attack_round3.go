package abuse

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The attacks of issue 39 (hostile tenants, round three): the surfaces
// that landed after issue 23 — the create queue, cluster sync and its
// credentials, idempotent writes on both faces, GraphQL over HTTP.

// roundUUID is a UUID of this run's start n: the database and its
// fixture are loaded once per engine and every attack's servers start
// afresh, so the ids an attack makes must differ between starts.
func (e *env) roundUUID(kind, n int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0xab05e000+kind, e.starts*10_000+n)
}

// The kinds of roundUUID.
const (
	uuidCluster = iota
	uuidPod
	uuidWorkload
)

// enroll has the platform operator enrol cluster for tenant: the answer,
// and the credential when it is 201.
func (e *env) enroll(ctx context.Context, cluster string, tenant int) (int, string, error) {
	body, _ := json.Marshal(map[string]any{"clusterId": cluster, "tenantId": tenant})
	status, b, err := e.do(ctx, 0, http.MethodPost, "/v1/admin/clusters/enroll", OperatorKey, body)
	var c struct{ Credential string }
	_ = json.Unmarshal(b, &c)
	return status, c.Credential, err
}

// syncPod is a Run:ai pod object as a connector sends it.
func syncPod(cluster, id, workload, project string) map[string]any {
	return map[string]any{
		"name": "abuse-worker", "id": id, "workloadId": workload, "revisionId": nil, "projectId": project,
		"task": "worker", "clusterId": cluster, "nodeName": "node-1", "createdAt": "2026-03-01T10:00:00Z",
		"completedAt": nil, "containers": []any{}, "currentNodePool": "default", "requestedNodePools": []string{},
		"requestedResources": nil, "allocatedResources": nil, "tolerations": []any{}, "k8sPhase": "Running",
		"k8sPhaseUpdatedAt": "2026-03-01T10:00:05Z", "ip": "10.0.0.9", "nodeAffinity": nil,
		"priorityClassName": "train", "deletedAt": nil,
	}
}

// syncBatch is a delta of pods of one workload in one project.
func syncBatch(seq int64, project, workload string, pods ...map[string]any) map[string]any {
	return map[string]any{"sequence": seq, "kind": "delta",
		"projects":  []map[string]any{{"id": project, "name": "team-" + project}},
		"workloads": []map[string]any{{"id": workload, "name": "train", "projectId": project}},
		"pods":      pods}
}

// sync posts batch as cluster's connector to replica i%n.
func (e *env) sync(ctx context.Context, i int, cluster, credential string, batch any) (int, []byte, error) {
	body, _ := json.Marshal(batch)
	return e.do(ctx, i, http.MethodPost, "/api/v1/clusters/"+cluster+"/sync", credential, body)
}

// fairQueue is finding 1: the attacker fills the fleet's one A100 node,
// the victim queues one VM of it, the attacker queues three at priority
// 1000 behind it; then the attacker terminates its running VMs one at a
// time, and after each the scheduler places one pending row.
func fairQueue(ctx context.Context, e *env, r *Result) error {
	const model, fill, jump = "a100-80gb", 4, 3
	var running, queued []string
	var victim string
	var frees int
	create := func(token, name string, priority int) (string, string) {
		body, _ := json.Marshal(map[string]any{"name": name, "gpuModelId": model, "gpuCount": 2,
			"cpuCores": 16, "ramGb": 128, "diskSizeGb": 500, "priority": priority})
		status, b, err := e.do(ctx, 0, http.MethodPost, "/v1/vms", token, body)
		r.Statuses.Add(answer(status, err))
		var vm struct{ ID, Status string }
		_ = json.Unmarshal(b, &vm)
		return vm.ID, vm.Status
	}
	statusOf := func(id string) string {
		_, b, _ := e.do(ctx, 0, http.MethodGet, "/v1/vms/"+id, e.fx.victimKey, nil)
		var vm struct{ Status string }
		_ = json.Unmarshal(b, &vm)
		return vm.Status
	}
	err := e.setWithin(ctx, 2*time.Minute, r, fill+1+jump+fill, 1, func(ctx context.Context) {
		for i := 0; i < fill; i++ {
			if id, st := create(e.fx.attackerOperator, fmt.Sprintf("abuse-fill-%d", i), 0); st == "deploying" {
				running = append(running, id)
			}
		}
		victim, _ = create(e.fx.victimKey, "abuse-victim", 0)
		for i := 0; i < jump; i++ {
			id, _ := create(e.fx.attackerOperator, fmt.Sprintf("abuse-jump-%d", i), 1000)
			queued = append(queued, id)
		}
		// placed counts the queued rows no longer pending.
		placed := func() int {
			n := 0
			for _, id := range append([]string{victim}, queued...) {
				if statusOf(id) != "pending" {
					n++
				}
			}
			return n
		}
		for _, id := range running {
			if statusOf(victim) != "pending" {
				break
			}
			before := placed()
			status, _, err := e.do(ctx, 0, http.MethodDelete, "/v1/vms/"+id, e.fx.attackerOperator, nil)
			r.Statuses.Add(answer(status, err))
			frees++
			// The scheduler is woken by the terminate's event: wait for
			// it to place one pending row on the freed GPUs.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && placed() == before; {
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
	// Whatever happened, the A100 node is left empty for the next attack.
	for _, id := range append(append(running, queued...), victim) {
		if id == "" {
			continue
		}
		token := e.fx.attackerOperator
		if id == victim {
			token = e.fx.victimKey
		}
		_, _, _ = e.do(ctx, 0, http.MethodDelete, "/v1/vms/"+id, token, nil)
	}
	if err != nil {
		return err
	}
	if len(running) != fill || victim == "" {
		return fmt.Errorf("the fill placed %d of %d VMs (answers %s)", len(running), fill, r.Statuses.String())
	}
	st := statusOf(victim)
	placed := st != "pending" && st != ""
	r.Outcome = fmt.Sprintf("the victim's VM still pending after %d frees", frees)
	if placed {
		r.Outcome = fmt.Sprintf("the victim's VM placed after %d free(s)", frees)
	}
	r.OK = placed && frees <= 2
	return nil
}

// nulText is finding 2: a NUL in every text of a cluster sync the finding
// names, in a token request, and in an admin path.
func nulText(ctx context.Context, e *env, r *Result) error {
	const nul = "a\x00b"
	cluster := e.roundUUID(uuidCluster, 2)
	status, cred, err := e.enroll(ctx, cluster, e.fx.attackerTenant)
	if err != nil || status != http.StatusCreated {
		return fmt.Errorf("enrol: %s", answer(status, err))
	}
	type probe struct {
		what string
		send func(ctx context.Context, i int) (int, error)
	}
	var probes []probe
	podField := func(field string) probe {
		return probe{"pods[0]." + field, func(ctx context.Context, i int) (int, error) {
			p := syncPod(cluster, e.roundUUID(uuidPod, 200+i), e.roundUUID(uuidWorkload, 2), "p2")
			p[field] = nul
			status, _, err := e.sync(ctx, i, cluster, cred, syncBatch(int64(i+1), "p2", e.roundUUID(uuidWorkload, 2), p))
			return status, err
		}}
	}
	for _, f := range []string{"name", "k8sPhase", "priorityClassName", "nodeName", "ip"} {
		probes = append(probes, podField(f))
	}
	probes = append(probes,
		probe{"projects[0].name", func(ctx context.Context, i int) (int, error) {
			b := syncBatch(int64(i+1), "p2", e.roundUUID(uuidWorkload, 2))
			b["projects"] = []map[string]any{{"id": "p2", "name": nul}}
			status, _, err := e.sync(ctx, i, cluster, cred, b)
			return status, err
		}},
		probe{"workloads[0].name", func(ctx context.Context, i int) (int, error) {
			b := syncBatch(int64(i+1), "p2", e.roundUUID(uuidWorkload, 2))
			b["workloads"] = []map[string]any{{"id": e.roundUUID(uuidWorkload, 2), "name": nul, "projectId": "p2"}}
			status, _, err := e.sync(ctx, i, cluster, cred, b)
			return status, err
		}})
	for _, f := range []string{"clientId", "AppId"} {
		probes = append(probes, probe{"token " + f, func(ctx context.Context, i int) (int, error) {
			body, _ := json.Marshal(map[string]any{"grantType": "app_token", f: nul, "clientSecret": "x", "AppSecret": "x"})
			status, _, err := e.do(ctx, i, http.MethodPost, "/api/v1/token", "", body)
			return status, err
		}})
	}
	probes = append(probes, probe{"admin path", func(ctx context.Context, i int) (int, error) {
		status, _, err := e.do(ctx, i, http.MethodPost, "/v1/admin/clusters/a%00/revoke", OperatorKey, nil)
		return status, err
	}})
	wrong := []string{}
	err = e.set(ctx, r, len(probes), 1, func(ctx context.Context) {
		for i, p := range probes {
			status, err := p.send(ctx, i)
			r.Statuses.Add(answer(status, err))
			want := http.StatusBadRequest
			if strings.HasPrefix(p.what, "token") {
				want = http.StatusUnauthorized
			}
			if status != want {
				wrong = append(wrong, fmt.Sprintf("%s %s", p.what, answer(status, err)))
			}
		}
	})
	if len(wrong) > 0 {
		r.Outcome = "wrong: " + strings.Join(wrong, ", ")
	}
	r.OK = len(wrong) == 0
	return err
}

// projectIDs is finding 3: the attacker's cluster registers the project
// ids "7" … "1006", then the victim's cluster its own project "42".
func projectIDs(ctx context.Context, e *env, r *Result) error {
	mine, theirs := e.roundUUID(uuidCluster, 30), e.roundUUID(uuidCluster, 31)
	s1, attackerCred, err1 := e.enroll(ctx, mine, e.fx.attackerTenant)
	s2, victimCred, err2 := e.enroll(ctx, theirs, e.fx.victimTenant)
	if s1 != http.StatusCreated || s2 != http.StatusCreated {
		return fmt.Errorf("enrol: %s, %s", answer(s1, err1), answer(s2, err2))
	}
	err := e.set(ctx, r, 2, 1, func(ctx context.Context) {
		projects := make([]map[string]any, 0, 1000)
		for id := 7; id <= 1006; id++ {
			projects = append(projects, map[string]any{"id": strconv.Itoa(id), "name": "squat-" + strconv.Itoa(id)})
		}
		status, _, err := e.sync(ctx, 0, mine, attackerCred, map[string]any{"sequence": 1, "kind": "delta", "projects": projects, "workloads": []any{}, "pods": []any{}})
		r.Statuses.Add(answer(status, err))
		workload := e.roundUUID(uuidWorkload, 31)
		pod := syncPod(theirs, e.roundUUID(uuidPod, 310), workload, "42")
		status, _, err = e.sync(ctx, 1, theirs, victimCred, syncBatch(1, "42", workload, pod))
		r.Statuses.Add(answer(status, err))
	})
	if err != nil {
		return err
	}
	// The victim reads its projects: 42 is its own, by its own name, and
	// its pods of project 42 are its own.
	status, b, err := e.graphql(ctx, 0, e.fx.victimKey, "{ projects { id name tenantId } }", nil)
	var got struct {
		Data struct {
			Projects []struct {
				ID, Name string
				TenantID int
			}
		}
	}
	_ = json.Unmarshal(b, &got)
	own := false
	for _, p := range got.Data.Projects {
		if p.ID == "42" {
			own = p.Name == "team-42" && p.TenantID == e.fx.victimTenant
		}
	}
	_, b, _ = e.do(ctx, 0, http.MethodGet, "/api/v1/workloads/pods/count?filterBy=projectId==42", e.fx.victimKey, nil)
	var count struct{ Count int }
	_ = json.Unmarshal(b, &count)
	own = own && status == http.StatusOK && err == nil && count.Count == 1
	r.Outcome = fmt.Sprintf("the victim's project 42 its own: %v; its pods of project 42: %d", own, count.Count)
	r.OK = r.Statuses.Only("200") && own
	return nil
}

// clusterIDCase is finding 4: the attacker's enrolled cluster id, in
// upper case, enrolled again for the victim's tenant.
func clusterIDCase(ctx context.Context, e *env, r *Result) error {
	cluster := e.roundUUID(uuidCluster, 4)
	if status, _, err := e.enroll(ctx, cluster, e.fx.attackerTenant); status != http.StatusCreated {
		return fmt.Errorf("enrol: %s", answer(status, err))
	}
	err := e.set(ctx, r, 1, 1, func(ctx context.Context) {
		status, _, err := e.enroll(ctx, strings.ToUpper(cluster), e.fx.victimTenant)
		r.Statuses.Add(answer(status, err))
	})
	r.OK = r.Statuses.Only("409")
	return err
}

// podIDsNotUUID is finding 5: a pod whose id, workloadId or revisionId is
// not a UUID; then the workload's pods are read back by its id.
func podIDsNotUUID(ctx context.Context, e *env, r *Result) error {
	cluster := e.roundUUID(uuidCluster, 5)
	status, cred, err := e.enroll(ctx, cluster, e.fx.attackerTenant)
	if status != http.StatusCreated {
		return fmt.Errorf("enrol: %s", answer(status, err))
	}
	workload := e.roundUUID(uuidWorkload, 5)
	bad := "not-a-uuid-" + strconv.Itoa(e.starts)
	var stored int
	err = e.set(ctx, r, 4, 1, func(ctx context.Context) {
		for i, field := range []string{"id", "workloadId", "revisionId"} {
			p := syncPod(cluster, e.roundUUID(uuidPod, 500+i), workload, "p5")
			w := workload
			p[field] = bad
			if field == "workloadId" {
				w = bad
			}
			status, _, err := e.sync(ctx, i, cluster, cred, syncBatch(int64(i+1), "p5", w, p))
			r.Statuses.Add(answer(status, err))
		}
		status, b, err := e.do(ctx, 0, http.MethodGet, "/api/v1/workloads/"+bad+"/pods", ReaderKey, nil)
		r.Statuses.Add(answer(status, err))
		var page struct{ Pods []json.RawMessage }
		_ = json.Unmarshal(b, &page)
		stored = len(page.Pods)
	})
	if stored > 0 {
		r.Outcome = fmt.Sprintf("%d pods stored under %q", stored, bad)
	}
	r.OK = r.Statuses.Count("400") == 3 && r.Statuses.Count("200") == 0 && stored == 0
	return err
}

// racingPodIDs is finding 6: the attacker's and the victim's connectors
// sync one fresh pod id at the same moment, each to another replica.
func racingPodIDs(ctx context.Context, e *env, r *Result) error {
	const rounds = 30
	a, v := e.roundUUID(uuidCluster, 60), e.roundUUID(uuidCluster, 61)
	s1, aCred, err1 := e.enroll(ctx, a, e.fx.attackerTenant)
	s2, vCred, err2 := e.enroll(ctx, v, e.fx.victimTenant)
	if s1 != http.StatusCreated || s2 != http.StatusCreated {
		return fmt.Errorf("enrol: %s, %s", answer(s1, err1), answer(s2, err2))
	}
	aWorkload, vWorkload := e.roundUUID(uuidWorkload, 60), e.roundUUID(uuidWorkload, 61)
	var both, neither int
	err := e.set(ctx, r, 2*rounds, 2, func(ctx context.Context) {
		for n := 0; n < rounds; n++ {
			pod := e.roundUUID(uuidPod, 600+n)
			var statuses [2]int
			parallel(2, func(i int) {
				cluster, cred, workload := a, aCred, aWorkload
				if i == 1 {
					cluster, cred, workload = v, vCred, vWorkload
				}
				status, _, err := e.sync(ctx, i, cluster, cred, syncBatch(int64(n+1), "p6", workload, syncPod(cluster, pod, workload, "p6")))
				r.Statuses.Add(answer(status, err))
				statuses[i] = status
			})
			switch ok := (statuses[0] == http.StatusOK) == (statuses[1] == http.StatusOK); {
			case ok && statuses[0] == http.StatusOK:
				both++
			case ok:
				neither++
			}
		}
	})
	r.Outcome = fmt.Sprintf("%d of %d rounds told both 200, %d neither", both, rounds, neither)
	r.OK = both == 0 && neither == 0 && r.Statuses.Only("200", "403")
	return err
}

// replayLocation is finding 7: a create sent twice with one key.
func replayLocation(ctx context.Context, e *env, r *Result) error {
	key := "abuse-replay-" + strconv.Itoa(e.starts)
	body, _ := json.Marshal(map[string]any{"name": "abuse-replay", "gpuModelId": "h100-80gb", "gpuCount": 1,
		"cpuCores": 4, "ramGb": 32, "diskSizeGb": 100, "queue": false})
	var locations [2]string
	var bodies [2]string
	var id string
	err := e.set(ctx, r, 2, 1, func(ctx context.Context) {
		for i := range 2 {
			status, h, b, err := e.exchange(e.http, ctx, i, http.MethodPost, "/v1/vms", e.fx.attackerOperator, body, "Idempotency-Key", key)
			r.Statuses.Add(answer(status, err))
			if err == nil {
				locations[i], bodies[i] = h.Get("Location"), string(b)
			}
		}
	})
	var vm struct{ ID string }
	if json.Unmarshal([]byte(bodies[0]), &vm) == nil {
		id = vm.ID
	}
	if id != "" {
		_, _, _ = e.do(ctx, 0, http.MethodDelete, "/v1/vms/"+id, e.fx.attackerOperator, nil)
	}
	r.Outcome = fmt.Sprintf("Location %q, then %q", locations[0], locations[1])
	r.OK = r.Statuses.Only("201") && locations[0] != "" && locations[0] == locations[1] && bodies[0] == bodies[1]
	return err
}

// requestErrors is finding 10: GraphQL request errors (a document that
// does not parse, one that does not validate, a variable that does not
// coerce) under each media type a client may accept.
func requestErrors(ctx context.Context, e *env, r *Result) error {
	documents := []map[string]any{
		{"query": "{ vms { id "},
		{"query": "{ vms { noSuchField } }"},
		{"query": "query($n: Int) { vms(first: $n) { id } }", "variables": map[string]any{"n": "ten"}},
	}
	var withData int
	err := e.set(ctx, r, 2*len(documents), 1, func(ctx context.Context) {
		for i, d := range documents {
			for _, accept := range []string{"application/json", "application/graphql-response+json"} {
				body, _ := json.Marshal(d)
				status, b, err := e.do(ctx, i, http.MethodPost, "/graphql", ReaderKey, body, "Accept", accept)
				r.Statuses.Add(answer(status, err))
				var members map[string]json.RawMessage
				if json.Unmarshal(b, &members) == nil {
					if _, ok := members["data"]; ok {
						withData++
					}
				}
			}
		}
	})
	if withData > 0 {
		r.Outcome = fmt.Sprintf("%d answers hold a data member", withData)
	}
	r.OK = r.Statuses.Only("400") && withData == 0
	return err
}

// graphqlReplay is finding 9: createVm sent twice with one key, as a
// console retrying after a lost answer, once with the Idempotency-Key
// header and once with the @idempotent directive; then the VMs of that
// name are counted.
func graphqlReplay(ctx context.Context, e *env, r *Result) error {
	name := "abuse-gql-" + strconv.Itoa(e.starts)
	const create = `mutation($in: CreateVmInput!) { createVm(input: $in) { id status } }`
	input := map[string]any{"name": name, "gpuModelId": "h100-80gb", "gpuCount": 1, "cpuCores": 4, "ramGb": 32, "diskSizeGb": 100, "queue": false}
	directive := fmt.Sprintf(`mutation($in: CreateVmInput!) { createVm(input: $in) @idempotent(key: "abuse-gql-d-%d") { id status } }`, e.starts)
	var answers [4]string
	err := e.set(ctx, r, 4, 1, func(ctx context.Context) {
		for i := range 4 {
			q, header := create, []string{"Idempotency-Key", fmt.Sprintf("abuse-gql-h-%d", e.starts)}
			if i >= 2 {
				q, header = directive, nil
			}
			body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]any{"in": input}})
			status, b, err := e.do(ctx, i, http.MethodPost, "/graphql", e.fx.attackerOperator, body, header...)
			r.Statuses.Add(answer(status, err))
			answers[i] = string(b)
		}
	})
	if err != nil {
		return err
	}
	status, b, err := e.do(ctx, 0, http.MethodGet, "/v1/vms?limit=100", e.fx.attackerOperator, nil)
	var page struct {
		VMs []struct{ ID, Name string } `json:"vms"`
	}
	_ = json.Unmarshal(b, &page)
	made := 0
	for _, vm := range page.VMs {
		if vm.Name == name {
			made++
			_, _, _ = e.do(ctx, 0, http.MethodDelete, "/v1/vms/"+vm.ID, e.fx.attackerOperator, nil)
		}
	}
	r.Outcome = fmt.Sprintf("%d VMs named %s made by four sends (two keys)", made, name)
	r.OK = status == http.StatusOK && err == nil && made == 2 && r.Statuses.Only("200") &&
		answers[0] == answers[1] && answers[2] == answers[3]
	return nil
}

// pendingFlood is finding 8: the attacker fills the A100 node, then
// queues creates past its organization's bound on pending rows; the
// victim's create of the same model is still queued.
func pendingFlood(ctx context.Context, e *env, r *Result) error {
	const bound = 1000 // --max-pending-per-org's default
	var mine []string
	var victim string
	create := func(i int, token string) (int, string) {
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("abuse-flood-%d", i), "gpuModelId": "a100-80gb", "gpuCount": 8,
			"cpuCores": 16, "ramGb": 128, "diskSizeGb": 500})
		status, b, err := e.do(ctx, i, http.MethodPost, "/v1/vms", token, body)
		key := answer(status, err)
		if code := openRelayCode(b); code != "" && status != http.StatusCreated {
			key += " " + code
		}
		r.Statuses.Add(key)
		var vm struct{ ID string }
		_ = json.Unmarshal(b, &vm)
		return status, vm.ID
	}
	pace := time.NewTicker(time.Second / KeyPace)
	defer pace.Stop()
	err := e.setWithin(ctx, 3*time.Minute, r, bound+3, 1, func(ctx context.Context) {
		for i := 0; i <= bound+1; i++ {
			<-pace.C
			status, id := create(i, e.fx.attackerOperator)
			if id != "" {
				mine = append(mine, id)
			}
			if status != http.StatusCreated && status != http.StatusTooManyRequests {
				break
			}
		}
		_, victim = create(bound+2, e.fx.victimKey)
	})
	for _, id := range mine {
		<-pace.C
		_, _, _ = e.do(ctx, 0, http.MethodDelete, "/v1/vms/"+id, e.fx.attackerOperator, nil)
	}
	if victim != "" {
		_, _, _ = e.do(ctx, 0, http.MethodDelete, "/v1/vms/"+victim, e.fx.victimKey, nil)
	}
	r.Outcome = fmt.Sprintf("the attacker holds %d rows (one placed); the victim's create %s", len(mine), map[bool]string{true: "queued", false: "refused"}[victim != ""])
	r.OK = err == nil && len(mine) == bound+1 && r.Statuses.Count("409 PENDING_LIMIT_EXCEEDED") == 1 && victim != ""
	return err
}

// openRelayCode is the code of an OpenRelay path's error answer
// ({"error": {"code": …, "message": …}}).
func openRelayCode(body []byte) string {
	var a struct{ Error struct{ Code string } }
	_ = json.Unmarshal(body, &a)
	return a.Error.Code
}
