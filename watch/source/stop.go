package source

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopped is what became of a process group that was asked to stop.
type stopped struct {
	// leaderExited: the process the group is named after exited within the
	// grace period, on SIGTERM.
	leaderExited bool
	took         time.Duration // until the group was gone, or the grace ended
	// killed lists the members that outlived the grace period and were sent
	// SIGKILL (the leader included, when it had not exited).
	killed []int
	// remain lists the members still alive after SIGKILL (a process stuck
	// in the kernel cannot be killed until it leaves it).
	remain []int
}

// pollMembers is how often a stopping group is looked at.
const pollMembers = 10 * time.Millisecond

// stopGroup ends the process group pgid: SIGTERM to every member, then,
// when any member is still alive after grace (the leader or a child that
// ignores SIGTERM, which the leader's exit does not take along), SIGKILL to
// the group. leaderDone is closed when the leader has exited and been
// reaped. A member the SIGTERM missed (lateMembers: one that joins the
// group after it, or runs another program since) is sent one of its own.
func stopGroup(pgid int, grace time.Duration, leaderDone <-chan struct{}) stopped {
	t0 := time.Now()
	late := newLateMembers(pgid)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	var res stopped
	deadline := time.Now().Add(grace)
	wake := leaderDone
	for {
		// One read of /proc serves both the late members' look and the
		// check that the group is gone.
		now := time.Now()
		exited := isClosed(leaderDone)
		var live []member
		if exited || late.due(now) {
			live = members(pgid)
		}
		late.signal(now, live)
		if exited && len(live) == 0 {
			res.leaderExited, res.took = true, time.Since(t0)
			return res
		}
		if !time.Now().Before(deadline) {
			res.leaderExited = exited
			break
		}
		if exited {
			// A closed channel is always ready: waiting on it would turn
			// the rest of the grace period into a busy loop over /proc.
			wake = nil
		}
		select {
		case <-wake:
		case <-time.After(pollMembers):
		}
	}
	res.took = time.Since(t0)
	res.killed = liveMembers(pgid)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	// SIGKILL takes effect as soon as a process returns from the kernel;
	// give that a moment, and say so when it does not happen.
	settle := time.Now().Add(2 * time.Second)
	for time.Now().Before(settle) {
		if isClosed(leaderDone) && len(liveMembers(pgid)) == 0 {
			return res
		}
		time.Sleep(pollMembers)
	}
	res.remain = liveMembers(pgid)
	return res
}

// lateMembers sends SIGTERM to the members of a stopping group that the
// group's SIGTERM missed. A shell that blocks signals around vfork (dash
// does) takes the group's SIGTERM only once its child exists, and the
// child, forked after the signal was sent, never gets it: `sh -c "echo up;
// sleep 30"` stopped as it started the sleep kept the sleep running for the
// whole grace period, about once in 100 stops on a loaded machine.
//
// A child caught between fork and exec loses the signal too: it still
// carries its shell's handler, which takes the signal, then drops its
// shell's traps, and the program it execs never sees it (dash, `trap
// 'sleep 30 & wait' TERM`: 7 stops in 300 on a loaded machine). A shell
// signalled as it sets a trap of its own, and that then execs, loses it
// the same way. So a member that runs another program than when it was
// last signalled, or than when the group was, is sent one more. (One that
// execs between a look and its signal, or between the first look and the
// group's signal, gets two.)
//
// The group is looked at again at doubling intervals from pollMembers,
// back to pollMembers after each signal: a late child comes, and execs, as
// soon as its shell runs again, and each look reads the whole of /proc.
type lateMembers struct {
	// signalled holds, for each member seen, the program it ran when it
	// was last signalled.
	signalled map[int]image
	every     time.Duration
	next      time.Time
}

// newLateMembers looks at group pgid before the group's own SIGTERM.
func newLateMembers(pgid int) *lateMembers {
	l := &lateMembers{signalled: map[int]image{}, every: pollMembers, next: time.Now()}
	for _, m := range members(pgid) {
		l.signalled[m.pid] = m.image
	}
	return l
}

// due reports whether the group is to be looked at now.
func (l *lateMembers) due(now time.Time) bool { return !now.Before(l.next) }

// signal sends SIGTERM to the members the group's SIGTERM missed, when a
// look is due; live is what members read of the group just now.
func (l *lateMembers) signal(now time.Time, live []member) {
	if !l.due(now) {
		return
	}
	sent := false
	for _, m := range live {
		if was, seen := l.signalled[m.pid]; seen && was.same(m.image) {
			continue
		}
		l.signalled[m.pid] = m.image
		_ = syscall.Kill(m.pid, syscall.SIGTERM)
		sent = true
	}
	if sent {
		l.every = pollMembers
	}
	l.next = now.Add(l.every)
	l.every *= 2
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// liveMembers lists the processes of group pgid that still run (zombies,
// which only wait to be reaped, are not counted). It reads /proc; where
// there is none it can only say whether the group exists at all.
func liveMembers(pgid int) []int {
	var pids []int
	for _, m := range members(pgid) {
		pids = append(pids, m.pid)
	}
	return pids
}

// member is a running process of a group, as /proc/<pid>/stat shows it.
type member struct {
	pid   int
	image image
}

// image tells the programs a process runs apart: its command name and
// where its code starts, which an exec changes (the name alone stays when
// a shell execs a shell). code is 0 where Linux does not say (to a reader
// who may not trace the process, as when it made itself undumpable, or
// as it exits), and then only the names are compared: a process that
// becomes undumpable has not run another program.
type image struct {
	name string
	code uint64
}

func (a image) same(b image) bool {
	return a.name == b.name && (a.code == 0 || b.code == 0 || a.code == b.code)
}

// members lists the live members of group pgid. Where there is no /proc,
// it holds the leader alone while the group exists, with no image.
func members(pgid int) []member {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return nil
		}
		return []member{{pid: pgid}}
	}
	var out []member
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it exited while the list was read
		}
		if m, ok := parseStat(pid, string(b), pgid); ok {
			out = append(out, m)
		}
	}
	return out
}

