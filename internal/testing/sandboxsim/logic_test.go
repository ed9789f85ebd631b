package sandboxsim

// Tests of the pure decision logic; they need no cluster and always run.

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

func TestServicePorts(t *testing.T) {
	spec := &corev1.PodSpec{
		Containers: []corev1.Container{
			{Ports: []corev1.ContainerPort{{ContainerPort: 9000}, {Name: "http", ContainerPort: 8888}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}},
			// A second container publishing the same port does not add one.
			{Ports: []corev1.ContainerPort{{Name: "dup", ContainerPort: 8888}, {Name: "p-9000-tcp", ContainerPort: 7000}}},
		},
		InitContainers: []corev1.Container{
			{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Ports: []corev1.ContainerPort{{ContainerPort: 6000}}},
			{Ports: []corev1.ContainerPort{{ContainerPort: 5000}}}, // not a sidecar
		},
	}
	var got []string
	for _, p := range servicePorts(spec) {
		got = append(got, p.Name+"/"+string(p.Protocol)+"/"+p.TargetPort.String())
	}
	want := []string{"p-53-udp/UDP/53", "p-6000-tcp/TCP/6000", "p-9000-tcp/TCP/7000", "http/TCP/8888", "p-9000-tcp-2/TCP/9000"}
	if !slices.Equal(got, want) {
		t.Errorf("servicePorts = %v, want %v", got, want)
	}
}

