package gkeemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

func TestMain(m *testing.M) {
	cleanup := emutest.Isolate()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// clock is a manual clock, so that operation states are deterministic.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// bearer adds a fixed access token, as the provider's client does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// fixture is an emulator on a manual clock with the real container/v1
// client pointed at it. Operations are PENDING for 1s and RUNNING for 2s.
type fixture struct {
	*emutest.Env
	clock *clock
	svc   *container.Service
	ctx   context.Context
}

func newFixture(t *testing.T, spec gkeemu.ClusterSpec) *fixture {
	t.Helper()
	c := newClock()
	env := emutest.Start(t, gkeemu.Options{Now: c.Now, PendingDuration: time.Second, RunningDuration: 2 * time.Second}, spec)
	return &fixture{Env: env, clock: c, svc: newService(t, env.URL, "test"), ctx: context.Background()}
}

func newService(t *testing.T, url, token string) *container.Service {
	t.Helper()
	svc, err := container.NewService(context.Background(), option.WithEndpoint(url),
		option.WithHTTPClient(&http.Client{Transport: bearer{token: token}}))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func (f *fixture) pools() *container.ProjectsLocationsClustersNodePoolsService {
	return f.svc.Projects.Locations.Clusters.NodePools
}

func (f *fixture) poolName(name string) string { return f.ClusterName + "/nodePools/" + name }

func (f *fixture) opName(op *container.Operation) string {
	return "projects/" + emutest.Project + "/locations/" + emutest.Location + "/operations/" + op.Name
}

// finish moves the clock past every operation's end.
func (f *fixture) finish() { f.clock.Advance(time.Hour) }

func gvisorPool(name string) *container.NodePool {
	return &container.NodePool{
		Name:             name,
		InitialNodeCount: 1,
		Config: &container.NodeConfig{
			MachineType:   "e2-standard-4",
			ImageType:     "COS_CONTAINERD",
			SandboxConfig: &container.SandboxConfig{Type: "GVISOR"},
		},
	}
}

func (f *fixture) create(t *testing.T, np *container.NodePool) *container.Operation {
	t.Helper()
	op, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: np}).Context(f.ctx).Do()
	if err != nil {
		t.Fatalf("create %s: %v", np.Name, err)
	}
	return op
}

// apiErr asserts err is a googleapi.Error with this HTTP code and canonical
// status, whose message contains want, and returns the parsed error body.
func apiErr(t *testing.T, err error, code int, status, want string) map[string]any {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("want a googleapi.Error %d %s, got %v", code, status, err)
	}
	if ge.Code != code {
		t.Errorf("HTTP %d, want %d (%s)", ge.Code, code, ge.Message)
	}
	var body struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(ge.Body), &body); err != nil {
		t.Fatalf("error body is not JSON: %q", ge.Body)
	}
	if body.Error["status"] != status {
		t.Errorf("status %v, want %s", body.Error["status"], status)
	}
	if int(body.Error["code"].(float64)) != code {
		t.Errorf("body code %v, want %d", body.Error["code"], code)
	}
	if !strings.Contains(ge.Message, want) {
		t.Errorf("message %q does not contain %q", ge.Message, want)
	}
	if len(ge.Errors) == 0 || ge.Errors[0].Reason == "" {
		t.Errorf("legacy errors[] with a reason missing: %+v", ge.Errors)
	}
	return body.Error
}

func TestEveryAnswerSaysItIsAnEmulator(t *testing.T) {
	env := emutest.Start(t, gkeemu.Options{}, gkeemu.ClusterSpec{})
	env.ExpectInvalidRequests() // GET v1/nowhere
	for _, path := range []string{"healthz", "v1/" + env.ClusterName, "v1/nowhere"} {
		resp, err := http.Get(env.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get(gkeemu.Header); !strings.Contains(got, "emulator") {
			t.Errorf("%s: %s header = %q", path, gkeemu.Header, got)
		}
		if path == "healthz" && !strings.Contains(string(body), "emulator") {
			t.Errorf("healthz says %q", body)
		}
	}
	c, _ := env.Cluster(env.ClusterName)
	if !strings.Contains(c.Description, "not a GKE cluster") {
		t.Errorf("cluster description %q does not say it is emulated", c.Description)
	}
}

func TestAuthenticationIsRequired(t *testing.T) {
	env := emutest.Start(t, gkeemu.Options{AccessToken: "right"}, gkeemu.ClusterSpec{})
	_, err := newService(t, env.URL, "").Projects.Locations.Clusters.Get(env.ClusterName).Do()
	apiErr(t, err, 401, "UNAUTHENTICATED", "missing required authentication credential")
	_, err = newService(t, env.URL, "wrong").Projects.Locations.Clusters.Get(env.ClusterName).Do()
	apiErr(t, err, 401, "UNAUTHENTICATED", "invalid authentication credentials")
	if _, err := newService(t, env.URL, "right").Projects.Locations.Clusters.Get(env.ClusterName).Do(); err != nil {
		t.Fatal(err)
	}
}

func TestClustersGetAndList(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{Endpoint: "127.0.0.1:6443"})
	if _, err := f.AddCluster(gkeemu.ClusterSpec{Project: emutest.Project, Location: "europe-west1-b", Name: "zonal"}); err != nil {
		t.Fatal(err)
	}
	c, err := f.svc.Projects.Locations.Clusters.Get(f.ClusterName).Do()
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != "RUNNING" || c.Endpoint != "127.0.0.1:6443" || c.CurrentMasterVersion != gkeemu.DefaultClusterVersion {
		t.Errorf("cluster = %s %s %s", c.Status, c.Endpoint, c.CurrentMasterVersion)
	}
	if len(c.Locations) != 3 || c.Locations[0] != "us-central1-a" {
		t.Errorf("regional cluster locations = %v", c.Locations)
	}
	if len(c.NodePools) != 1 || c.NodePools[0].Name != "default-pool" {
		t.Errorf("seeded pools = %v", c.NodePools)
	}
	if c.MasterAuth == nil || c.MasterAuth.ClusterCaCertificate == "" {
		t.Error("no cluster CA")
	}
	all, err := f.svc.Projects.Locations.Clusters.List("projects/" + emutest.Project + "/locations/-").Do()
	if err != nil || len(all.Clusters) != 2 {
		t.Fatalf("list all locations: %v, %v", all, err)
	}
	one, err := f.svc.Projects.Locations.Clusters.List("projects/" + emutest.Project + "/locations/europe-west1-b").Do()
	if err != nil || len(one.Clusters) != 1 || one.Clusters[0].Name != "zonal" {
		t.Fatalf("list one location: %v, %v", one, err)
	}
	_, err = f.svc.Projects.Locations.Clusters.Get("projects/emu-project/locations/us-central1/clusters/nope").Do()
	apiErr(t, err, 404, "NOT_FOUND", "Not found: projects/emu-project/locations/us-central1/clusters/nope.")
}

