package clusterconnector

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// queue is the pods changed since they were last sent, coalesced: a pod
// changed a hundred times before its batch leaves is sent once, in its
// latest state, which is read from the informer's cache when the batch
// is built (never from the event, which may be older than the cache).
// A deleted pod keeps its final state here until it is sent, since the
// cache no longer has it.
type queue struct {
	mu      sync.Mutex
	order   []string            // keys in the order first changed
	pending map[string]struct{} // the keys in order
	deleted map[string]gone     // by deletion key (deletedKey)
	wake    chan struct{}       // a send after each change, dropped when one waits
}

// gone is a deleted pod's final state and when it went.
type gone struct {
	pod *corev1.Pod
	at  time.Time
}

func newQueue() *queue {
	return &queue{pending: map[string]struct{}{}, deleted: map[string]gone{}, wake: make(chan struct{}, 1)}
}

// deletedKey is a deleted pod's key: by UID, as a pod made again under the
// same name is another pod.
func deletedKey(uid types.UID) string { return "deleted/" + string(uid) }

// add marks the pod at key (namespace/name) changed.
func (q *queue) add(key string) {
	q.mu.Lock()
	q.push(key)
	q.mu.Unlock()
}

// remove records pod's deletion at at.
func (q *queue) remove(pod *corev1.Pod, at time.Time) {
	q.mu.Lock()
	k := deletedKey(pod.UID)
	q.deleted[k] = gone{pod: pod, at: at}
	q.push(k)
	q.mu.Unlock()
}

func (q *queue) push(key string) {
	if _, ok := q.pending[key]; !ok {
		q.pending[key] = struct{}{}
		q.order = append(q.order, key)
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// len is how many pods wait.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// take removes up to n keys, oldest first, with the final states of the
// deleted ones among them.
func (q *queue) take(n int) (keys []string, deleted map[string]gone) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.order))
	keys = append([]string(nil), q.order[:n]...)
	q.order = q.order[n:]
	deleted = map[string]gone{}
	for _, k := range keys {
		delete(q.pending, k)
		if g, ok := q.deleted[k]; ok {
			deleted[k] = g
			delete(q.deleted, k)
		}
	}
	return keys, deleted
}

// reset empties the queue for a snapshot, answering the deleted pods not
// yet sent (a snapshot names them with their deletion time; the rest it
// reads from the cache).
func (q *queue) reset() []gone {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]gone, 0, len(q.deleted))
	for _, k := range q.order {
		if g, ok := q.deleted[k]; ok {
			out = append(out, g)
		}
	}
	q.order, q.pending, q.deleted = nil, map[string]struct{}{}, map[string]gone{}
	return out
}
