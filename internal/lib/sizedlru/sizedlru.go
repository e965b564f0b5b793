// Package sizedlru is an LRU cache bounded twice: by how many entries it
// holds and by how many bytes they hold, as each Add estimates them. A
// count alone bounds nothing when entries differ in size by a thousand
// times (a parsed GraphQL document of 100 KB holds 2 MB of heap): a
// thousand large entries then hold gigabytes.
package sizedlru

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// A Cache is safe for concurrent use.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[K, entry[V]]
	maxBytes int64
	bytes    int64
}

type entry[V any] struct {
	v    V
	size int64
}

// New makes a cache of at most maxEntries entries (at least 1) and
// maxBytes bytes.
func New[K comparable, V any](maxEntries int, maxBytes int64) *Cache[K, V] {
	c := &Cache[K, V]{maxBytes: maxBytes}
	// NewLRU fails only for a size below 1.
	c.lru, _ = simplelru.NewLRU(max(maxEntries, 1), func(_ K, e entry[V]) { c.bytes -= e.size })
	return c
}

// Get answers k's value and marks it the most recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(k)
	return e.v, ok
}

// Add keeps v under k, counting size bytes for it (replacing what k held),
// and evicts the least recently used entries until both bounds hold. An
// entry larger than the whole byte bound is not kept: Add answers false.
func (c *Cache[K, V]) Add(k K, v V, size int64) bool {
	if size > c.maxBytes {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lru.Peek(k); ok {
		// simplelru replaces a present key without the eviction callback.
		c.bytes -= old.size
	}
	c.lru.Add(k, entry[V]{v: v, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.lru.RemoveOldest()
	}
	return true
}

// Len is how many entries the cache holds.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes is the sum of the sizes of the entries the cache holds.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