func TestUnknownMethodsAreUnimplemented(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	_, err := f.svc.Projects.Locations.Clusters.Delete(f.ClusterName).Do()
	apiErr(t, err, 501, "UNIMPLEMENTED", "does not implement DELETE")
}

// A node pool goes PROVISIONING → RUNNING while its operation goes
// PENDING → RUNNING → DONE; GKE's defaults and sandbox marks are applied.
func TestNodePoolCreateLifecycle(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	op := f.create(t, gvisorPool("sandbox"))
	if op.Status != "PENDING" || op.OperationType != gkeemu.OpCreateNodePool {
		t.Fatalf("new operation = %s %s", op.Status, op.OperationType)
	}
	if !strings.HasPrefix(op.SelfLink, f.URL+"v1/projects/emu-project/") || !strings.HasPrefix(op.TargetLink, f.URL) {
		t.Errorf("links do not point at the server that answered (%s): %s %s", f.URL, op.SelfLink, op.TargetLink)
	}
	if c, _ := f.svc.Projects.Locations.Clusters.Get(f.ClusterName).Do(); !strings.HasPrefix(c.SelfLink, f.URL) ||
		!strings.HasPrefix(c.NodePools[0].SelfLink, f.URL) {
		t.Errorf("seeded links: %s %s", c.SelfLink, c.NodePools[0].SelfLink)
	}
	if !strings.Contains(op.SelfLink, "/zones/us-central1/operations/"+op.Name) ||
		!strings.HasSuffix(op.TargetLink, "/clusters/emu-cluster/nodePools/sandbox") {
		t.Errorf("links: self %s target %s", op.SelfLink, op.TargetLink)
	}
	np, err := f.pools().Get(f.poolName("sandbox")).Do()
	if err != nil {
		t.Fatal(err)
	}
	if np.Status != "PROVISIONING" {
		t.Errorf("pool status while creating = %s", np.Status)
	}

	f.clock.Advance(1500 * time.Millisecond)
	got, err := f.svc.Projects.Locations.Operations.Get(f.opName(op)).Do()
	if err != nil || got.Status != "RUNNING" {
		t.Fatalf("after 1.5s: %v %v", got.Status, err)
	}
	f.clock.Advance(2 * time.Second)
	got, _ = f.svc.Projects.Locations.Operations.Get(f.opName(op)).Do()
	if got.Status != "DONE" || got.Error != nil || got.EndTime == "" {
		t.Fatalf("after 3.5s: %+v", got)
	}

	np, _ = f.pools().Get(f.poolName("sandbox")).Do()
	if np.Status != "RUNNING" || np.Etag == "" || np.Version != gkeemu.DefaultClusterVersion {
		t.Errorf("pool = %s etag %q version %s", np.Status, np.Etag, np.Version)
	}
	c := np.Config
	if c.DiskSizeGb != 100 || c.DiskType != "pd-balanced" || c.ServiceAccount != "default" || len(c.OauthScopes) == 0 {
		t.Errorf("GKE defaults missing: %+v", c)
	}
	if c.WorkloadMetadataConfig == nil || c.WorkloadMetadataConfig.Mode != "GKE_METADATA" {
		t.Errorf("workload metadata default = %+v", c.WorkloadMetadataConfig)
	}
	if !np.Management.AutoRepair || !np.Management.AutoUpgrade || np.UpgradeSettings.MaxSurge != 1 {
		t.Errorf("management %+v upgrade %+v", np.Management, np.UpgradeSettings)
	}
	if len(np.Locations) != 3 || len(np.InstanceGroupUrls) != 3 {
		t.Errorf("locations %v, instance groups %v", np.Locations, np.InstanceGroupUrls)
	}
	if c.Labels[gkeemu.SandboxKey] != "gvisor" {
		t.Errorf("GKE's sandbox label missing: %v", c.Labels)
	}
	if n := len(c.Taints); n != 1 || c.Taints[0].Key != gkeemu.SandboxKey || c.Taints[0].Effect != "NO_SCHEDULE" {
		t.Errorf("GKE's sandbox taint missing: %+v", c.Taints)
	}
	if size, _ := f.NodePoolSize(f.poolName("sandbox")); size != 1 {
		t.Errorf("size = %d", size)
	}
	list, err := f.pools().List(f.ClusterName).Do()
	if err != nil || len(list.NodePools) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
}

