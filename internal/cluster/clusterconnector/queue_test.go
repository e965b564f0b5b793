package clusterconnector

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Changes from many informer goroutines coalesce per pod: each key is
// taken once however often it changed, oldest first, while a reader
// drains concurrently (-race).
func TestQueueCoalesces(t *testing.T) {
	q := newQueue()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				q.add(fmt.Sprintf("ns/pod-%d", (i+g)%100))
			}
		})
	}
	seen := map[string]int{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			keys, _ := q.take(7)
			for _, k := range keys {
				seen[k]++
			}
		}
	}()
	wg.Wait()
	<-done
	keys, _ := q.take(1000)
	for _, k := range keys {
		seen[k]++
	}
	if len(seen) != 100 {
		t.Fatalf("%d keys seen, want 100", len(seen))
	}
	if q.len() != 0 {
		t.Fatalf("%d left", q.len())
	}
	// Taken while still changing, a key may come again, never twice in one take.
	q.add("ns/a")
	q.add("ns/b")
	q.add("ns/a")
	if keys, _ := q.take(10); len(keys) != 2 || keys[0] != "ns/a" || keys[1] != "ns/b" {
		t.Fatalf("take: %q", keys)
	}
}

// A deleted pod is its own key, by UID, with its final state; a snapshot
// takes the deleted pods not yet sent and empties the queue.
func TestQueueDeleted(t *testing.T) {
	q := newQueue()
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: types.UID("u1")}}
	q.add("ns/x")
	q.remove(pod, at)
	keys, deleted := q.take(1)
	if len(keys) != 1 || keys[0] != "ns/x" || len(deleted) != 0 {
		t.Fatalf("first take: %q %v", keys, deleted)
	}
	keys, deleted = q.take(5)
	if len(keys) != 1 || deleted[keys[0]].pod != pod || !deleted[keys[0]].at.Equal(at) {
		t.Fatalf("second take: %q %v", keys, deleted)
	}
	q.add("ns/y")
	q.remove(pod, at)
	if g := q.reset(); len(g) != 1 || g[0].pod != pod || q.len() != 0 {
		t.Fatalf("reset: %v, %d left", g, q.len())
	}
}
