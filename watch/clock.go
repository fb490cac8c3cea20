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