func TestGVisorNeedsCOSContainerd(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	np := gvisorPool("sandbox")
	np.Config.ImageType = "UBUNTU_CONTAINERD"
	_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: np}).Do()
	body := apiErr(t, err, 400, "INVALID_ARGUMENT", "requires image type COS_CONTAINERD")
	details, _ := json.Marshal(body["details"])
	if !strings.Contains(string(details), `"field":"node_pool.config.image_type"`) {
		t.Errorf("no field violation for image_type: %s", details)
	}

	// Nor can an update move a gVisor pool off COS_CONTAINERD.
	f.create(t, gvisorPool("sandbox"))
	f.finish()
	_, err = f.pools().Update(f.poolName("sandbox"), &container.UpdateNodePoolRequest{ImageType: "UBUNTU_CONTAINERD"}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", "requires image type COS_CONTAINERD")
}

func TestGVisorPoolCannotBeTheOnlyPool(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{NoDefaultPool: true})
	_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: gvisorPool("sandbox")}).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "needs at least one node pool that does not use sandbox_config.type=GVISOR")

	regular := &container.NodePool{Name: "system", InitialNodeCount: 1}
	f.create(t, regular)
	f.finish()
	f.create(t, gvisorPool("sandbox"))
	f.finish()
	// The last regular pool cannot go while a gVisor pool remains.
	_, err = f.pools().Delete(f.poolName("system")).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "last node pool of cluster emu-cluster without GKE Sandbox")
	if _, err := f.pools().Delete(f.poolName("sandbox")).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	if _, err := f.pools().Delete(f.poolName("system")).Do(); err != nil {
		t.Fatalf("deleting the last pool once no gVisor pool remains: %v", err)
	}
}

func TestReservedTaintKeyIsRejected(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	np := gvisorPool("sandbox")
	// Even with GKE's own value and effect.
	np.Config.Taints = []*container.NodeTaint{{Key: gkeemu.SandboxKey, Value: "gvisor", Effect: "NO_SCHEDULE"}}
	_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: np}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", `Taint key "sandbox.gke.io/runtime" is reserved`)

	f.create(t, gvisorPool("sandbox"))
	f.finish()
	_, err = f.pools().Update(f.poolName("sandbox"), &container.UpdateNodePoolRequest{
		Taints: &container.NodeTaints{Taints: []*container.NodeTaint{{Key: gkeemu.SandboxKey, Value: "x", Effect: "NO_EXECUTE"}}},
	}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", "reserved for GKE Sandbox")

	np = gvisorPool("other")
	np.Config.Labels = map[string]string{gkeemu.SandboxKey: "runc"}
	_, err = f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: np}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", "reserved for GKE Sandbox")
}

