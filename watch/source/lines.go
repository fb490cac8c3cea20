package source

import "bytes"

// maxLine bounds a line held in memory, so that a binary blob or a runaway
// progress bar cannot grow memory without end.
const maxLine = 1 << 20

// lineOverlap is how much of a cut line's piece the next piece repeats: more
// than any phrase the watch looks for, so that a phrase the cap cuts in two
// is whole in the second piece.
const lineOverlap = 4 << 10

// lineSplitter turns a byte stream into line events. A line longer than
// maxLine is delivered in pieces of maxLine bytes, each after the first
// marked Continued and starting with the last lineOverlap bytes of the piece
// before it.
type lineSplitter struct {
	partial []byte
	cont    bool // the next event continues a cut line
	seen    int  // leading bytes of partial already delivered (the overlap)
}

// feed splits data; emit returns false when nothing more can be delivered.
func (s *lineSplitter) feed(data []byte, emit func(Event) bool) bool {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			s.partial = append(s.partial, data...)
			for len(s.partial) > maxLine {
				if !s.cut(emit) {
					return false
				}
			}
			return true
		}
		line := append(s.partial, data[:i]...)
		ev := Event{Line: string(bytes.TrimSuffix(line, []byte("\r"))), Continued: s.cont}
		fresh := !s.cont || len(line) > s.seen
		s.partial, s.cont, s.seen = nil, false, 0
		data = data[i+1:]
		if fresh && !emit(ev) {
			return false
		}
	}
	return true
}

// cut delivers the first maxLine bytes of an over-long line and keeps the
// rest, with the overlap, in a buffer of its own (so the large one is freed).
func (s *lineSplitter) cut(emit func(Event) bool) bool {
	ev := Event{Line: string(s.partial[:maxLine]), Continued: s.cont}
	s.partial = append([]byte(nil), s.partial[maxLine-lineOverlap:]...)
	s.cont, s.seen = true, lineOverlap
	return emit(ev)
}

// flush delivers a last line that has no newline (yet).
func (s *lineSplitter) flush(emit func(Event) bool) {
	if len(s.partial) > s.seen {
		emit(Event{Line: string(s.partial), Continued: s.cont})
	}
	s.partial, s.cont, s.seen = nil, false, 0
}
