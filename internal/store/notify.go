package store

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// Topic is what a notification is about; on PostgreSQL each is a NOTIFY
// channel. Payloads are lossy (a listener that reconnects misses what was
// sent meanwhile), so a notification only says "read again from where you
// were": the log, or the credential, is the source of truth.
type Topic uint8

// The topics of the broker.
const (
	// TopicVMEvents: an append to vm_events, notified after its commit
	// (noteAfterCommit; no payload).
	TopicVMEvents Topic = 1 << iota
	// TopicNodeEvents: an append to node_events (payload: its last id).
	TopicNodeEvents
	// TopicCredentials: an API key or an organization's state changed;
	// open streams check their credential again.
	TopicCredentials
	// TopicBillingEvents: an append to billing_events (payload: its id).
	TopicBillingEvents
)

var topics = []Topic{TopicVMEvents, TopicNodeEvents, TopicCredentials, TopicBillingEvents}

func (t Topic) channel() string {
	switch t {
	case TopicVMEvents:
		return "gpugraph_vm_events"
	case TopicNodeEvents:
		return "gpugraph_node_events"
	case TopicBillingEvents:
		return "gpugraph_billing_events"
	default:
		return "gpugraph_credentials"
	}
}

func topicOf(channel string) Topic {
	for _, t := range topics {
		if t.channel() == channel {
			return t
		}
	}
	return 0
}

// Notifications is the process-wide broker: one LISTEN connection per
// process on PostgreSQL, an in-process fan-out after commit on SQLite.
// Subscribers get a wake-up channel per topic that coalesces: one pending
// wake stands for any number of notifications.
type Notifications struct {
	mu   sync.Mutex
	subs map[chan struct{}]Topic
	stop context.CancelFunc
	done chan struct{}
}

// Wake returns a channel that receives after every notification of topic
// committed from now on (coalesced), and the function that stops it.
func (n *Notifications) Wake(topic Topic) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	n.subs[ch] = topic
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		delete(n.subs, ch)
		n.mu.Unlock()
	}
}

// broadcast wakes every subscriber of the topics set in mask without ever
// blocking on one.
func (n *Notifications) broadcast(mask Topic) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch, t := range n.subs {
		if t&mask == 0 {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

const allTopics = TopicVMEvents | TopicNodeEvents | TopicCredentials | TopicBillingEvents

// Notifications answers the store's broker, starting it (and on
// PostgreSQL its listener connection) on first use.
func (s *Store) Notifications() *Notifications {
	s.notifyOnce.Do(func() {
		n := &Notifications{subs: map[chan struct{}]Topic{}, done: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		n.stop = cancel
		if s.Dialect == Postgres {
			go n.listen(ctx, s.url)
		} else {
			close(n.done)
		}
		s.notes.Store(n)
	})
	return s.notes.Load()
}

// listen holds the process's one LISTEN connection, reconnecting with a
// backoff; every (re)connect wakes everyone, since what was notified while
// it was down is lost.
func (n *Notifications) listen(ctx context.Context, url string) {
	defer close(n.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.listenOnce(ctx, url)
		if ctx.Err() != nil {
			return
		}
		slog.Warn("event log listener lost its connection; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (n *Notifications) listenOnce(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, t := range topics {
		// The channel names are constants, not input.
		if _, err := conn.Exec(ctx, "LISTEN "+t.channel()); err != nil {
			return err
		}
	}
	n.broadcast(allTopics)
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		n.broadcast(topicOf(note.Channel))
	}
}

// close stops the listener and waits for it.
func (n *Notifications) close() {
	n.stop()
	<-n.done
}

// notedKey holds, in a transaction's context, the topics it notified (a
// *Topic mask), for tx to broadcast after commit on SQLite, and, on
// PostgreSQL, those noteAfterCommit left to the commit.
type notedKey struct{}

// noteAfterCommit follows a change of topic as note does, except that on
// PostgreSQL the NOTIFY is not queued in the transaction: tx sends it
// after the commit (notifyAfterCommit). A transaction that NOTIFYs takes,
// as its commit starts, a lock of the whole cluster that it holds until
// its commit has ended (PostgreSQL's async.c serializes the writers of
// its notification queue that way), WAL flush included: every transition
// notified, so transitions committed one at a time however many writers
// there were, whatever the event logs' own order allowed. A notification
// only says "read again from where you were" and carries nothing a
// listener reads, so one sent after the commit does the same work. What
// it gives up: a process that dies between a commit and its send leaves
// the other replicas' listeners unwoken until the next transition's
// notification, from any process, or a listener's reconnect, wakes them;
// none of them misses an event, each reads on from its cursor then
// (decision 0047). Outside tx (no mask in the context) it is note.
func (s *Store) noteAfterCommit(db *gorm.DB, topic Topic, lastID int64) error {
	if mask, ok := db.Statement.Context.Value(notedKey{}).(*Topic); ok && !s.notifyInTx {
		*mask |= topic
		return nil
	}
	return s.note(db, topic, lastID)
}

// lateNotes sends the notifications noteAfterCommit left to the commit,
// coalesced: at most one sender per process, each round of it carrying
// every topic noted since the last, so that any number of commits costs
// the sender's pace, not a statement each.
type lateNotes struct {
	mu      sync.Mutex
	pending Topic
	sending bool
	done    sync.WaitGroup
}

// notifyAfterCommit sends, on PostgreSQL, the NOTIFY of the topics in
// mask, committed just now, from a sender of its own; the caller does not
// wait for it.
func (s *Store) notifyAfterCommit(mask Topic) {
	l := &s.late
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending |= mask
	if l.sending {
		return
	}
	l.sending = true
	l.done.Add(1)
	go s.sendLateNotes()
}

// sendLateNotes sends what is pending until nothing is. Each NOTIFY is a
// transaction of its own, committed without waiting for its WAL flush
// (synchronous_commit off for it alone): a notification lost to a crash
// of the database is one its listeners' reconnect makes good anyway. It
// runs on the pool's connections but outside gorm, so it is none of the
// statements a request is counted for.
func (s *Store) sendLateNotes() {
	l := &s.late
	defer l.done.Done()
	for {
		l.mu.Lock()
		mask := l.pending
		l.pending = 0
		if mask == 0 {
			l.sending = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		sqlDB, err := s.DB.DB()
		for _, t := range topics {
			if err != nil || mask&t == 0 {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = sqlDB.ExecContext(ctx, "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')", t.channel())
			cancel()
		}
		if err != nil {
			slog.Warn("a notification after commit was not sent; its listeners wake at the next", "err", err)
		}
	}
}

// note follows a change of topic in the transaction db: on PostgreSQL it
// queues a NOTIFY, which PostgreSQL delivers at commit (and never for a
// rollback); on SQLite it marks the transaction so tx wakes the in-process
// subscribers after commit.
func (s *Store) note(db *gorm.DB, topic Topic, lastID int64) error {
	if s.Dialect == Postgres {
		return db.Exec("SELECT pg_notify(?, ?)", topic.channel(), strconv.FormatInt(lastID, 10)).Error
	}
	if mask, ok := db.Statement.Context.Value(notedKey{}).(*Topic); ok {
		*mask |= topic
	}
	return nil
}
