package watch

import (
	"context"
	"sync"
	"time"

	"github.com/mlagen/mlagen/watch/fakesglang"
	"github.com/mlagen/mlagen/watch/source"
)

// fakeClock is a Clock that moves only when a test source moves it. It
// counts After calls: the watch loop calls After exactly once each time it
// is about to wait, so a count that went up means the loop has finished
// with everything it was given. That handshake makes replays deterministic.
type fakeClock struct {
	mu      sync.Mutex
	cond    *sync.Cond
	now     time.Time
	waiters []*waiter
	afters  int
	// held: a smoke request is out, and time stands still until the loop
	// has taken its answer and waits again (release: at its next After).
	held, release bool
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	c := &fakeClock{now: time.Date(2026, 6, 17, 22, 6, 31, 0, time.UTC)}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.afters++
	if c.release {
		c.held, c.release = false, false
	}
	c.cond.Broadcast()
	w := &waiter{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		w.ch <- c.now
		return w.ch, func() {}
	}
	c.waiters = append(c.waiters, w)
	return w.ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, x := range c.waiters {
			if x == w {
				c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
				break
			}
		}
	}
}

// smokeOut holds time still from a smoke request's sending until the loop,
// having taken its answer, waits again: the request takes no replayed time,
// so that what a replay does next comes after the answer, every run.
func (c *fakeClock) smokeOut(out bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if out {
		c.held, c.release = true, false
	} else if c.held {
		c.release = true
	}
	c.cond.Broadcast()
}

// waitReleased blocks while time is held, or until ctx ends.
func (c *fakeClock) waitReleased(ctx context.Context) bool {
	return c.waitUntil(ctx, func() bool { return !c.held })
}

// waitUntil blocks until done (called with c.mu held) is true, or ctx ends.
func (c *fakeClock) waitUntil(ctx context.Context, done func() bool) bool {
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for !done() {
		if ctx.Err() != nil {
			return false
		}
		c.cond.Wait()
	}
	return true
}

func (c *fakeClock) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.afters
}

// waitAfters blocks until After has been called n times in all, or ctx ends.
func (c *fakeClock) waitAfters(ctx context.Context, n int) bool {
	return c.waitUntil(ctx, func() bool { return c.afters >= n })
}

// advanceTo moves time to t, stopping at each timer on the way and letting
// the loop react to it before going on, as real time would.
func (c *fakeClock) advanceTo(ctx context.Context, t time.Time) bool {
	for {
		if !c.waitReleased(ctx) {
			return false
		}
		c.mu.Lock()
		var next *waiter
		for _, w := range c.waiters {
			if !w.at.After(t) && (next == nil || w.at.Before(next.at)) {
				next = w
			}
		}
		if next == nil {
			if t.After(c.now) {
				c.now = t
			}
			c.mu.Unlock()
			return true
		}
		if next.at.After(c.now) {
			c.now = next.at
		}
		var keep []*waiter
		for _, w := range c.waiters {
			if w.at.After(c.now) {
				keep = append(keep, w)
			} else {
				w.ch <- c.now
			}
		}
		c.waiters = keep
		n := c.afters
		c.mu.Unlock()
		if !c.waitAfters(ctx, n+1) {
			return false
		}
	}
}

// replay is a Source that plays log steps on the fake clock, each line
// delivered when its time comes and handled before time moves on.
type replay struct {
	clk   *fakeClock
	steps []fakesglang.Step
	// then says what happens after the last step: with hang > 0 time
	// runs on that long and the log says nothing more; otherwise Run
	// returns end (nil for a source that just stops).
	hang time.Duration
	end  error

	stopped int // Stop calls, for the Stopper variant
}

func (r *replay) Describe() string { return "replayed log" }

func (r *replay) Run(ctx context.Context, out chan<- source.Event) error {
	start := r.clk.Now()
	if !r.clk.waitAfters(ctx, 1) {
		return nil
	}
	for _, st := range r.steps {
		if !r.clk.advanceTo(ctx, start.Add(st.At)) {
			return nil
		}
		n := r.clk.count()
		select {
		case out <- source.Event{Line: st.Line}:
		case <-ctx.Done():
			return nil
		}
		if !r.clk.waitAfters(ctx, n+1) {
			return nil
		}
	}
	if r.hang > 0 {
		r.clk.advanceTo(ctx, r.clk.Now().Add(r.hang))
		<-ctx.Done()
		return nil
	}
	return r.end
}

// stoppingReplay is a replay that pretends to have started the server.
type stoppingReplay struct{ *replay }

func (s stoppingReplay) Stop() string { s.stopped++; return "stopped the fake server" }