func TestSyncPodMetadata(t *testing.T) {
	sb := &agentsv1beta1.Sandbox{ObjectMeta: metav1.ObjectMeta{Name: "sb", Labels: map[string]string{
		sandboxapi.LabelWarmPoolSandbox:        "poolhash",
		sandboxapi.LabelSandboxTemplateRefHash: "tplhash",
	}}}
	sb.Spec.PodTemplate.Metadata = agentsv1beta1.PodMetadata{
		Labels:      map[string]string{"a": "1", "b": "2", sandboxapi.LabelClaimUID: "forged"},
		Annotations: map[string]string{"x": "1"},
	}
	// Pool-owned: the pool's reserved labels reach the pod.
	sb.OwnerReferences = []metav1.OwnerReference{{APIVersion: extv1beta1.GroupVersion.String(), Kind: extv1beta1.SandboxWarmPoolKind, Name: "pool", UID: "p", Controller: ptr.To(true)}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"other": "kept"}}}
	if !syncPodMetadata(pod, sb, "h") {
		t.Fatal("first sync reported no change")
	}
	want := map[string]string{"a": "1", "b": "2", "other": "kept", sandboxapi.LabelSandboxNameHash: "h", LabelManagedBy: ManagedByValue,
		sandboxapi.LabelWarmPoolSandbox: "poolhash", sandboxapi.LabelSandboxTemplateRefHash: "tplhash"}
	if !mapsEqual(pod.Labels, want) {
		t.Errorf("labels = %v, want %v", pod.Labels, want)
	}
	if pod.Annotations[sandboxapi.AnnotationPropagatedLabels] != "a,b" || pod.Annotations["x"] != "1" {
		t.Errorf("annotations = %v", pod.Annotations)
	}
	if syncPodMetadata(pod, sb, "h") {
		t.Error("second sync with nothing changed reported a change")
	}

	// Adopted by a claim, with label b removed from the template.
	sb.OwnerReferences[0].Kind = extv1beta1.SandboxClaimKind
	delete(sb.Spec.PodTemplate.Metadata.Labels, "b")
	sb.Spec.PodTemplate.Metadata.Annotations = nil
	syncPodMetadata(pod, sb, "h")
	if _, ok := pod.Labels["b"]; ok {
		t.Error("label removed from the template stayed on the pod")
	}
	if _, ok := pod.Labels[sandboxapi.LabelWarmPoolSandbox]; ok {
		t.Error("warm-pool label stayed after the pool lost the sandbox")
	}
	if pod.Labels[sandboxapi.LabelSandboxTemplateRefHash] != "tplhash" || pod.Labels["other"] != "kept" {
		t.Errorf("labels after adoption = %v", pod.Labels)
	}
	if _, ok := pod.Annotations["x"]; ok {
		t.Error("annotation removed from the template stayed on the pod")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestReadyCondition(t *testing.T) {
	running := &corev1.Pod{Status: corev1.PodStatus{
		Phase:      corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		PodIPs:     []corev1.PodIP{{IP: "10.0.0.1"}},
	}}
	noIP := running.DeepCopy()
	noIP.Status.PodIPs = nil
	done := running.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	svc := &corev1.Service{}

	sb := func(mut func(*agentsv1beta1.Sandbox)) *agentsv1beta1.Sandbox {
		s := &agentsv1beta1.Sandbox{}
		if mut != nil {
			mut(s)
		}
		return s
	}
	withService := func(v bool) func(*agentsv1beta1.Sandbox) {
		return func(s *agentsv1beta1.Sandbox) { s.Spec.Service = ptr.To(v) }
	}
	for _, tc := range []struct {
		name   string
		sb     *agentsv1beta1.Sandbox
		pod    *corev1.Pod
		svc    *corev1.Service
		err    error
		status metav1.ConditionStatus
		reason string
	}{
		{"ready", sb(nil), running, nil, nil, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady},
		{"no pod", sb(nil), nil, nil, nil, metav1.ConditionFalse, agentsv1beta1.ReasonDependenciesNotReady},
		{"no pod IP yet", sb(nil), noIP, nil, nil, metav1.ConditionFalse, agentsv1beta1.ReasonDependenciesNotReady},
		{"service wanted but missing", sb(withService(true)), running, nil, nil, metav1.ConditionFalse, agentsv1beta1.ReasonDependenciesNotReady},
		{"service wanted and present", sb(withService(true)), running, svc, nil, metav1.ConditionTrue, agentsv1beta1.ReasonDependenciesReady},
		{"pod succeeded", sb(nil), done, nil, nil, metav1.ConditionFalse, agentsv1beta1.ReasonPodSucceeded},
		{"suspended", sb(func(s *agentsv1beta1.Sandbox) { s.Spec.OperatingMode = agentsv1beta1.OperatingModeSuspended }), nil, nil, nil, metav1.ConditionFalse, agentsv1beta1.ReasonSandboxSuspended},
		{"multiple pods", sb(nil), nil, nil, errMultiplePods, metav1.ConditionFalse, agentsv1beta1.ReasonMultiplePods},
		{"other error", sb(nil), running, nil, errors.New("boom"), metav1.ConditionFalse, agentsv1beta1.ReasonReconcilerError},
	} {
		c := readyCondition(tc.sb, tc.pod, tc.svc, tc.err)
		if c.Status != tc.status || c.Reason != tc.reason {
			t.Errorf("%s: Ready %s/%s (%s), want %s/%s", tc.name, c.Status, c.Reason, c.Message, tc.status, tc.reason)
		}
	}
}

func TestClaimExpiry(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	claim := func(lc *extv1beta1.Lifecycle, finishedAt *time.Time) *extv1beta1.SandboxClaim {
		c := &extv1beta1.SandboxClaim{Spec: extv1beta1.SandboxClaimSpec{Lifecycle: lc}}
		if finishedAt != nil {
			meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: extv1beta1.ClaimConditionFinished, Status: metav1.ConditionTrue,
				Reason: "PodSucceeded", LastTransitionTime: metav1.NewTime(*finishedAt)})
		}
		return c
	}
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	finished := now.Add(-5 * time.Second)
	for _, tc := range []struct {
		name    string
		claim   *extv1beta1.SandboxClaim
		expired bool
	}{
		{"no lifecycle", claim(nil, nil), false},
		{"shutdown in future", claim(&extv1beta1.Lifecycle{ShutdownTime: at(time.Minute)}, nil), false},
		{"shutdown passed", claim(&extv1beta1.Lifecycle{ShutdownTime: at(-time.Second)}, nil), true},
		{"ttl without Finished", claim(&extv1beta1.Lifecycle{TTLSecondsAfterFinished: ptr.To[int32](1)}, nil), false},
		{"ttl running", claim(&extv1beta1.Lifecycle{TTLSecondsAfterFinished: ptr.To[int32](60)}, &finished), false},
		{"ttl passed", claim(&extv1beta1.Lifecycle{TTLSecondsAfterFinished: ptr.To[int32](1)}, &finished), true},
		{"ttl earlier than shutdown", claim(&extv1beta1.Lifecycle{ShutdownTime: at(time.Hour), TTLSecondsAfterFinished: ptr.To[int32](0)}, &finished), true},
	} {
		if got, _ := claimExpiry(tc.claim, now); got != tc.expired {
			t.Errorf("%s: expired = %v, want %v", tc.name, got, tc.expired)
		}
	}
	if _, left := claimExpiry(claim(&extv1beta1.Lifecycle{ShutdownTime: at(time.Minute)}, nil), now); left < time.Minute || left > time.Minute+time.Second {
		t.Errorf("time left = %s, want about a minute", left)
	}
}

