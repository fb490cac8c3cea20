package fakesglang

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Replay writes steps to w at their offsets divided by speedup (1000 turns a
// 68 s start into 68 ms), so tests see the real order and rhythm of a start
// without waiting for it. It stops early when ctx ends.
func Replay(ctx context.Context, w io.Writer, steps []Step, speedup float64) error {
	start := time.Now()
	for _, st := range steps {
		due := start.Add(time.Duration(float64(st.At) / speedup))
		if d := time.Until(due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		if _, err := io.WriteString(w, st.Line+"\n"); err != nil {
			return fmt.Errorf("replaying log line: %w", err)
		}
	}
	return nil
}