// parseStat reads a /proc/<pid>/stat line, "pid (comm) state ppid pgrp
// ..." (proc(5)), and says whether it is a live member of group pgid.
// comm may hold spaces and ')'.
func parseStat(pid int, st string, pgid int) (member, bool) {
	open, shut := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
	if open < 0 || shut < open {
		return member{}, false
	}
	// f[n-3] is field n of proc(5): 3 state, 5 pgrp, 26 startcode.
	f := strings.Fields(st[shut+1:])
	if len(f) < 3 || f[2] != strconv.Itoa(pgid) || f[0] == "Z" || f[0] == "X" {
		return member{}, false
	}
	m := member{pid: pid, image: image{name: st[open+1 : shut]}}
	if len(f) > 23 {
		m.image.code, _ = strconv.ParseUint(f[23], 10, 64)
	}
	return m, true
}

// describe says, for people, what stopping did. who names the leader.
func (r stopped) describe(who string, pgid int, grace time.Duration) string {
	var b strings.Builder
	others := without(r.killed, pgid)
	switch {
	case r.leaderExited && len(r.killed) == 0:
		fmt.Fprintf(&b, "%s exited on SIGTERM after %.1fs, with every process of its group", who, r.took.Seconds())
	case r.leaderExited:
		fmt.Fprintf(&b, "%s exited on SIGTERM, but %s of its group ignored SIGTERM for the %s grace period and %s sent SIGKILL",
			who, countPids(others, "other process", "other processes"), grace, wasWere(len(others)))
	default:
		fmt.Fprintf(&b, "%s ignored SIGTERM for the %s grace period; its process group (%s) was sent SIGKILL, and it exited on SIGKILL",
			who, grace, countPids(r.killed, "process", "processes"))
	}
	r.describeRemain(&b, pgid)
	return b.String()
}

// describeOrphans says, for people, what stopping did to a group whose
// leader had exited before it was asked to stop; orphans are the members
// that were still running then.
func (r stopped) describeOrphans(orphans []int, pgid int, grace time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s of its group %s still running: ", countPids(orphans, "other process", "other processes"), wasWere(len(orphans)))
	pronoun := "it"
	if len(orphans) > 1 {
		pronoun = "they"
	}
	switch {
	case len(r.killed) == 0:
		fmt.Fprintf(&b, "%s exited on SIGTERM after %.1fs", pronoun, r.took.Seconds())
	case samePids(r.killed, orphans):
		fmt.Fprintf(&b, "%s ignored SIGTERM for the %s grace period and %s sent SIGKILL", pronoun, grace, wasWere(len(r.killed)))
	default:
		fmt.Fprintf(&b, "%s ignored SIGTERM for the %s grace period and %s sent SIGKILL",
			countPids(r.killed, "process", "processes"), grace, wasWere(len(r.killed)))
		// killed may hold a process forked since orphans was listed.
		switch rest := len(orphans) - len(r.killed); {
		case rest == 1:
			b.WriteString(", the other exited on SIGTERM")
		case rest > 1:
			b.WriteString(", the others exited on SIGTERM")
		}
	}
	r.describeRemain(&b, pgid)
	return b.String()
}

// describeRemain adds what SIGKILL could not end, with the command that
// shows it.
func (r stopped) describeRemain(b *strings.Builder, pgid int) {
	if len(r.remain) > 0 {
		fmt.Fprintf(b, "; %s still %s after SIGKILL (stuck in the kernel?): see pgrep -a -g %d",
			countPids(r.remain, "process", "processes"), runOrRuns(len(r.remain)), pgid)
	}
}

// samePids reports whether a and b hold the same pids, in any order.
func samePids(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[int]bool, len(a))
	for _, p := range a {
		in[p] = true
	}
	for _, p := range b {
		if !in[p] {
			return false
		}
	}
	return true
}

func without(pids []int, pid int) []int {
	var out []int
	for _, p := range pids {
		if p != pid {
			out = append(out, p)
		}
	}
	return out
}

func countPids(pids []int, one, many string) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	noun := many
	if len(pids) == 1 {
		noun = one
	}
	return fmt.Sprintf("%d %s (pid %s)", len(pids), noun, strings.Join(s, ", "))
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func runOrRuns(n int) string {
	if n == 1 {
		return "runs"
	}
	return "run"
}
