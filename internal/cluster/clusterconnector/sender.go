package clusterconnector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gpugraph/internal/cluster/clusterbatch"
)

// sender posts batches to the server's sync path, in order, one at a
// time, and owns the sequence.
type sender struct {
	url        string // …/api/v1/clusters/{clusterId}/sync
	credential func() (string, error)
	client     *http.Client
	log        *slog.Logger
	minBackoff time.Duration
	maxBackoff time.Duration
	seq        int64 // the last sequence sent
}

// errRefused is a batch the server will never take as it is (400, 403,
// 413): sending it again would be refused again.
var errRefused = errors.New("the server refused the batch")

// send posts b with the next sequence until the server takes it: network
// errors, 5xx and 429 are retried with backoff (the same body, so a batch
// the server applied but whose answer was lost answers the same again); a
// refused credential is read again (a rotated Secret) and retried; a 409
// naming a newer sequence resumes above it. It answers errRefused for an
// answer no retry changes, ctx's error when ctx ends.
func (s *sender) send(ctx context.Context, b *clusterbatch.Batch) (*answer, error) {
	s.seq++
	b.Sequence = s.seq
	body, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	wait := s.minBackoff
	for attempt := 1; ; attempt++ {
		a, retryAfter, err := s.post(ctx, body)
		var stale *staleSequence
		switch {
		case err == nil:
			return a, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &stale):
			s.log.Warn("the server holds a newer sequence: resuming above it", "sent", b.Sequence, "current", stale.current)
			s.seq = max(s.seq, stale.current) + 1
			b.Sequence = s.seq
			if body, err = json.Marshal(b); err != nil {
				return nil, err
			}
			continue
		case errors.Is(err, errRefused):
			return nil, err
		}
		if retryAfter > wait {
			wait = min(retryAfter, s.maxBackoff)
		}
		jittered := wait/2 + rand.N(wait/2+1)
		s.log.Warn("sync failed, retrying", "sequence", b.Sequence, "kind", b.Kind, "attempt", attempt, "in", jittered.Round(time.Millisecond), "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(jittered):
		}
		wait = min(2*wait, s.maxBackoff)
	}
}

// answer is the part of the server's answer the connector logs.
type answer struct {
	Sequence         int64 `json:"sequence"`
	PodsCreated      int   `json:"podsCreated"`
	PodsUpdated      int   `json:"podsUpdated"`
	PodsUnchanged    int   `json:"podsUnchanged"`
	PodsDeleted      int64 `json:"podsDeleted"`
	SnapshotComplete bool  `json:"snapshotComplete"`
}

type staleSequence struct{ current int64 }

func (e *staleSequence) Error() string {
	return fmt.Sprintf("stale sequence, the server's is %d", e.current)
}

// post sends body once: the answer, or an error with how long the server
// asked to wait.
func (s *sender) post(ctx context.Context, body []byte) (*answer, time.Duration, error) {
	cred, err := s.credential()
	if err != nil {
		return nil, 0, fmt.Errorf("read the cluster credential: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+cred)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, 0, err
	}
	var e struct {
		Message string `json:"message"`
		Details string `json:"details"`
	}
	_ = json.Unmarshal(out, &e)
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(out))
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	switch st := resp.StatusCode; {
	case st == http.StatusOK:
		var a answer
		if err := json.Unmarshal(out, &a); err != nil {
			return nil, 0, fmt.Errorf("the server's answer is not JSON: %w", err)
		}
		return &a, 0, nil
	case st == http.StatusConflict:
		if n, err := strconv.ParseInt(e.Details, 10, 64); err == nil && n > 0 {
			return nil, 0, &staleSequence{current: n}
		}
		return nil, 0, fmt.Errorf("%w: 409 %s", errRefused, e.Message)
	case st == http.StatusUnauthorized:
		// Revoked, or rotated and the new credential not yet mounted: retried
		// with backoff, the credential read again each time.
		return nil, 0, fmt.Errorf("401 %s", e.Message)
	case st == http.StatusTooManyRequests || st >= 500:
		return nil, time.Duration(retryAfter) * time.Second, fmt.Errorf("%d %s", st, e.Message)
	default:
		return nil, 0, fmt.Errorf("%w: %d %s", errRefused, st, e.Message)
	}
}