func TestValidateAdditionalPodMetadata(t *testing.T) {
	allowed := []string{DefaultAllowedLabelDomain}
	for _, tc := range []struct {
		name string
		md   agentsv1beta1.PodMetadata
		ok   bool
	}{
		{"allowed domain", agentsv1beta1.PodMetadata{Labels: map[string]string{"sandbox.users.io/user": "a"}}, true},
		{"allowed subdomain", agentsv1beta1.PodMetadata{Labels: map[string]string{"team.sandbox.users.io/x": "a"}}, true},
		{"no prefix", agentsv1beta1.PodMetadata{Labels: map[string]string{"user": "a"}}, false},
		{"other domain", agentsv1beta1.PodMetadata{Labels: map[string]string{"example.com/user": "a"}}, false},
		{"router identity", agentsv1beta1.PodMetadata{Labels: map[string]string{"app": "sandbox-router"}}, false},
		{"plain annotation", agentsv1beta1.PodMetadata{Annotations: map[string]string{"note": "x"}}, true},
		{"kubernetes annotation", agentsv1beta1.PodMetadata{Annotations: map[string]string{"foo.kubernetes.io/x": "y"}}, false},
		{"controller annotation", agentsv1beta1.PodMetadata{Annotations: map[string]string{sandboxapi.AnnotationPodName: "y"}}, false},
		{"safe-to-evict is exempt", agentsv1beta1.PodMetadata{Annotations: map[string]string{sandboxapi.AnnotationSafeToEvict: "false"}}, true},
	} {
		if err := validateAdditionalPodMetadata(&tc.md, allowed); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestInjectEnv(t *testing.T) {
	base := func() *corev1.PodSpec {
		return &corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init"}},
			Containers:     []corev1.Container{{Name: "main", Env: []corev1.EnvVar{{Name: "A", Value: "template"}}}, {Name: "side"}},
		}
	}
	env := func(kv ...string) []extv1beta1.EnvVar {
		var out []extv1beta1.EnvVar
		for i := 0; i+2 < len(kv)+1; i += 3 {
			out = append(out, extv1beta1.EnvVar{Name: kv[i], Value: kv[i+1], ContainerName: kv[i+2]})
		}
		return out
	}

	spec := base()
	if err := injectEnv(spec, env("B", "1", "", "C", "2", "side", "D", "3", "init"), extv1beta1.EnvVarsAllowed); err != nil {
		t.Fatal(err)
	}
	if len(spec.Containers[0].Env) != 2 || spec.Containers[0].Env[1].Name != "B" || spec.Containers[1].Env[0].Name != "C" || spec.InitContainers[0].Env[0].Name != "D" {
		t.Errorf("env not placed as asked: %+v", spec)
	}
	for _, tc := range []struct {
		name   string
		env    []extv1beta1.EnvVar
		policy extv1beta1.EnvVarsInjectionPolicy
		ok     bool
	}{
		{"disallowed by default", env("B", "1", ""), "", false},
		{"override needs Overrides", env("A", "x", ""), extv1beta1.EnvVarsAllowed, false},
		{"override with Overrides", env("A", "x", ""), extv1beta1.EnvVarsOverrides, true},
		{"unknown container", env("B", "1", "nope"), extv1beta1.EnvVarsAllowed, false},
	} {
		err := injectEnv(base(), tc.env, tc.policy)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, errEnvInjectionRejected)) {
			t.Errorf("%s: err = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestMergeVolumeClaimTemplates(t *testing.T) {
	vct := func(name, size string) agentsv1beta1.PersistentVolumeClaimTemplate {
		return agentsv1beta1.PersistentVolumeClaimTemplate{Metadata: agentsv1beta1.EmbeddedObjectMetadata{Name: name, Labels: map[string]string{"size": size}}}
	}
	tmpl := []agentsv1beta1.PersistentVolumeClaimTemplate{vct("data", "t")}
	summary := func(l []agentsv1beta1.PersistentVolumeClaimTemplate) string {
		var parts []string
		for _, v := range l {
			parts = append(parts, v.Metadata.Name+"="+v.Metadata.Labels["size"])
		}
		return strings.Join(parts, ",")
	}
	for _, tc := range []struct {
		name   string
		claim  []agentsv1beta1.PersistentVolumeClaimTemplate
		policy extv1beta1.VolumeClaimTemplatesPolicy
		want   string // "" for an error
	}{
		{"claim adds nothing", nil, "", "data=t"},
		{"disallowed", []agentsv1beta1.PersistentVolumeClaimTemplate{vct("extra", "c")}, extv1beta1.VolumeClaimTemplatesDisallowed, ""},
		{"allowed adds", []agentsv1beta1.PersistentVolumeClaimTemplate{vct("extra", "c")}, extv1beta1.VolumeClaimTemplatesAllowed, "data=t,extra=c"},
		{"allowed cannot override", []agentsv1beta1.PersistentVolumeClaimTemplate{vct("data", "c")}, extv1beta1.VolumeClaimTemplatesAllowed, ""},
		{"overrides replaces", []agentsv1beta1.PersistentVolumeClaimTemplate{vct("data", "c"), vct("extra", "c")}, extv1beta1.VolumeClaimTemplatesOverrides, "data=c,extra=c"},
		{"duplicate names", []agentsv1beta1.PersistentVolumeClaimTemplate{vct("x", "c"), vct("x", "c")}, extv1beta1.VolumeClaimTemplatesOverrides, ""},
	} {
		got, err := mergeVolumeClaimTemplates(tmpl, tc.claim, tc.policy)
		switch {
		case tc.want == "" && !errors.Is(err, errVolumeClaimTemplates):
			t.Errorf("%s: err = %v, want a volume claim templates error", tc.name, err)
		case tc.want != "" && (err != nil || summary(got) != tc.want):
			t.Errorf("%s: got %q, %v; want %q", tc.name, summary(got), err, tc.want)
		}
	}
}

func TestQuietLoggerDropsInfo(t *testing.T) {
	var buf bytes.Buffer
	var stopping atomic.Bool
	sink := funcr.New(func(p, a string) { buf.WriteString(p + a + "\n") }, funcr.Options{}).GetSink()
	l := logr.New(errorsOnlySink{LogSink: sink, stopping: &stopping}).WithName("x").WithValues("k", "v")
	l.Info("hidden")
	l.V(5).Info("hidden too")
	l.Error(errors.New("boom"), "shown")
	stopping.Store(true)
	l.Error(errors.New("boom"), "hidden while stopping")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
		t.Errorf("quiet logger output %q", out)
	}
}
