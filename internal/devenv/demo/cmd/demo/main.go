// Command demo runs the local stand-in of `make demo` in the background and
// stops it again (see package demo for what it consists of and what is
// simulated):
//
//	demo up     --dir .cache/demo [--localcluster-bin BIN]   start, wait until usable, write the variables file
//	demo down   --dir .cache/demo                            stop everything and check that nothing is left
//	demo status --dir .cache/demo
//
// `up` starts `demo serve` detached (a session of its own, logging to
// DIR/serve.log), which keeps the stack running until `down` sends it
// SIGTERM. Should serve die without tearing down, testenv's watchdog stops
// the local control plane. Files in DIR:
//
//	state.json         what is running: pid of serve, run id, URLs, kubeconfig
//	demo.tfvars.json   the example's input variables pointing at the stack (mode 0600: it holds a token)
//	serve.log          serve's log: start-up, emulator and release-server requests, teardown
//	serve.status       how serve ended: "stopped cleanly" or the teardown error
//	cluster/           the local control plane's run directory (removed after a clean stop)
//
// scripts/demo.sh drives it around the terraform commands.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/devenv/demo"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// Bounds: start-up includes a cold local cluster on a loaded 2-core
// machine; teardown includes the harness's leak check.
const (
	upTimeout   = 6 * time.Minute
	downTimeout = 4 * time.Minute
)

// quickstartVariables are the variables of examples/quickstart that the
// stack supplies.
var quickstartVariables = []string{"project", "location", "cluster", "gke_endpoint", "gke_access_token",
	"gke_allow_credentials_over_http", "release_base_url"}

// state is DIR/state.json, written by serve once the stack is usable.
type state struct {
	PID             int       `json:"pid"`
	RunID           string    `json:"run_id"`
	ClusterDir      string    `json:"cluster_dir"`
	Kubeconfig      string    `json:"kubeconfig"`
	GKEURL          string    `json:"gke_url"`
	ReleaseURL      string    `json:"release_url"`
	ClusterName     string    `json:"cluster_name"`
	LocalclusterBin string    `json:"localcluster_bin"`
	Describe        []string  `json:"describe"`
	Started         time.Time `json:"started"`
}

func main() {
	// In testenv's watchdog process (started by serve) this never returns.
	testenv.RunWatchdogIfRequested()
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".cache/demo", "state directory")
	bin := fs.String("localcluster-bin", "", "localcluster binary (default: built by internal/devenv/localcluster/build.sh)")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fatal(err)
	}
	switch os.Args[1] {
	case "up":
		err = up(abs, *bin)
	case "serve":
		err = serve(abs, *bin)
	case "down":
		err = down(abs)
	case "status":
		err = status(abs)
	default:
		usage()
	}
	if err != nil {
		fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: demo up|down|status --dir DIR [--localcluster-bin BIN]")
	os.Exit(2)
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "demo: %v\n", err)
	os.Exit(1)
}

