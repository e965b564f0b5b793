package sim

import (
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// eventSet is the event set go-nvml's simulated servers lack. Beyond
// queuing events it tracks when each one has been handled, so that whoever
// raised an event can wait for the agent to have acted on it: that is what
// makes "failed from the next heartbeat on" deterministic in tests and with
// --mock-xid.
type eventSet struct {
	mock.EventSet // the calls the agent never makes; they panic if made

	mu        sync.Mutex
	queue     []queuedEvent
	nextSeq   uint64
	delivered uint64 // seq of the last event Wait handed out
	waiters   []eventWaiter
	freed     bool
	notify    chan struct{}
	onFree    func(*eventSet)
}

type queuedEvent struct {
	seq  uint64
	data nvml.EventData
}

type eventWaiter struct {
	seq  uint64
	done chan struct{}
}

var _ nvml.EventSet = (*eventSet)(nil)

func newEventSet(onFree func(*eventSet)) *eventSet {
	return &eventSet{notify: make(chan struct{}, 1), onFree: onFree}
}

// post queues an event; the returned channel closes once the consumer has
// come back for the next event, i.e. has finished handling this one.
func (s *eventSet) post(data nvml.EventData) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := make(chan struct{})
	if s.freed {
		close(done)
		return done
	}
	s.nextSeq++
	s.queue = append(s.queue, queuedEvent{seq: s.nextSeq, data: data})
	s.waiters = append(s.waiters, eventWaiter{seq: s.nextSeq, done: done})
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return done
}

// Wait behaves like nvmlEventSetWait: the next queued event, or
// ERROR_TIMEOUT after timeoutms.
func (s *eventSet) Wait(timeoutms uint32) (nvml.EventData, nvml.Return) {
	deadline := time.NewTimer(time.Duration(timeoutms) * time.Millisecond)
	defer deadline.Stop()
	for {
		if e, ok := s.take(); ok {
			return e, nvml.SUCCESS
		}
		select {
		case <-s.notify:
		case <-deadline.C:
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
	}
}

// take marks everything delivered so far as handled, since the consumer is
// back asking for more, and pops the next event if there is one.
func (s *eventSet) take() (nvml.EventData, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(s.delivered)
	if s.freed || len(s.queue) == 0 {
		return nvml.EventData{}, false
	}
	e := s.queue[0]
	s.queue = s.queue[1:]
	s.delivered = e.seq
	return e.data, true
}

func (s *eventSet) releaseLocked(upTo uint64) {
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if w.seq <= upTo {
			close(w.done)
		} else {
			kept = append(kept, w)
		}
	}
	s.waiters = kept
}

// Free releases anyone still waiting on an event: nobody will handle it.
func (s *eventSet) Free() nvml.Return {
	s.mu.Lock()
	s.freed = true
	s.queue = nil
	s.releaseLocked(s.nextSeq)
	s.mu.Unlock()
	if s.onFree != nil {
		s.onFree(s)
	}
	return nvml.SUCCESS
}
