package servertest

import (
	"bytes"
	"io"
	"net/http"
	"sync"

	"gpugraph/internal/lib/reqid"
	"gpugraph/internal/services/idempotency"
)

// Answer is one HTTP answer.
type Answer struct {
	Status int
	Body   string
	Header http.Header
}

// Replayed reports whether the answer is a kept one given again
// (Idempotent-Replayed: true).
func (a Answer) Replayed() bool { return a.Header.Get(idempotency.ReplayedHeader) == "true" }

// RaceKey sends n copies of one request (body, when not nil, as JSON) at
// once, as token's caller, all with Idempotency-Key key: each on a
// connection of its own, released together. It answers them in the
// order they were made.
func (e *Env) RaceKey(n int, method, path, token, key string, body []byte) []Answer {
	e.T.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	answers := make([]Answer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r io.Reader
			if body != nil {
				r = bytes.NewReader(body)
			}
			req, err := http.NewRequest(method, e.Srv.URL+path, r)
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set(reqid.Header, RequestID)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set(idempotency.Header, key)
			if body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			<-start
			resp, err := client.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			answers[i], errs[i] = Answer{Status: resp.StatusCode, Body: string(b), Header: resp.Header}, err
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			e.T.Fatalf("racing request %d of %d: %v", i+1, n, err)
		}
	}
	return answers
}

// KeyRaceOutcome is what a race of one key's requests answered: the
// one that acted (200, not a replay), and how many were replays of it and
// how many were refused in use.
type KeyRaceOutcome struct {
	Acted          Answer
	Replays, InUse int
}

// CheckKeyRace fails the test unless exactly one of answers acted (200,
// not a replay), every replay answers its body byte for byte, and every
// other answer is a 409 with Retry-After: 1 that inUse accepts (the
// refusal of a key still in flight).
func (e *Env) CheckKeyRace(answers []Answer, inUse func(Answer) bool) KeyRaceOutcome {
	e.T.Helper()
	var out KeyRaceOutcome
	acted := 0
	for _, a := range answers {
		if a.Status == http.StatusOK && !a.Replayed() {
			acted++
			out.Acted = a
		}
	}
	if acted != 1 {
		e.T.Errorf("%d of %d racing requests acted, want 1", acted, len(answers))
	}
	for _, a := range answers {
		switch {
		case a.Status == http.StatusOK && !a.Replayed():
		case a.Status == http.StatusOK && a.Body == out.Acted.Body:
			out.Replays++
		case a.Status == http.StatusConflict && a.Header.Get("Retry-After") == "1" && inUse(a):
			out.InUse++
		default:
			e.T.Errorf("a racing request answered %d %s (replayed %v, Retry-After %q), want the one that acted's replay or in use",
				a.Status, a.Body, a.Replayed(), a.Header.Get("Retry-After"))
		}
	}
	return out
}