func up(dir, bin string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if st, err := readState(dir); err == nil {
		if alive(st.PID) {
			fmt.Fprintf(os.Stderr, "the local stack is already running (pid %d, since %s)\n", st.PID, st.Started.Format(time.TimeOnly))
			return finishUp(dir, st)
		}
		fmt.Fprintln(os.Stderr, "a previous demo's background process is gone without `make demo-destroy`; cleaning up after it")
		if err := cleanupDead(dir, st); err != nil {
			return err
		}
	}
	for _, f := range []string{"serve.status", "state.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	logPath := filepath.Join(dir, "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"serve", "--dir", dir}
	if bin != "" {
		args = append(args, "--localcluster-bin", bin)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own session: neither the terminal's Ctrl-C nor make's exit
	// reaches it; `demo down` stops it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	tail, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer tail.Close()
	logTail := &relayer{r: bufio.NewReader(tail), w: os.Stderr}
	deadline := time.After(upTimeout)
	for {
		logTail.relay()
		if st, err := readState(dir); err == nil && st.PID == pid {
			logTail.relay()
			return finishUp(dir, st)
		}
		select {
		case err := <-exited:
			logTail.relay()
			return fmt.Errorf("the background process exited during start-up (%w); its log is %s", err, logPath)
		case <-deadline:
			_ = syscall.Kill(pid, syscall.SIGTERM)
			return fmt.Errorf("not usable after %s; stopping it (log: %s)", upTimeout, logPath)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// relayer copies the complete lines that appeared in a growing log, indented.
type relayer struct {
	r       *bufio.Reader
	w       io.Writer
	partial string // the start of a line whose end has not been written yet
}

func (l *relayer) relay() {
	for {
		line, err := l.r.ReadString('\n')
		l.partial += line
		if err != nil {
			return
		}
		fmt.Fprint(l.w, "    "+l.partial)
		l.partial = ""
	}
}

// finishUp writes the variables file and says what is running.
func finishUp(dir string, st *state) error {
	vars := map[string]string{
		"project": demo.Project, "location": demo.Location, "cluster": demo.Cluster,
		"gke_endpoint": st.GKEURL, "release_base_url": st.ReleaseURL,
		// The emulator speaks plain HTTP on loopback: an explicit opt-in.
		"gke_allow_credentials_over_http": "true",
	}
	token, err := os.ReadFile(filepath.Join(st.ClusterDir, "admin-token"))
	if err != nil {
		return err
	}
	vars["gke_access_token"] = strings.TrimSpace(string(token))
	if err := demo.WriteVarFile(filepath.Join(dir, "demo.tfvars.json"), vars, quickstartVariables...); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "What is running (and what is simulated):")
	for _, d := range st.Describe {
		fmt.Fprintln(os.Stderr, wrap(d, 110, "  - ", "    "))
	}
	return nil
}

// wrap breaks s into lines of at most width characters at spaces, the
// first prefixed by first and the others by rest.
func wrap(s string, width int, first, rest string) string {
	var b strings.Builder
	line := first
	for _, w := range strings.Fields(s) {
		if len(line) > len(rest) && len(line)+1+len(w) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = rest
		}
		if line != first && line != rest {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

func serve(dir, bin string) error {
	signal.Ignore(syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	root, err := testenv.FindRepoRoot()
	if err != nil {
		return writeStatus(dir, err)
	}
	t0 := time.Now()
	st, err := demo.Start(ctx, demo.Options{RepoRoot: root, Dir: filepath.Join(dir, "cluster"), LocalclusterBin: bin, Log: os.Stderr})
	if err != nil {
		return writeStatus(dir, fmt.Errorf("start: %w", err))
	}
	s := state{
		PID: os.Getpid(), RunID: st.RunID, ClusterDir: st.ClusterDir, Kubeconfig: st.Kubeconfig,
		GKEURL: st.GKEURL, ReleaseURL: st.ReleaseURL, ClusterName: st.ClusterName(),
		LocalclusterBin: bin, Describe: st.Describe(), Started: time.Now(),
	}
	if err := writeState(dir, &s); err != nil {
		return writeStatus(dir, errors.Join(err, st.Stop(context.Background())))
	}
	fmt.Fprintf(os.Stderr, "demo: stack usable in %s; serving until SIGTERM\n", time.Since(t0).Round(time.Millisecond))
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "demo: stopping")
	return writeStatus(dir, st.Stop(context.Background()))
}

// writeStatus records how serve ended, for `down` to report.
func writeStatus(dir string, err error) error {
	msg := "stopped cleanly\n"
	if err != nil {
		msg = err.Error() + "\n"
	}
	if werr := os.WriteFile(filepath.Join(dir, "serve.status"), []byte(msg), 0o644); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

func down(dir string) error {
	st, err := readState(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(os.Stderr, "no local stack is running")
		return checkLeftovers("", filepath.Join(dir, "cluster"))
	}
	if err != nil {
		return err
	}
	if alive(st.PID) {
		t0 := time.Now()
		fmt.Fprintf(os.Stderr, "stopping the local stack (pid %d): GKE emulator, release server, agent-sandbox controller, local control plane\n", st.PID)
		if err := syscall.Kill(st.PID, syscall.SIGTERM); err != nil {
			return err
		}
		for alive(st.PID) {
			if time.Since(t0) > downTimeout {
				return fmt.Errorf("pid %d still running %s after SIGTERM; see %s", st.PID, downTimeout, filepath.Join(dir, "serve.log"))
			}
			time.Sleep(100 * time.Millisecond)
		}
		status, _ := os.ReadFile(filepath.Join(dir, "serve.status"))
		msg := strings.TrimSpace(string(status))
		if msg != "stopped cleanly" {
			return fmt.Errorf("teardown: %s (log: %s)", msg, filepath.Join(dir, "serve.log"))
		}
		fmt.Fprintf(os.Stderr, "stopped in %s\n", time.Since(t0).Round(time.Millisecond))
	} else if err := cleanupDead(dir, st); err != nil {
		return err
	}
	if err := checkLeftovers(st.RunID, st.ClusterDir); err != nil {
		return err
	}
	for _, f := range []string{"state.json", "demo.tfvars.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "checked: no process of the demo is left running")
	return nil
}

// cleanupDead stops the cluster of a stack whose serve process died
// without tearing down (testenv's watchdog normally already has).
func cleanupDead(dir string, st *state) error {
	if st.LocalclusterBin != "" {
		cmd := exec.Command(st.LocalclusterBin, "down", "--dir", st.ClusterDir)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("localcluster down --dir %s: %w", st.ClusterDir, err)
		}
	}
	if err := checkLeftovers(st.RunID, st.ClusterDir); err != nil {
		return err
	}
	return os.Remove(filepath.Join(dir, "state.json"))
}

// checkLeftovers fails, naming them, if processes of the run are alive.
func checkLeftovers(runID, clusterDir string) error {
	left, err := testenv.Leftovers(runID, clusterDir)
	if err != nil {
		return err
	}
	if len(left) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d process(es) of the demo are still running:", len(left))
	for _, p := range left {
		fmt.Fprintf(&b, "\n\t%s", p)
	}
	b.WriteString("\nstop them with `kill <pid>`")
	return errors.New(b.String())
}

func status(dir string) error {
	st, err := readState(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Println("not running")
		return nil
	}
	if err != nil {
		return err
	}
	if !alive(st.PID) {
		fmt.Printf("not running (pid %d is gone; run `make demo-destroy` to clean up)\n", st.PID)
		return nil
	}
	fmt.Printf("running since %s (pid %d)\nkubeconfig  %s\nGKE emulator %s (cluster %s)\nrelease server %s\n",
		st.Started.Format(time.DateTime), st.PID, st.Kubeconfig, st.GKEURL, st.ClusterName, st.ReleaseURL)
	return nil
}

func readState(dir string) (*state, error) {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "state.json"), err)
	}
	return &st, nil
}

func writeState(dir string, st *state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "state.json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "state.json"))
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
