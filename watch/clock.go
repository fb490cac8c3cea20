package watch

import "time"

// Clock is the watch's only view of time, so that tests can replay a ten
// minute start in microseconds and get the same output every run.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a
	// function that releases the timer early.
	After(d time.Duration) (<-chan time.Time, func())
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// smokeClock is a Clock that is told when a smoke request goes out and when
// its answer is taken. A replay's clock (the tests') holds time still in
// between: a replayed log has no real time to pass while the request is out,
// so its lines and its end wait for the answer, as a real log's would not
// need to. The wall clock needs no telling.
type smokeClock interface {
	smokeOut(out bool)
}

// smokeOut tells the clock, when it wants to know, that a smoke request
// went out (out) or that its answer was taken.
func smokeOut(c Clock, out bool) {
	if sc, ok := c.(smokeClock); ok {
		sc.smokeOut(out)
	}
}
