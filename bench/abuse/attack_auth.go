package abuse

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"gpugraph/internal/agent/agentapi"
)

// signHS256 makes an HS256 JWT of claims with key, by hand: a token
// library may refuse the empty key the attack needs.
func signHS256(key []byte, claims map[string]any) string {
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": "HS256", "typ": "JWT"})
	body, _ := json.Marshal(claims)
	msg := enc.EncodeToString(head) + "." + enc.EncodeToString(body)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msg))
	return msg + "." + enc.EncodeToString(mac.Sum(nil))
}

// operatorClaims are an access token's claims for the attacker's
// application, claiming the platform operator's permissions.
func (e *env) operatorClaims(clientID string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": "gpugraph", "sub": clientID, "org": e.fx.attackerOrg,
		"permissions": []string{"admin", "nodes.admin", "compute.operate", "workloads.read", "metrics.write", "nodes.report"},
		"iat":         now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// application makes the attacker's application (workloads.read only),
// as the platform operator, and answers its client id.
func (e *env) application(ctx context.Context) (string, error) {
	body, _ := json.Marshal(map[string]any{"organizationId": e.fx.attackerOrg, "name": "abuse-" + strconv.Itoa(e.starts), "permissions": []string{"workloads.read"}})
	status, b, err := e.do(ctx, 0, http.MethodPost, "/v1/admin/applications", OperatorKey, body)
	if err != nil {
		return "", err
	}
	var app struct {
		ClientID string `json:"clientId"`
	}
	if status != http.StatusCreated || json.Unmarshal(b, &app) != nil || app.ClientID == "" {
		return "", fmt.Errorf("the operator's application: %d %.200s", status, b)
	}
	return app.ClientID, nil
}

// operatorRequests are what a platform operator's token would do: list
// and mint another organization's keys, enrol a node; request i is one of
// them in turn.
func (e *env) operatorRequest(ctx context.Context, i int, token string) (int, error) {
	var status int
	var err error
	switch i % 4 {
	case 0:
		status, _, err = e.do(ctx, i, http.MethodGet, "/v1/admin/keys?organizationId="+e.fx.victimOrg, token, nil)
	case 1:
		body, _ := json.Marshal(map[string]any{"organizationId": e.fx.victimOrg, "permissions": []string{"compute.operate"}})
		status, _, err = e.do(ctx, i, http.MethodPost, "/v1/admin/keys", token, body)
	case 2:
		body, _ := json.Marshal(map[string]any{"nodeName": fmt.Sprintf("abuse-forged-%d", i), "clusterId": e.fx.sharedNode.ClusterID})
		status, _, err = e.do(ctx, i, http.MethodPost, "/v1/admin/nodes/enroll", token, body)
	default:
		status, _, err = e.do(ctx, i, http.MethodGet, "/v1/admin/applications?organizationId="+e.fx.victimOrg, token, nil)
	}
	return status, err
}

// forgedToken signs a token with the empty key (finding 1: what an unset
// --token-signing-key signed with) and floods with it.
func forgedToken(ctx context.Context, e *env, r *Result) error {
	clientID, err := e.application(ctx)
	if err != nil {
		return err
	}
	token := signHS256(nil, e.operatorClaims(clientID))
	err = e.flood(ctx, r, noisyRequests(e.engine), func(ctx context.Context, i int) {
		status, err := e.operatorRequest(ctx, i, token)
		r.Statuses.Add(answer(status, err))
	})
	r.OK = r.Statuses.Only("401")
	return err
}

// leakedKey signs with the key the servers keep in the database, as
// someone who read it would: the token's permissions must be those its
// application holds now (workloads.read), whatever it claims.
func leakedKey(ctx context.Context, e *env, r *Result) error {
	clientID, err := e.application(ctx)
	if err != nil {
		return err
	}
	proposed := make([]byte, 32)
	_, _ = rand.Read(proposed)
	secret, _, err := e.db.SigningKeys(ctx, base64.RawURLEncoding.EncodeToString(proposed))
	if err != nil {
		return err
	}
	key, err := base64.RawURLEncoding.DecodeString(secret)
	if err != nil {
		return fmt.Errorf("the stored signing key: %w", err)
	}
	token := signHS256(key, e.operatorClaims(clientID))
	var admin, own Statuses
	const rounds = 5
	err = e.set(ctx, r, rounds*5, 1, func(ctx context.Context) {
		for i := 0; i < rounds*4; i++ {
			status, err := e.operatorRequest(ctx, i, token)
			admin.Add(answer(status, err))
			r.Statuses.Add("admin " + answer(status, err))
		}
		for i := 0; i < rounds; i++ {
			status, _, err := e.do(ctx, i, http.MethodGet, "/api/v1/workloads/pods?limit=1", token, nil)
			own.Add(answer(status, err))
			r.Statuses.Add("pods " + answer(status, err))
		}
	})
	r.OK = admin.Only("401", "403") && own.Only("200")
	return err
}

// agentKey reports as the node that holds the victim's running VM with
// the attacker's nodes.report key (finding 2), then looks at the node and
// the VM as the victim.
func agentKey(ctx context.Context, e *env, r *Result) error {
	n := e.fx.sharedNode
	healthy := func(failed int) []agentapi.HeartbeatGPU {
		var out []agentapi.HeartbeatGPU
		for i, g := range n.GPUs {
			h := agentapi.HeartbeatGPU{UUID: g.UUID, Health: "healthy"}
			if i == failed {
				h.Health, h.FailedReason = "failed", "XID 79"
			}
			out = append(out, h)
		}
		return out
	}
	inventory := func(name string, ram int, fake bool) agentapi.InventoryRequest {
		inv := agentapi.InventoryRequest{NodeName: name, ClusterID: n.ClusterID, AgentVersion: n.AgentVersion,
			CPUCores: n.CPUCores, RAMGb: ram, DiskGb: n.DiskGb}
		for i, g := range n.GPUs {
			ig := agentapi.InventoryGPU{Index: g.Index, UUID: g.UUID, Address: g.Address, Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 << 30, Health: "healthy"}
			if fake {
				ig.UUID, ig.Address = fmt.Sprintf("GPU-abuse-rogue-%d", i), fmt.Sprintf("0000:%02X:00.0", 0xC0+i)
			}
			inv.GPUs = append(inv.GPUs, ig)
		}
		return inv
	}
	const rogue = "abuse-rogue-node"
	reports := []struct {
		path string
		body any
	}{
		{agentapi.HeartbeatPath, agentapi.HeartbeatRequest{NodeName: n.Name, AgentVersion: n.AgentVersion, GPUs: healthy(0)}},
		{agentapi.HeartbeatPath, agentapi.HeartbeatRequest{NodeName: n.Name, AgentVersion: n.AgentVersion, GPUs: healthy(-1),
			Workloads: []agentapi.WorkloadReport{{ID: e.fx.sharedVM, Generation: 0, State: agentapi.StateExited}}}},
		{agentapi.InventoryPath, inventory(n.Name, 1<<20, false)},
		{agentapi.InventoryPath, inventory(rogue, n.RAMGb, true)},
	}
	victimVMs := map[string]bool{}
	for _, v := range e.fx.file.VMs {
		if v.OrganizationID == e.fx.victimOrg {
			victimVMs[v.ID] = true
		}
	}
	leaks := 0
	err := e.set(ctx, r, len(reports), 1, func(ctx context.Context) {
		for i, rep := range reports {
			body, _ := json.Marshal(rep.body)
			status, b, err := e.do(ctx, i, http.MethodPost, rep.path, AgentKey, body)
			r.Statuses.Add(answer(status, err))
			for id := range victimVMs {
				if strings.Contains(string(b), id) {
					leaks++
					break
				}
			}
		}
	})
	if err != nil {
		return err
	}
	// What the victim sees now.
	var view struct {
		Data struct {
			VM   struct{ Status string } `json:"vm"`
			Node struct {
				RAMGb int `json:"ramGb"`
				GPUs  []struct{ Health string }
			} `json:"node"`
			Nodes []struct{ Name string } `json:"nodes"`
		} `json:"data"`
	}
	status, b, err := e.graphql(ctx, 0, e.fx.victimKey, `query($vm: ID!, $node: ID!) { vm(id: $vm) { status } node(id: $node) { ramGb gpus { health } } nodes { name } }`,
		map[string]any{"vm": e.fx.sharedVM, "node": n.ID})
	if err != nil || status != http.StatusOK || json.Unmarshal(b, &view) != nil {
		return fmt.Errorf("the victim's view: %d %v %.200s", status, err, b)
	}
	var harm []string
	if view.Data.VM.Status != "RUNNING" {
		harm = append(harm, "the victim's VM is "+strings.ToLower(view.Data.VM.Status))
	}
	failed := 0
	for _, g := range view.Data.Node.GPUs {
		if g.Health != "HEALTHY" {
			failed++
		}
	}
	if failed > 0 {
		harm = append(harm, fmt.Sprintf("%d of the node's GPUs failed", failed))
	}
	if view.Data.Node.RAMGb != n.RAMGb {
		harm = append(harm, fmt.Sprintf("the node's RAM is %d GB (was %d)", view.Data.Node.RAMGb, n.RAMGb))
	}
	for _, node := range view.Data.Nodes {
		if node.Name == rogue {
			harm = append(harm, "a rogue node registered")
		}
	}
	if leaks > 0 {
		harm = append(harm, fmt.Sprintf("%d answers named the victim's VM", leaks))
	}
	refused := r.Statuses.Count("401") + r.Statuses.Count("403")
	r.Outcome = fmt.Sprintf("%d of %d refused", refused, len(reports))
	if len(harm) > 0 {
		r.Outcome += "; " + strings.Join(harm, ", ")
	}
	r.OK = refused == len(reports) && len(harm) == 0
	return nil
}

// duplicateTenant has the platform operator create an organization with
// the victim's Run:ai tenant id (finding 11); when that works, a key of it
// counts the victim's pods.
func duplicateTenant(ctx context.Context, e *env, r *Result) error {
	org := "abuse-dup-" + strconv.Itoa(e.starts)
	var leaked int
	err := e.set(ctx, r, 1, 1, func(ctx context.Context) {
		body, _ := json.Marshal(map[string]any{"id": org, "name": "Duplicate", "tenantId": e.fx.victimTenant})
		status, _, err := e.do(ctx, 0, http.MethodPost, "/v1/admin/organizations", OperatorKey, body)
		r.Statuses.Add(answer(status, err))
		if status != http.StatusCreated {
			return
		}
		body, _ = json.Marshal(map[string]any{"organizationId": org, "permissions": []string{"workloads.read"}})
		_, b, err := e.do(ctx, 0, http.MethodPost, "/v1/admin/keys", OperatorKey, body)
		var key struct{ Key string }
		if err != nil || json.Unmarshal(b, &key) != nil || key.Key == "" {
			return
		}
		_, b, _ = e.do(ctx, 0, http.MethodGet, "/api/v1/workloads/pods/count", key.Key, nil)
		var count struct{ Count int }
		_ = json.Unmarshal(b, &count)
		leaked = count.Count
	})
	if leaked > 0 {
		r.Outcome = fmt.Sprintf("its key counts %d of the victim's %d pods", leaked, e.fx.victimPodCount)
	}
	r.OK = r.Statuses.Only("409")
	return err
}

// eventIDs has the attacker stop and restart its own VM with the victim's
// restarts in between, then read its VM's event log (finding 12): global
// ids count the victim's events.
func eventIDs(ctx context.Context, e *env, r *Result) error {
	const victimEvents = 3
	var ids []string
	err := e.set(ctx, r, 3+victimEvents, 1, func(ctx context.Context) {
		step := func(token, path string) {
			status, _, err := e.do(ctx, 0, http.MethodPost, path, token, nil)
			r.Statuses.Add(answer(status, err))
		}
		step(e.fx.attackerOperator, "/v1/vms/"+e.fx.attackerVM+"/stop")
		for i := 0; i < victimEvents; i++ {
			step(e.fx.victimKey, "/v1/vms/"+e.fx.victimVM+"/restart")
		}
		step(e.fx.attackerOperator, "/v1/vms/"+e.fx.attackerVM+"/restart")
		status, b, err := e.do(ctx, 0, http.MethodGet, "/v1/vms/"+e.fx.attackerVM+"/events?limit=500", ReaderKey, nil)
		r.Statuses.Add(answer(status, err))
		var page struct{ Events []struct{ ID string } }
		_ = json.Unmarshal(b, &page)
		for _, ev := range page.Events {
			ids = append(ids, ev.ID)
		}
	})
	if err != nil {
		return err
	}
	if r.Statuses.Count("200") != 2+victimEvents+1 || len(ids) < 2 {
		return fmt.Errorf("the steps answered %s and the log held %d events", r.Statuses.String(), len(ids))
	}
	a, errA := strconv.ParseInt(ids[len(ids)-2], 10, 64)
	b, errB := strconv.ParseInt(ids[len(ids)-1], 10, 64)
	if errA != nil || errB != nil {
		r.Outcome, r.OK = fmt.Sprintf("ids %q, %q: not numbers to subtract", ids[len(ids)-2], ids[len(ids)-1]), true
		return nil
	}
	r.Outcome = fmt.Sprintf("ids %d and %d: %d others between (the victim made %d)", a, b, b-a-1, victimEvents)
	r.OK = b-a-1 == 0
	return nil
}

// parallel runs fn(0 … n−1) at once and waits for them.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			fn(i)
		}(i)
	}
	wg.Wait()
}