// Label and taint updates replace the user's set; GKE's own marks stay.
func TestSandboxMarksSurviveLabelAndTaintUpdates(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	f.create(t, gvisorPool("sandbox"))
	f.finish()
	if _, err := f.pools().Update(f.poolName("sandbox"), &container.UpdateNodePoolRequest{
		Labels: &container.NodeLabels{Labels: map[string]string{"team": "agents"}},
	}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	if _, err := f.pools().Update(f.poolName("sandbox"), &container.UpdateNodePoolRequest{
		Taints: &container.NodeTaints{Taints: []*container.NodeTaint{{Key: "dedicated", Value: "agents", Effect: "NO_EXECUTE"}}},
	}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	np, _ := f.pools().Get(f.poolName("sandbox")).Do()
	if len(np.Config.Labels) != 2 || np.Config.Labels["team"] != "agents" || np.Config.Labels[gkeemu.SandboxKey] != "gvisor" {
		t.Errorf("labels = %v", np.Config.Labels)
	}
	if len(np.Config.Taints) != 2 || np.Config.Taints[0].Key != "dedicated" || np.Config.Taints[1].Key != gkeemu.SandboxKey {
		t.Errorf("taints = %+v %+v", np.Config.Taints[0], np.Config.Taints)
	}
	// Clearing the user's labels (an empty set) keeps GKE's.
	if _, err := f.pools().Update(f.poolName("sandbox"), &container.UpdateNodePoolRequest{Labels: &container.NodeLabels{}}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	np, _ = f.pools().Get(f.poolName("sandbox")).Do()
	if len(np.Config.Labels) != 1 || np.Config.Labels[gkeemu.SandboxKey] != "gvisor" {
		t.Errorf("labels after clearing = %v", np.Config.Labels)
	}
}

func TestDuplicateNodePoolIs409AlreadyExists(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	f.create(t, gvisorPool("sandbox"))
	f.finish()
	_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: gvisorPool("sandbox")}).Do()
	apiErr(t, err, 409, "ALREADY_EXISTS", "Already exists: "+f.poolName("sandbox"))
	if !gkeapi.IsAlreadyExists(err) {
		t.Error("the provider's client does not classify it as already exists")
	}
}

func TestNotFoundIs404(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	_, err := f.pools().Get(f.poolName("nope")).Do()
	apiErr(t, err, 404, "NOT_FOUND", "Not found: "+f.poolName("nope")+".")
	if !gkeapi.IsNotFound(err) {
		t.Error("the provider's client does not classify it as not found")
	}
	_, err = f.pools().Delete(f.poolName("nope")).Do()
	apiErr(t, err, 404, "NOT_FOUND", "Not found")
	_, err = f.svc.Projects.Locations.Operations.Get("projects/emu-project/locations/us-central1/operations/operation-1").Do()
	apiErr(t, err, 404, "NOT_FOUND", "operations/operation-1")
	_, err = f.pools().List("projects/emu-project/locations/us-central1/clusters/nope").Do()
	apiErr(t, err, 404, "NOT_FOUND", "clusters/nope")
}

// One operation at a time per cluster; management changes are concurrent.
func TestBusyClusterRefusesMutations(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	running := f.create(t, gvisorPool("sandbox"))
	_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: gvisorPool("second")}).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "Operation "+running.Name+" is currently creating a node pool in cluster emu-cluster. Please wait and try again once it is done.")
	if !gkeapi.IsClusterBusy(err) {
		t.Fatalf("the provider's client does not see a busy cluster in %v", err)
	}
	_, err = f.pools().SetSize(f.poolName("default-pool"), &container.SetNodePoolSizeRequest{NodeCount: 2}).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "Please wait and try again")
	// Management updates are metadata-only and run concurrently.
	if _, err := f.pools().SetManagement(f.poolName("default-pool"), &container.SetNodePoolManagementRequest{
		Management: &container.NodeManagement{AutoRepair: false, AutoUpgrade: true},
	}).Do(); err != nil {
		t.Fatalf("management during another operation: %v", err)
	}
	f.finish()
	f.create(t, gvisorPool("second"))
	f.finish()

	// A GKE-initiated operation (auto-upgrade) blocks as well.
	if _, err := f.StartClusterOperation(f.ClusterName, "", time.Minute); err != nil {
		t.Fatal(err)
	}
	_, err = f.pools().Delete(f.poolName("second")).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "is currently upgrading cluster emu-cluster")
	f.finish()
	if _, err := f.pools().Delete(f.poolName("second")).Do(); err != nil {
		t.Fatal(err)
	}
}

func TestEtagMismatchIsAborted(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	f.create(t, gvisorPool("sandbox"))
	f.finish()
	np, _ := f.pools().Get(f.poolName("sandbox")).Do()
	stale := np.Etag
	if _, err := f.pools().Update(f.poolName("sandbox"), &container.UpdateNodePoolRequest{
		Etag: stale, Labels: &container.NodeLabels{Labels: map[string]string{"a": "b"}},
	}).Do(); err != nil {
		t.Fatalf("update with the current etag: %v", err)
	}
	f.finish()
	_, err := f.pools().Update(f.poolName("sandbox"), &container.UpdateNodePoolRequest{
		Etag: stale, Labels: &container.NodeLabels{Labels: map[string]string{"a": "c"}},
	}).Do()
	apiErr(t, err, 409, "ABORTED", "was modified since etag")
	if gkeapi.IsClusterBusy(err) || gkeapi.IsAlreadyExists(err) {
		t.Error("ABORTED must be neither busy nor already-exists for the provider's client")
	}
	np2, _ := f.pools().Get(f.poolName("sandbox")).Do()
	if np2.Etag == stale {
		t.Error("etag did not change with the update")
	}
}

func TestOperationCanEndInError(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	const msg = `Insufficient regional quota to satisfy request: resource "CPUS": request requires '12.0' and is short '4.0'.`
	f.FailNextOperation(gkeemu.OpCreateNodePool, "RESOURCE_EXHAUSTED", msg)
	op := f.create(t, gvisorPool("sandbox"))
	f.finish()
	got, err := f.svc.Projects.Locations.Operations.Get(f.opName(op)).Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "DONE" || got.Error == nil || got.Error.Code != 8 || got.Error.Message != msg || got.StatusMessage != msg {
		t.Fatalf("failed operation = %+v (error %+v)", got, got.Error)
	}
	np, _ := f.pools().Get(f.poolName("sandbox")).Do()
	if np.Status != "ERROR" || np.StatusMessage != msg {
		t.Errorf("pool after failed create = %s %q", np.Status, np.StatusMessage)
	}
	_, err = f.pools().SetSize(f.poolName("sandbox"), &container.SetNodePoolSizeRequest{NodeCount: 3}).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "can only be deleted")
	if _, err := f.pools().Delete(f.poolName("sandbox")).Do(); err != nil {
		t.Fatalf("deleting a pool in ERROR: %v", err)
	}
	f.finish()
	if _, ok := f.NodePool(f.poolName("sandbox")); ok {
		t.Error("pool still there after delete")
	}
	// The failure was one-shot.
	f.create(t, gvisorPool("sandbox"))
	f.finish()
	if np, _ := f.NodePool(f.poolName("sandbox")); np.Status != "RUNNING" {
		t.Errorf("second create: %s", np.Status)
	}
}

