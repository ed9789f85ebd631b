package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one process found under /proc.
type Process struct {
	PID     int
	PPID    int
	State   byte // as in /proc/PID/stat: R, S, D, Z, ...
	Cmdline string
	// RSS is the resident set size in bytes (0 when unknown, e.g. zombies).
	// It counts shared file pages (the multi-call localcluster binary) in
	// every process that maps them, so a sum over processes overstates.
	RSS int64
	// RSSAnon is the anonymous part of RSS: heap and stacks, private to
	// the process for the programs run here.
	RSSAnon int64
}

func (p Process) String() string {
	cmd := p.Cmdline
	if len(cmd) > 160 {
		cmd = cmd[:157] + "..."
	}
	return fmt.Sprintf("pid %d (%s)", p.PID, cmd)
}

// procMatcher decides which processes belong to one run. Two independent
// signs are used because each can miss: a process may rewrite or clear its
// environment, and a process may have a command line that names nothing of
// the run (the test command, terraform, a provider plugin).
type procMatcher struct {
	// marker is an environment entry ("NAME=value") set on every process the
	// run starts and inherited by their descendants, detached or not.
	marker string
	// dir is the run's directory; every cluster component names files in it
	// on its command line.
	dir string
	// exclude lists processes that are never leaks: this process and the
	// watchdog.
	exclude map[int]bool
}

// Leftovers lists the live processes of a run other than the caller: those
// carrying the run's marker (runID as in Env.RunID) or naming dir (its run
// directory) on their command line. It is the check Env.Stop makes, for a
// process that tears down an environment another process started (the
// local demo's `down`).
func Leftovers(runID, dir string) ([]Process, error) {
	m := procMatcher{dir: dir, exclude: map[int]bool{os.Getpid(): true}}
	if runID != "" {
		m.marker = MarkerVar + "=" + runID
	}
	return scanProcesses("/proc", m)
}

// scanProcesses lists the live processes under procRoot (normally /proc)
// that match m. Processes that vanish while being read are skipped, and so
// are zombies: they are dead, only waiting for their parent to reap them.
func scanProcesses(procRoot string, m procMatcher) ([]Process, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, err
	}
	var found []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || m.exclude[pid] {
			continue
		}
		p, environ, err := readProcess(procRoot, pid)
		if err != nil || p.State == 'Z' || p.State == 'X' {
			continue
		}
		if m.matches(p.Cmdline, environ) {
			found = append(found, p)
		}
	}
	return found, nil
}

func (m procMatcher) matches(cmdline string, environ []byte) bool {
	if m.dir != "" && strings.Contains(cmdline, m.dir) {
		return true
	}
	if m.marker == "" {
		return false
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if string(kv) == m.marker {
			return true
		}
	}
	return false
}

// readProcess reads what scanProcesses needs about one pid. The command line
// is returned with its NUL separators turned into spaces.
func readProcess(procRoot string, pid int) (Process, []byte, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Process{}, nil, err
	}
	p := Process{PID: pid}
	if err := parseStat(stat, &p); err != nil {
		return Process{}, nil, err
	}
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return Process{}, nil, err
	}
	p.Cmdline = strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	// environ is unreadable for other users' processes; such a process was
	// not started by this run (which runs as one user), so "no environment"
	// is the right answer.
	environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
	if status, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
		p.RSS = statusBytes(status, "VmRSS")
		p.RSSAnon = statusBytes(status, "RssAnon")
	}
	return p, environ, nil
}

// parseStat extracts state and parent pid from /proc/PID/stat. The command
// name in parentheses may itself contain spaces and parentheses, so fields
// are counted from the last ')'.
func parseStat(stat []byte, p *Process) error {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return errors.New("malformed stat")
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 || len(fields[0]) != 1 {
		return errors.New("malformed stat")
	}
	p.State = fields[0][0]
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return fmt.Errorf("malformed stat: %w", err)
	}
	p.PPID = ppid
	return nil
}

// statusBytes returns a "<key>: <n> kB" line of /proc/PID/status in bytes,
// 0 when absent (kernel threads have no memory lines).
func statusBytes(status []byte, key string) int64 {
	for line := range strings.SplitSeq(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, key+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb * 1024
	}
	return 0
}

// processAlive reports whether pid exists and is not a zombie. kill(pid, 0)
// alone is not enough: it succeeds for zombies.
func processAlive(procRoot string, pid int) bool {
	stat, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	var p Process
	if parseStat(stat, &p) != nil {
		return false
	}
	return p.State != 'Z' && p.State != 'X'
}

// killProcesses sends SIGTERM to each process, waits up to grace for them
// to exit, then SIGKILLs the rest and waits briefly for the kernel to remove
// them. It returns the processes that survived even SIGKILL (normally none).
func killProcesses(procs []Process, grace time.Duration) []Process {
	signalAll := func(sig syscall.Signal) {
		for _, p := range procs {
			// ESRCH means it is already gone, which is the goal.
			_ = syscall.Kill(p.PID, sig)
		}
	}
	waitGone := func(d time.Duration) []Process {
		deadline := time.Now().Add(d)
		for {
			var alive []Process
			for _, p := range procs {
				if processAlive("/proc", p.PID) {
					alive = append(alive, p)
				}
			}
			if len(alive) == 0 || time.Now().After(deadline) {
				return alive
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	signalAll(syscall.SIGTERM)
	if procs = waitGone(grace); len(procs) == 0 {
		return nil
	}
	signalAll(syscall.SIGKILL)
	return waitGone(2 * time.Second)
}

// footprint estimates the memory procs cost together: their anonymous
// memory plus their file-backed pages counted once (the largest RSSFile),
// since the processes of a cluster all map the same binary. Summing RSS
// instead would count that binary once per process (≈ 2x too much here).
func footprint(procs []Process) int64 {
	var anon, file int64
	for _, p := range procs {
		anon += p.RSSAnon
		file = max(file, p.RSS-p.RSSAnon)
	}
	return anon + file
}

// selfRSS is the resident memory of this process (the harness).
func selfRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return statusBytes(status, "VmRSS")
}
