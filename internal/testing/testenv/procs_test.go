package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeProc writes a /proc-like entry for pid under root.
func fakeProc(t *testing.T, root string, pid int, comm string, state byte, ppid int, cmdline []string, environ []string, rssKB int) {
	t.Helper()
	dir := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := strconv.Itoa(pid) + " (" + comm + ") " + string(state) + " " + strconv.Itoa(ppid) + " 1 1 0 -1\n"
	files := map[string]string{
		"stat":    stat,
		"cmdline": strings.Join(cmdline, "\x00") + "\x00",
		"environ": strings.Join(environ, "\x00") + "\x00",
		"status": "Name:\t" + comm + "\nVmPeak:\t 999 kB\nVmRSS:\t " + strconv.Itoa(rssKB) + " kB\n" +
			"RssAnon:\t " + strconv.Itoa(rssKB/2) + " kB\nThreads:\t1\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScanProcesses_MatchesMarkerOrDir(t *testing.T) {
	root := t.TempDir()
	const dir = "/repo/.cache/testenv/abcd1234"
	const marker = MarkerVar + "=abcd1234"
	fakeProc(t, root, 10, "localcluster", 'S', 1, []string{"/bin/localcluster", "supervise", "--dir", dir}, nil, 1000)
	fakeProc(t, root, 11, "kube-apiserver", 'S', 10, []string{"/bin/localcluster", "kube-apiserver", "--tls-cert-file=" + dir + "/pki/apiserver.crt"}, []string{"HOME=/root"}, 300000)
	fakeProc(t, root, 12, "terraform", 'S', 1, []string{"terraform", "apply"}, []string{"A=1", marker, "B=2"}, 50000)
	// Same binary, other run: must not match (the binary path alone is
	// not evidence, another run may use the same cached binary).
	fakeProc(t, root, 13, "localcluster", 'S', 1, []string{"/bin/localcluster", "supervise", "--dir", "/repo/.cache/testenv/ffff0000"}, []string{MarkerVar + "=ffff0000"}, 1000)
	// A zombie of this run is dead already.
	fakeProc(t, root, 14, "etcd", 'Z', 10, nil, nil, 0)
	// A marker value that only starts like ours.
	fakeProc(t, root, 15, "go", 'S', 1, []string{"go", "test"}, []string{marker + "ff"}, 1000)
	// Excluded explicitly (the harness itself).
	fakeProc(t, root, 16, "testenv", 'S', 1, []string{"testenv", "--dir", dir}, []string{marker}, 1000)
	// Non-pid entries are ignored.
	if err := os.MkdirAll(filepath.Join(root, "sys"), 0o755); err != nil {
		t.Fatal(err)
	}

	got, err := scanProcesses(root, procMatcher{marker: marker, dir: dir, exclude: map[int]bool{16: true}})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range got {
		pids = append(pids, p.PID)
	}
	if want := []int{10, 11, 12}; !equalInts(pids, want) {
		t.Fatalf("matched pids %v, want %v", pids, want)
	}
	if got[1].PPID != 10 || got[1].RSS != 300000*1024 {
		t.Errorf("apiserver: ppid %d rss %d, want 10 and %d", got[1].PPID, got[1].RSS, 300000*1024)
	}
	// Half of each RSS is anonymous; the file-backed halves are assumed
	// shared, so only the largest (the apiserver's) counts.
	if fp, want := footprint(got), int64((1000+300000+50000)/2+300000/2)*1024; fp != want {
		t.Errorf("footprint = %d, want %d", fp, want)
	}
}

func TestParseStat_CommandWithParensAndSpaces(t *testing.T) {
	var p Process
	if err := parseStat([]byte("42 (my (odd) name) R 7 42 42 0 -1 4194560"), &p); err != nil {
		t.Fatal(err)
	}
	if p.State != 'R' || p.PPID != 7 {
		t.Fatalf("got state %c ppid %d", p.State, p.PPID)
	}
	for _, bad := range []string{"", "42 no-parens", "42 (x)", "42 (x) RR 1", "42 (x) R notanumber"} {
		if err := parseStat([]byte(bad), &p); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

func TestStatusBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"Name:\tx\nVmRSS:\t  2048 kB\n": 2048 * 1024,
		"Name:\tx\n":                    0, // kernel threads have no VmRSS
		"VmRSS:\n":                      0,
		"VmRSS:\tlots kB\n":             0,
	} {
		if got := statusBytes([]byte(in), "VmRSS"); got != want {
			t.Errorf("statusBytes(%q, VmRSS) = %d, want %d", in, got, want)
		}
	}
}

// TestKillProcesses_RealProcess exercises scanning and killing against the
// real /proc with a process that ignores SIGTERM, as a wedged component
// would: it must be found by its marker and end up SIGKILLed.
func TestKillProcesses_RealProcess(t *testing.T) {
	marker := MarkerVar + "=unit" + newRunID()
	cmd := exec.Command("sh", "-c", `trap "" TERM; while :; do sleep 0.05; done`)
	cmd.Env = append(os.Environ(), marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var found []Process
	deadline := time.Now().Add(5 * time.Second)
	for len(found) == 0 && time.Now().Before(deadline) {
		all, err := scanProcesses("/proc", procMatcher{marker: marker})
		if err != nil {
			t.Fatal(err)
		}
		// The shell's sleep children inherit the marker too; keep only
		// the shell so the test does not depend on sleep's timing.
		for _, p := range all {
			if p.PID == cmd.Process.Pid {
				found = append(found, p)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(found) != 1 {
		t.Fatalf("the marked process %d was not found", cmd.Process.Pid)
	}
	t0 := time.Now()
	if survivors := killProcesses(found, 300*time.Millisecond); len(survivors) != 0 {
		t.Fatalf("survivors: %v", survivors)
	}
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("killed after %s: SIGTERM is trapped, so the grace period should have elapsed", d)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("process still not reaped")
	}
	if processAlive("/proc", cmd.Process.Pid) {
		t.Error("processAlive reports a reaped process")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