func TestFaultInjection(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	get := func() error { _, err := f.svc.Projects.Locations.Clusters.Get(f.ClusterName).Do(); return err }

	fault := f.InjectFault(&gkeemu.Fault{API: gkeapi.MethodClustersGet, Status: 429, RetryAfter: 1500 * time.Millisecond, Times: 2})
	for i := 0; i < 2; i++ {
		err := get()
		apiErr(t, err, 429, "RESOURCE_EXHAUSTED", "Quota exceeded")
		var ge *googleapi.Error
		errors.As(err, &ge)
		if ge.Header.Get("Retry-After") != "2" {
			t.Errorf("Retry-After = %q, want 2 (rounded up)", ge.Header.Get("Retry-After"))
		}
	}
	if err := get(); err != nil || fault.Hits() != 2 {
		t.Fatalf("after two hits: %v (hits %d)", err, fault.Hits())
	}

	f.InjectFault(&gkeemu.Fault{API: gkeapi.MethodNodePoolsList, HTTPMethod: "GET", Status: 503})
	if err := get(); err != nil {
		t.Fatalf("a fault for another method applied: %v", err)
	}
	_, err := f.pools().List(f.ClusterName).Do()
	apiErr(t, err, 503, "UNAVAILABLE", "currently unavailable")

	slow := f.InjectFault(&gkeemu.Fault{Latency: 150 * time.Millisecond, Times: -1})
	start := time.Now()
	if err := get(); err != nil || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("latency fault: %v after %s", err, time.Since(start))
	}
	f.ClearFaults()
	if err := get(); err != nil {
		t.Fatal(err)
	}
	if slow.Hits() != 1 {
		t.Errorf("latency fault hits = %d after ClearFaults, want 1", slow.Hits())
	}
	if n := f.Requests()[gkeapi.MethodClustersGet]; n != 6 {
		t.Errorf("clusters.get counted %d times, want 6", n)
	}
}

