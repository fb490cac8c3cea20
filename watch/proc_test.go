package watch

import (
	"fmt"
	"syscall"
)

// stopPidFrom kills the process group named in a "pid N" message; tests use
// it so that a server left running on success does not outlive them.
func stopPidFrom(msg string) {
	var pid int
	if _, err := fmt.Sscanf(msg[indexOf(msg, "pid "):], "pid %d", &pid); err == nil && pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return 0
}
