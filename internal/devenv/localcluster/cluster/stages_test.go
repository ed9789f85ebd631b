package cluster

import (
	"bytes"
	"strings"
	"testing"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// stage mirrors the parts of kwok's Stage type the tests look at.
type stage struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ResourceRef struct {
			APIGroup string `json:"apiGroup"`
			Kind     string `json:"kind"`
		} `json:"resourceRef"`
		Steps []struct {
			Patch *struct {
				Subresource string `json:"subresource"`
				Root        string `json:"root"`
				Template    string `json:"template"`
			} `json:"patch"`
			Delete bool `json:"delete"`
		} `json:"steps"`
	} `json:"spec"`
}

func loadStages(t *testing.T) map[string]stage {
	t.Helper()
	out := map[string]stage{}
	for _, doc := range strings.Split(string(kwokStages), "\n---\n") {
		var s stage
		// Lenient on purpose: the struct above covers only part of a Stage.
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("stage document does not parse: %v\n%s", err, doc)
		}
		if s.APIVersion != "kwok.x-k8s.io/v1alpha1" || s.Kind != "Stage" || s.Metadata.Name == "" {
			t.Fatalf("not a kwok Stage: %+v", s)
		}
		out[s.Metadata.Name] = s
	}
	return out
}

// render executes a stage template with stand-ins for kwok's functions, the
// way kwok renders it: against the object as generic JSON.
func render(t *testing.T, tpl string, obj any) []byte {
	t.Helper()
	funcs := template.FuncMap{
		"Now":   func() string { return "2026-01-02T03:04:05Z" },
		"Quote": func(v any) string { b, _ := yaml.Marshal(v); return strings.TrimSpace(string(b)) },
		"PodIPWith": func(node string, hostNetwork bool, uid, name, ns string) string {
			return "10.64.0.7"
		},
		"NodeIPWith": func(node string) string { return "127.0.1.1" },
	}
	tmpl, err := template.New("").Funcs(funcs).Parse(tpl)
	if err != nil {
		t.Fatalf("template: %v", err)
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := yaml.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, generic); err != nil {
		t.Fatalf("execute: %v", err)
	}
	return buf.Bytes()
}

func TestStagesCoverLifecycle(t *testing.T) {
	stages := loadStages(t)
	for name, kind := range map[string]string{
		"localcluster-node-initialize": "Node",
		"localcluster-node-heartbeat":  "Node",
		"localcluster-pod-ready":       "Pod",
		"localcluster-pod-complete":    "Pod",
		"localcluster-pod-delete":      "Pod",
	} {
		s, ok := stages[name]
		if !ok {
			t.Errorf("missing stage %s", name)
			continue
		}
		if s.Spec.ResourceRef.Kind != kind || s.Spec.ResourceRef.APIGroup != "v1" {
			t.Errorf("%s: resourceRef %+v", name, s.Spec.ResourceRef)
		}
	}
	if steps := stages["localcluster-pod-delete"].Spec.Steps; len(steps) != 1 || !steps[0].Delete {
		t.Errorf("pod-delete must delete: %+v", steps)
	}
}

func statusTemplate(t *testing.T, s stage) string {
	t.Helper()
	for _, step := range s.Spec.Steps {
		if step.Patch != nil {
			if step.Patch.Subresource != "status" || step.Patch.Root != "status" {
				t.Fatalf("%s: patch %+v", s.Metadata.Name, step.Patch)
			}
			return step.Patch.Template
		}
	}
	t.Fatalf("%s: no patch step", s.Metadata.Name)
	return ""
}

func TestPodReadyTemplate(t *testing.T) {
	s := loadStages(t)["localcluster-pod-ready"]
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		NodeName:       "gvisor-pool-0",
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
		Containers:     []corev1.Container{{Name: "a", Image: "nginx"}, {Name: "b", Image: "envoy"}},
		ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}},
	}}
	out := render(t, statusTemplate(t, s), pod)
	var st corev1.PodStatus
	if err := yaml.UnmarshalStrict(out, &st); err != nil {
		t.Fatalf("rendered status is not a PodStatus: %v\n%s", err, out)
	}
	if st.Phase != corev1.PodRunning || st.PodIP != "10.64.0.7" || len(st.PodIPs) != 1 || st.PodIPs[0].IP != "10.64.0.7" || st.HostIP != "127.0.1.1" {
		t.Errorf("unexpected status %+v", st)
	}
	conds := map[corev1.PodConditionType]corev1.ConditionStatus{}
	for _, c := range st.Conditions {
		conds[c.Type] = c.Status
	}
	for _, c := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady, corev1.PodInitialized, "example.com/gate"} {
		if conds[c] != corev1.ConditionTrue {
			t.Errorf("condition %s = %q", c, conds[c])
		}
	}
	if len(st.ContainerStatuses) != 2 || !st.ContainerStatuses[1].Ready || st.ContainerStatuses[1].State.Running == nil {
		t.Errorf("container statuses %+v", st.ContainerStatuses)
	}
	if len(st.InitContainerStatuses) != 1 || st.InitContainerStatuses[0].State.Terminated == nil {
		t.Errorf("init container statuses %+v", st.InitContainerStatuses)
	}
}

func TestPodCompleteTemplate(t *testing.T) {
	s := loadStages(t)["localcluster-pod-complete"]
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "job", Image: "busybox"}}}}
	var st corev1.PodStatus
	if err := yaml.UnmarshalStrict(render(t, statusTemplate(t, s), pod), &st); err != nil {
		t.Fatal(err)
	}
	if st.Phase != corev1.PodSucceeded || st.ContainerStatuses[0].State.Terminated == nil {
		t.Errorf("unexpected status %+v", st)
	}
}

func TestNodeTemplates(t *testing.T) {
	stages := loadStages(t)
	var st corev1.NodeStatus
	if err := yaml.UnmarshalStrict(render(t, statusTemplate(t, stages["localcluster-node-initialize"]), &corev1.Node{}), &st); err != nil {
		t.Fatal(err)
	}
	var ready bool
	for _, c := range st.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready || len(st.Conditions) != 5 {
		t.Errorf("initialize: conditions %+v", st.Conditions)
	}

	node := &corev1.Node{Status: st}
	var hb corev1.NodeStatus
	if err := yaml.UnmarshalStrict(render(t, statusTemplate(t, stages["localcluster-node-heartbeat"]), node), &hb); err != nil {
		t.Fatal(err)
	}
	if len(hb.Conditions) != 5 {
		t.Fatalf("heartbeat: conditions %+v", hb.Conditions)
	}
	for i, c := range hb.Conditions {
		if c.Type != st.Conditions[i].Type || c.Status != st.Conditions[i].Status || !c.LastTransitionTime.Equal(&st.Conditions[i].LastTransitionTime) {
			t.Errorf("heartbeat changed condition %+v into %+v", st.Conditions[i], c)
		}
	}
}
