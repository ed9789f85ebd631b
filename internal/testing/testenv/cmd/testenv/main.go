// Command testenv runs a command inside an acceptance-test environment:
//
//	go run ./internal/testing/testenv/cmd/testenv -- env TF_ACC=1 go test -count=1 ./...
//
// Without KUBECONFIG or AGENTSANDBOX_TEST_KUBECONFIG it starts the local
// control plane (internal/devenv/localcluster) in a fresh directory below
// .cache/testenv, installs the agent-sandbox CRDs and runs the stand-in
// controller in this process; with one of them set it uses that cluster,
// installing the CRDs and running the stand-in there (unless
// AGENTSANDBOX_TEST_NO_CONTROLLER=1). The command then runs with KUBECONFIG and
// AGENTSANDBOX_TEST_KUBECONFIG pointing at the cluster. Afterwards
// everything is stopped and /proc is checked for processes of the run that
// are still alive; any such process is killed and fails the run.
//
// The exit status is the command's (128+N if it died of signal N), or 1 if
// the command succeeded but the environment failed to start or to tear down
// cleanly. SIGINT and SIGTERM are passed to the command, and teardown runs
// afterwards; a second signal kills the command at once.
//
// Timings and memory are printed to stderr, each line prefixed "testenv:".
// See package testenv for the environment variables.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

func main() {
	// First: in the watchdog process this never returns.
	testenv.RunWatchdogIfRequested()
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: testenv -- command [args...]")
		return 2
	}

	// Signals are caught before anything is started, so that a Ctrl-C
	// during cluster start-up still reaches teardown.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interruptedEarly := make(chan os.Signal, 1)
	stopEarlyWatch := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			interruptedEarly <- s
			cancel()
		case <-stopEarlyWatch:
		}
	}()

	t0 := time.Now()
	opts, err := testenv.OptionsFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	env, err := testenv.Start(ctx, opts)
	close(stopEarlyWatch)
	if err != nil {
		select {
		case s := <-interruptedEarly:
			fmt.Fprintf(os.Stderr, "testenv: %v during start-up; torn down: %v\n", s, err)
			return exitCodeForSignal(s)
		default:
		}
		fmt.Fprintf(os.Stderr, "testenv: FAILED to start the environment: %v\n", err)
		return 1
	}
	select {
	case s := <-interruptedEarly:
		fmt.Fprintf(os.Stderr, "testenv: %v during start-up; not running the command\n", s)
		if err := env.Stop(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: FAILED teardown: %v\n", err)
		}
		return exitCodeForSignal(s)
	default:
	}
	fmt.Fprintf(os.Stderr, "testenv: environment ready in %s; running %q\n", since(t0), args)

	tCmd := time.Now()
	code := runCommand(args, env, sigs)
	fmt.Fprintf(os.Stderr, "testenv: command finished in %s with exit status %d\n", since(tCmd), code)

	// Further signals during teardown are swallowed: teardown is bounded,
	// and interrupting it is exactly how clusters get leaked.
	signal.Reset(syscall.SIGINT, syscall.SIGTERM)
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	if err := env.Stop(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: FAILED teardown: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// runCommand runs args in their own process group with the environment's
// variables, forwarding SIGINT/SIGTERM to the whole group (go test, its test
// binaries, terraform). The group is what makes forwarding reach every
// descendant, not only the direct child.
func runCommand(args []string, env *testenv.Env, sigs <-chan os.Signal) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env.Environ()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 127
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	forwarded := 0
	for {
		select {
		case err := <-done:
			return exitCode(err)
		case s := <-sigs:
			forwarded++
			sig, ok := s.(syscall.Signal)
			if !ok || forwarded > 1 {
				fmt.Fprintf(os.Stderr, "testenv: %v again: killing the command\n", s)
				sig = syscall.SIGKILL
			} else {
				fmt.Fprintf(os.Stderr, "testenv: %v: passing it to the command, then tearing down (again to kill the command)\n", s)
			}
			_ = syscall.Kill(-pgid, sig)
		}
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitCodeForSignal(ws.Signal())
	}
	return ee.ExitCode()
}

// exitCodeForSignal follows the shell convention 128+N.
func exitCodeForSignal(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
