package sizedlru

import (
	"fmt"
	"sync"
	"testing"
)

func TestBoundedInBytes(t *testing.T) {
	c := New[string, int](100, 1000)
	for i := range 10 {
		c.Add(fmt.Sprint(i), i, 300)
	}
	// 300 bytes each: three fit in 1000, the newest three.
	if c.Len() != 3 || c.Bytes() != 900 {
		t.Fatalf("len %d bytes %d, want 3 and 900", c.Len(), c.Bytes())
	}
	for i := range 10 {
		_, ok := c.Get(fmt.Sprint(i))
		if want := i >= 7; ok != want {
			t.Errorf("entry %d kept: %v, want %v", i, ok, want)
		}
	}
}

func TestBoundedInEntries(t *testing.T) {
	c := New[string, int](2, 1<<20)
	c.Add("a", 1, 10)
	c.Add("b", 2, 20)
	c.Get("a") // b is now the least recently used
	c.Add("c", 3, 30)
	if _, ok := c.Get("b"); ok || c.Len() != 2 || c.Bytes() != 40 {
		t.Fatalf("b kept %v, len %d, bytes %d; want b evicted, 2 entries, 40 bytes", ok, c.Len(), c.Bytes())
	}
}

func TestReplaceCountsOnce(t *testing.T) {
	c := New[string, int](10, 100)
	c.Add("a", 1, 60)
	c.Add("a", 2, 30)
	if v, _ := c.Get("a"); v != 2 || c.Bytes() != 30 || c.Len() != 1 {
		t.Fatalf("value %d, bytes %d, len %d; want 2, 30, 1", v, c.Bytes(), c.Len())
	}
}

func TestTooLargeIsNotKept(t *testing.T) {
	c := New[string, int](10, 100)
	c.Add("small", 1, 50)
	if c.Add("big", 2, 101) {
		t.Fatal("an entry larger than the bound was kept")
	}
	if _, ok := c.Get("small"); !ok || c.Bytes() != 50 {
		t.Fatalf("the refused entry evicted others: bytes %d", c.Bytes())
	}
}

func TestConcurrent(t *testing.T) {
	c := New[int, int](50, 5000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := (g*7919 + i) % 300
				c.Add(k, i, int64(k%200))
				c.Get(k + 1)
			}
		}()
	}
	wg.Wait()
	if c.Len() > 50 || c.Bytes() > 5000 || c.Bytes() < 0 {
		t.Fatalf("len %d bytes %d out of bounds", c.Len(), c.Bytes())
	}
}
