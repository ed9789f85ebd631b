package exampletest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// The examples run through the real terraform CLI with a development build
// of the provider through dev_overrides, as in a development loop (`make demo`
// installs the release artifacts with terraform init instead).

// repoRoot is the checkout this file belongs to.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the repository")
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file))))
}

// terraformBin is the terraform (or tofu) CLI the acceptance tests use.
func terraformBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform CLI not on PATH (or set TF_ACC_TERRAFORM_PATH)")
	}
	return p
}

// cliConfig builds the provider into a directory of t (go's build cache
// makes a second build a link) and returns a CLI configuration whose
// dev_overrides point at it.
func cliConfig(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-agentsandbox"), ".")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "dev.tfrc")
	// Both addresses, so that OpenTofu (TF_ACC_TERRAFORM_PATH=tofu), which
	// resolves "agentsandbox/agentsandbox" on its own registry, uses it too.
	if err := os.WriteFile(rc, fmt.Appendf(nil, `provider_installation {
  dev_overrides {
    "registry.terraform.io/agentsandbox/agentsandbox" = %[1]q
    "registry.opentofu.org/agentsandbox/agentsandbox" = %[1]q
  }
  direct {}
}
`, dir), 0o600); err != nil {
		t.Fatal(err)
	}
	return rc
}

// copyExamples copies examples/ into a fresh directory, keeping its layout
// so that relative module sources resolve as in the repository.
func copyExamples(t testing.TB) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "examples")
	dst := filepath.Join(t.TempDir(), "examples")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		// Leftovers of a local run in the repository must not leak in.
		if d.IsDir() && (d.Name() == ".terraform") {
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), "terraform.tfstate") || d.Name() == ".terraform.lock.hcl" {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// tfDir runs terraform in one directory with a clean environment: no
// KUBECONFIG, KUBE_* or Google credentials of the machine may reach the
// provider, so an example works only through what it declares (the fast
// path's switch, acctest.FastPathEnv, is kept).
type tfDir struct {
	t   testing.TB
	bin string
	dir string
	env []string
}

func newTFDir(t testing.TB, dir, cliConfig string) *tfDir {
	t.Helper()
	home := t.TempDir()
	d := &tfDir{t: t, bin: terraformBin(t), dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TF_CLI_CONFIG_FILE=" + cliConfig,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		"GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(home, "no-adc.json"),
		"NO_GCE_CHECK=True",
		"GCE_METADATA_HOST=127.0.0.1:9",
	}}
	// The fast path's switch reaches the provider as in the other tests.
	d.env = append(d.env, acctest.FastPathEnv()...)
	return d
}

// setEnv sets one variable of the commands' environment.
func (d *tfDir) setEnv(name, value string) {
	env := d.env[:0]
	for _, kv := range d.env {
		if !strings.HasPrefix(kv, name+"=") {
			env = append(env, kv)
		}
	}
	d.env = append(env, name+"="+value)
}

// run runs terraform and returns its combined output and exit status.
func (d *tfDir) run(args ...string) (string, int) {
	d.t.Helper()
	cmd := exec.Command(d.bin, append(args, "-no-color")...)
	cmd.Dir = d.dir
	cmd.Env = d.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	default:
		d.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
		return "", -1
	}
}

// must runs terraform and fails the test unless it succeeds.
func (d *tfDir) must(args ...string) string {
	d.t.Helper()
	out, code := d.run(args...)
	if code != 0 {
		d.t.Fatalf("terraform %s in %s: exit status %d\n%s", strings.Join(args, " "), d.dir, code, out)
	}
	return out
}

// devOverridesWarning is the warning Terraform gives whenever dev_overrides
// (cliConfig) are in effect: about the test's setup, not the example.
const devOverridesWarning = "Provider development overrides are in effect"

// Terraform's notes on the examples' isolation checks (check blocks on
// data.agentsandbox_isolation_report). On the first plan the report waits
// for the apply that creates the sandboxes it reports on, which Terraform
// notes as checkDeferred: a fact about the order of the apply, not a
// warning about the configuration. checkFailed is a real finding: no
// apply or later plan of an example may give it.
const (
	checkDeferred = "Check block assertion known after apply"
	checkFailed   = "Check block assertion failed"
)

// planWarnings runs `terraform plan -json` and returns the summary and
// detail of each warning it gives about the configuration (the
// dev_overrides notice aside); it fails the test if the plan fails.
func (d *tfDir) planWarnings() []string {
	d.t.Helper()
	return warningsIn(d.must("plan", "-json", "-input=false"))
}

// warningsIn returns the summary and detail of each warning about the
// configuration (the dev_overrides notice and checkDeferred aside) in the
// output of `terraform plan -json`.
func warningsIn(out string) []string {
	var warnings []string
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity string `json:"severity"`
				Summary  string `json:"summary"`
				Detail   string `json:"detail"`
				Address  string `json:"address"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Type != "diagnostic" || msg.Diagnostic.Severity != "warning" ||
			msg.Diagnostic.Summary == devOverridesWarning || msg.Diagnostic.Summary == checkDeferred {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s: %s: %s", msg.Diagnostic.Address, msg.Diagnostic.Summary, msg.Diagnostic.Detail))
	}
	return warnings
}

// outputs returns `terraform output -json` as name -> JSON value.
func (d *tfDir) outputs() map[string]json.RawMessage {
	d.t.Helper()
	var raw map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	out := d.must("output", "-json")
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &raw); err != nil {
		d.t.Fatalf("terraform output -json: %v\n%s", err, out)
	}
	res := map[string]json.RawMessage{}
	for k, v := range raw {
		res[k] = v.Value
	}
	return res
}

// outputString is one string output.
func (d *tfDir) outputString(outs map[string]json.RawMessage, name string) string {
	d.t.Helper()
	var s string
	if err := json.Unmarshal(outs[name], &s); err != nil {
		d.t.Fatalf("output %s = %s: %v", name, outs[name], err)
	}
	return s
}

var variableRE = regexp.MustCompile(`(?m)^variable\s+"([^"]+)"`)

// declaredVariables lists the input variables declared by the .tf files of
// dir (not of its modules).
func declaredVariables(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range variableRE.FindAllStringSubmatch(string(data), -1) {
			names = append(names, m[1])
		}
	}
	return names
}