func TestAgentSandboxAddon(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	clusters := f.svc.Projects.Locations.Clusters
	op, err := clusters.Update(f.ClusterName, &container.UpdateClusterRequest{Update: &container.ClusterUpdate{
		DesiredAddonsConfig: &container.AddonsConfig{AgentSandboxConfig: &container.AgentSandboxConfig{Enabled: true}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if op.OperationType != gkeemu.OpUpdateCluster {
		t.Errorf("operation type %s", op.OperationType)
	}
	c, _ := clusters.Get(f.ClusterName).Do()
	if c.Status != "RECONCILING" || gkeapi.AgentSandboxAddonEnabled(c) {
		t.Errorf("while the operation runs: %s, enabled %v", c.Status, gkeapi.AgentSandboxAddonEnabled(c))
	}
	f.finish()
	c, _ = clusters.Get(f.ClusterName).Do()
	if c.Status != "RUNNING" || !gkeapi.AgentSandboxAddonEnabled(c) {
		t.Fatalf("after the operation: %s, enabled %v", c.Status, gkeapi.AgentSandboxAddonEnabled(c))
	}

	// Other add-ons are left alone: SetAddons merges what it is given.
	if _, err := clusters.SetAddons(f.ClusterName, &container.SetAddonsConfigRequest{AddonsConfig: &container.AddonsConfig{
		HttpLoadBalancing: &container.HttpLoadBalancing{Disabled: true},
	}}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	// Disabling needs ForceSendFields, or "enabled": false is not sent.
	if _, err := clusters.Update(f.ClusterName, &container.UpdateClusterRequest{Update: &container.ClusterUpdate{
		DesiredAddonsConfig: &container.AddonsConfig{AgentSandboxConfig: &container.AgentSandboxConfig{Enabled: false, ForceSendFields: []string{"Enabled"}}},
	}}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	c, _ = clusters.Get(f.ClusterName).Do()
	if gkeapi.AgentSandboxAddonEnabled(c) || c.AddonsConfig.HttpLoadBalancing == nil || !c.AddonsConfig.HttpLoadBalancing.Disabled {
		t.Errorf("addons after disable = %+v", c.AddonsConfig)
	}

	// An empty change and unmodelled cluster updates are refused.
	_, err = clusters.Update(f.ClusterName, &container.UpdateClusterRequest{Update: &container.ClusterUpdate{DesiredAddonsConfig: &container.AddonsConfig{}}}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", "at least one add-on")
	_, err = clusters.Update(f.ClusterName, &container.UpdateClusterRequest{Update: &container.ClusterUpdate{DesiredMasterVersion: "latest"}}).Do()
	apiErr(t, err, 501, "UNIMPLEMENTED", "desiredMasterVersion")
}

func TestAgentSandboxAddonNeedsARecentVersion(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{Version: "1.34.5-gke.1100000"})
	_, err := f.svc.Projects.Locations.Clusters.Update(f.ClusterName, &container.UpdateClusterRequest{Update: &container.ClusterUpdate{
		DesiredAddonsConfig: &container.AddonsConfig{AgentSandboxConfig: &container.AgentSandboxConfig{Enabled: true}},
	}}).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "Agent Sandbox requires GKE version "+gkeemu.MinAgentSandboxVersion)
}

func TestSizeAutoscalingAndManagement(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	f.create(t, gvisorPool("sandbox"))
	f.finish()
	name := f.poolName("sandbox")

	if _, err := f.pools().SetSize(name, &container.SetNodePoolSizeRequest{NodeCount: 4}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	if n, _ := f.NodePoolSize(name); n != 4 {
		t.Errorf("size = %d, want 4", n)
	}
	np, _ := f.pools().Get(name).Do()
	if np.InitialNodeCount != 1 {
		t.Errorf("initialNodeCount changed by setSize: %d", np.InitialNodeCount)
	}

	for _, tc := range []struct {
		a    *container.NodePoolAutoscaling
		want string
	}{
		{&container.NodePoolAutoscaling{Enabled: true, MinNodeCount: 5, MaxNodeCount: 2}, "must not exceed max_node_count"},
		{&container.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 2, TotalMaxNodeCount: 6}, "not both"},
		{&container.NodePoolAutoscaling{Enabled: true}, "maximum node count greater than 0"},
		{&container.NodePoolAutoscaling{Enabled: true, MaxNodeCount: 2, LocationPolicy: "NEAREST"},
			`Invalid value at 'autoscaling.location_policy': value "NEAREST" is not one of`},
	} {
		if tc.a.LocationPolicy == "NEAREST" {
			f.ExpectInvalidRequests() // refused by GKE's front end: no such enum value
		}
		_, err := f.pools().SetAutoscaling(name, &container.SetNodePoolAutoscalingRequest{Autoscaling: tc.a}).Do()
		apiErr(t, err, 400, "INVALID_ARGUMENT", tc.want)
	}
	if _, err := f.pools().SetAutoscaling(name, &container.SetNodePoolAutoscalingRequest{
		Autoscaling: &container.NodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 3},
	}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	np, _ = f.pools().Get(name).Do()
	if a := np.Autoscaling; a == nil || !a.Enabled || a.MaxNodeCount != 3 || a.LocationPolicy != "BALANCED" {
		t.Errorf("autoscaling = %+v", np.Autoscaling)
	}
	if n, _ := f.NodePoolSize(name); n != 3 {
		t.Errorf("the autoscaler did not bring the pool within limits: %d", n)
	}
	if _, err := f.pools().SetAutoscaling(name, &container.SetNodePoolAutoscalingRequest{
		Autoscaling: &container.NodePoolAutoscaling{Enabled: false},
	}).Do(); err != nil {
		t.Fatal(err)
	}
	f.finish()
	if np, _ = f.pools().Get(name).Do(); np.Autoscaling != nil {
		t.Errorf("autoscaling after disabling = %+v", np.Autoscaling)
	}

	_, err := f.pools().SetManagement(name, &container.SetNodePoolManagementRequest{
		Management: &container.NodeManagement{AutoRepair: true, AutoUpgrade: false},
	}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", "Auto_upgrade must be true when release_channel REGULAR is set")
	op, err := f.pools().SetManagement(name, &container.SetNodePoolManagementRequest{
		Management: &container.NodeManagement{AutoRepair: false, AutoUpgrade: true},
	}).Do()
	if err != nil || op.OperationType != gkeemu.OpSetNodePoolManage {
		t.Fatalf("set management: %v %v", op, err)
	}
	f.finish()
	if np, _ = f.pools().Get(name).Do(); np.Management.AutoRepair {
		t.Errorf("management = %+v", np.Management)
	}
}

func TestAutoUpgradeCanBeOffWithoutReleaseChannel(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{ReleaseChannel: "UNSPECIFIED"})
	np := gvisorPool("sandbox")
	np.Management = &container.NodeManagement{AutoRepair: true}
	f.create(t, np)
	f.finish()
	got, _ := f.NodePool(f.poolName("sandbox"))
	if got.Management.AutoUpgrade {
		t.Error("auto-upgrade on")
	}
}

func TestUpdateNodePoolFieldsAndVersions(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	np := gvisorPool("sandbox")
	np.Version = "1.34"
	f.create(t, np)
	f.finish()
	name := f.poolName("sandbox")
	got, _ := f.NodePool(name)
	if got.Version != "1.34.5-gke.1100000" {
		t.Fatalf("version alias 1.34 resolved to %s", got.Version)
	}

	update := func(req *container.UpdateNodePoolRequest) error {
		_, err := f.pools().Update(name, req).Do()
		f.finish()
		return err
	}
	for _, req := range []*container.UpdateNodePoolRequest{
		{NodeVersion: "1.35.2"},
		{MachineType: "n2-standard-8", DiskSizeGb: 200, DiskType: "pd-ssd"},
		{Locations: []string{"us-central1-a", "us-central1-f"}},
		{WorkloadMetadataConfig: &container.WorkloadMetadataConfig{Mode: "GCE_METADATA"}},
		{UpgradeSettings: &container.UpgradeSettings{MaxSurge: 2, MaxUnavailable: 1}},
	} {
		if err := update(req); err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
	}
	got, _ = f.NodePool(name)
	c := got.Config
	if got.Version != "1.35.2-gke.1269000" || c.MachineType != "n2-standard-8" || c.DiskSizeGb != 200 || c.DiskType != "pd-ssd" ||
		len(got.Locations) != 2 || len(got.InstanceGroupUrls) != 2 || c.WorkloadMetadataConfig.Mode != "GCE_METADATA" ||
		got.UpgradeSettings.MaxSurge != 2 || got.UpgradeSettings.MaxUnavailable != 1 {
		t.Errorf("after updates: %+v config %+v", got, c)
	}

	for _, tc := range []struct {
		req    *container.UpdateNodePoolRequest
		status string
		want   string
	}{
		{&container.UpdateNodePoolRequest{NodeVersion: "1.34"}, "INVALID_ARGUMENT", "downgrading"},
		{&container.UpdateNodePoolRequest{NodeVersion: "1.99.0-gke.1"}, "INVALID_ARGUMENT", "is not supported"},
		{&container.UpdateNodePoolRequest{Locations: []string{"europe-west1-b"}}, "INVALID_ARGUMENT", "not in the cluster's region"},
		{&container.UpdateNodePoolRequest{DiskSizeGb: 5}, "INVALID_ARGUMENT", "at least 10 GB"},
		{&container.UpdateNodePoolRequest{UpgradeSettings: &container.UpgradeSettings{}}, "INVALID_ARGUMENT", "cannot both be 0"},
		{&container.UpdateNodePoolRequest{}, "INVALID_ARGUMENT", "changes nothing"},
		{&container.UpdateNodePoolRequest{Tags: &container.NetworkTags{Tags: []string{"x"}}}, "UNIMPLEMENTED", `field "tags"`},
	} {
		_, err := f.pools().Update(name, tc.req).Do()
		code := 400
		if tc.status == "UNIMPLEMENTED" {
			code = 501
		}
		apiErr(t, err, code, tc.status, tc.want)
	}
}

func TestWorkloadMetadataNeedsWorkloadIdentity(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{NoWorkloadIdentity: true})
	np := gvisorPool("sandbox")
	np.Config.WorkloadMetadataConfig = &container.WorkloadMetadataConfig{Mode: "GKE_METADATA"}
	_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: np}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", "Workload Identity is not enabled")
}

func TestNodePoolInputValidation(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	f.ExpectInvalidRequests() // the taint effect NoSchedule
	for _, tc := range []struct {
		name string
		edit func(*container.NodePool)
		want string
	}{
		{"bad name", func(np *container.NodePool) { np.Name = "Sandbox_Pool" }, "Invalid node pool name"},
		{"zone elsewhere", func(np *container.NodePool) { np.Locations = []string{"europe-west1-b"} }, "not in the cluster's region"},
		{"region as zone", func(np *container.NodePool) { np.Locations = []string{"us-central1"} }, "is not a zone"},
		{"spot and preemptible", func(np *container.NodePool) { np.Config.Spot, np.Config.Preemptible = true, true }, "cannot both be set"},
		// An enum value the API does not have is refused by GKE's front end,
		// naming the field.
		{"bad effect", func(np *container.NodePool) {
			np.Config.Taints = []*container.NodeTaint{{Key: "a", Value: "b", Effect: "NoSchedule"}}
		}, `Invalid value at 'node_pool.config.taints[0].effect': value "NoSchedule" is not one of`},
		{"bad scope", func(np *container.NodePool) { np.Config.OauthScopes = []string{"cloud-platform"} }, "not a scope URL"},
		{"bad service account", func(np *container.NodePool) { np.Config.ServiceAccount = "me" }, "not a service account"},
		{"bad version", func(np *container.NodePool) { np.Version = "1.36" }, "is not supported"},
	} {
		np := gvisorPool("sandbox")
		tc.edit(np)
		_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: np}).Do()
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		apiErr(t, err, 400, "INVALID_ARGUMENT", tc.want)
	}
}

func TestAutopilotRefusesNodePoolOperations(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{Autopilot: true})
	_, err := f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: gvisorPool("sandbox")}).Do()
	apiErr(t, err, 400, "FAILED_PRECONDITION", "not supported on Autopilot")
}

func TestOperationsList(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	f.create(t, gvisorPool("a"))
	f.finish()
	f.create(t, gvisorPool("b"))
	list, err := f.svc.Projects.Locations.Operations.List("projects/emu-project/locations/us-central1").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Operations) != 2 || list.Operations[0].Status != "DONE" || list.Operations[1].Status != "PENDING" {
		t.Errorf("operations = %+v", list.Operations)
	}
	all, _ := f.svc.Projects.Locations.Operations.List("projects/emu-project/locations/-").Do()
	other, _ := f.svc.Projects.Locations.Operations.List("projects/emu-project/locations/europe-west1").Do()
	if len(all.Operations) != 2 || len(other.Operations) != 0 {
		t.Errorf("all %d, other %d", len(all.Operations), len(other.Operations))
	}
}

// The provider's own client (internal/clients/gkeapi) works against the emulator on a
// real clock: busy retries, operation polling via selfLink, failures.
func TestProviderClientAgainstEmulator(t *testing.T) {
	env := emutest.Start(t, gkeemu.Options{PendingDuration: 10 * time.Millisecond, RunningDuration: 50 * time.Millisecond}, gkeemu.ClusterSpec{})
	c, err := gkeapi.NewService(context.Background(), gkeapi.Config{AccessToken: "test", Endpoint: env.URL, AllowCredentialsOverHTTP: true},
		gkeapi.WithBusyBackoff(gkeapi.Backoff{Initial: 20 * time.Millisecond, Max: 50 * time.Millisecond}),
		gkeapi.WithPollBackoff(gkeapi.Backoff{Initial: 10 * time.Millisecond, Max: 30 * time.Millisecond}),
		gkeapi.WithRetry(4, gkeapi.Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := env.StartClusterOperation(env.ClusterName, "", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	env.InjectFault(&gkeemu.Fault{API: gkeapi.MethodNodePoolsCreate, Status: 503})
	start := time.Now()
	op, err := c.RunOperation(ctx, func() (*container.Operation, error) {
		return c.Service.Projects.Locations.Clusters.NodePools.Create(env.ClusterName,
			&container.CreateNodePoolRequest{NodePool: gvisorPool("sandbox")}).Context(ctx).Do()
	})
	if err != nil {
		t.Fatal(err)
	}
	if op.Status != "DONE" || time.Since(start) < 200*time.Millisecond {
		t.Errorf("operation %s after %s", op.Status, time.Since(start))
	}
	if n := env.Requests()[gkeapi.MethodNodePoolsCreate]; n < 3 {
		t.Errorf("create sent %d times: want a 503 retry and at least one busy retry", n)
	}

	env.FailNextOperation("", "FAILED_PRECONDITION", "Node pool could not be resized: node quota exhausted.")
	_, err = c.RunOperation(ctx, func() (*container.Operation, error) {
		return c.Service.Projects.Locations.Clusters.NodePools.SetSize(env.ClusterName+"/nodePools/sandbox",
			&container.SetNodePoolSizeRequest{NodeCount: 2}).Context(ctx).Do()
	})
	var failed *gkeapi.OperationFailedError
	if !errors.As(err, &failed) || !strings.Contains(err.Error(), "node quota exhausted") {
		t.Fatalf("want the operation's error, got %v", err)
	}
	d := gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsSetSize, env.ClusterName+"/nodePools/sandbox")
	if !strings.Contains(d.Detail(), "node quota exhausted") {
		t.Errorf("diagnostic lacks GKE's message: %s", d.Detail())
	}
}

// TestFaultResets: ResetBefore resets the connection without serving the
// request (nothing created), ResetAfter serves it and then resets (the
// pool exists, the answer is lost); both show as a connection reset to
// the client, and each applies to one request.
func TestFaultResets(t *testing.T) {
	env := emutest.Start(t, gkeemu.Options{PendingDuration: -1, RunningDuration: -1}, gkeemu.ClusterSpec{})
	c, err := gkeapi.NewService(context.Background(), gkeapi.Config{AccessToken: "test", Endpoint: env.URL, AllowCredentialsOverHTTP: true},
		gkeapi.WithRetry(1, gkeapi.Backoff{}))
	if err != nil {
		t.Fatal(err)
	}
	create := func(name string) error {
		_, err := c.Service.Projects.Locations.Clusters.NodePools.Create(env.ClusterName,
			&container.CreateNodePoolRequest{NodePool: gvisorPool(name)}).Context(t.Context()).Do()
		return err
	}
	for _, tc := range []struct {
		mode    gkeemu.ResetMode
		pool    string
		created bool
	}{{gkeemu.ResetBefore, "before", false}, {gkeemu.ResetAfter, "after", true}} {
		f := env.InjectFault(&gkeemu.Fault{API: gkeapi.MethodNodePoolsCreate, Reset: tc.mode})
		err := create(tc.pool)
		if err == nil || !strings.Contains(err.Error(), "connection reset") {
			t.Errorf("%s: create = %v, want a connection reset", tc.pool, err)
		}
		if _, ok := env.NodePool(env.ClusterName + "/nodePools/" + tc.pool); ok != tc.created {
			t.Errorf("%s: pool exists = %v, want %v", tc.pool, ok, tc.created)
		}
		if f.Hits() != 1 {
			t.Errorf("%s: fault hit %d times", tc.pool, f.Hits())
		}
	}
	if err := create("untouched"); err != nil {
		t.Errorf("a create after the faults: %v", err)
	}
}

// A MICROVM pool (SandboxConfig.type in the published API) is stored as
// sent: the emulator models none of the gVisor rules for it, since GKE's
// reachable documentation describes none, and adds no marks.
func TestMicroVMPoolIsStoredAsSent(t *testing.T) {
	f := newFixture(t, gkeemu.ClusterSpec{})
	np := gvisorPool("microvm")
	np.Config.SandboxConfig.Type = "MICROVM"
	np.Config.Labels = map[string]string{"team": "agents"}
	f.create(t, np)
	f.finish()
	got, err := f.pools().Get(f.poolName("microvm")).Do()
	if err != nil {
		t.Fatal(err)
	}
	c := got.Config
	if got.Status != "RUNNING" || c.SandboxConfig == nil || c.SandboxConfig.Type != "MICROVM" {
		t.Fatalf("status %s, sandbox %+v", got.Status, c.SandboxConfig)
	}
	if len(c.Labels) != 1 || c.Labels["team"] != "agents" || len(c.Taints) != 0 {
		t.Errorf("marks added to a MicroVM pool: labels %v taints %v", c.Labels, c.Taints)
	}
	// GKE's own taint key stays GKE's.
	np = gvisorPool("microvm2")
	np.Config.SandboxConfig.Type = "MICROVM"
	np.Config.Taints = []*container.NodeTaint{{Key: gkeemu.SandboxKey, Value: "microvm", Effect: "NO_SCHEDULE"}}
	_, err = f.pools().Create(f.ClusterName, &container.CreateNodePoolRequest{NodePool: np}).Do()
	apiErr(t, err, 400, "INVALID_ARGUMENT", "is reserved for GKE Sandbox")
}
