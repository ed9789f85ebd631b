package isolationreport

import "github.com/hashicorp/terraform-plugin-framework/types"

// configModel is the data source's whole value: the configuration's
// attributes and the computed report.
type configModel struct {
	Namespace    types.String `tfsdk:"namespace"`
	Selector     types.String `tfsdk:"selector"`
	Destinations []probeModel `tfsdk:"destinations"`
	Sources      []probeModel `tfsdk:"sources"`
	// IsolatingRuntimeClasses are RuntimeClasses the user declares
	// isolating (see runtimeOf).
	IsolatingRuntimeClasses types.Set    `tfsdk:"isolating_runtime_classes"`
	RouterNamespace         types.String `tfsdk:"router_namespace"`

	ID         types.String       `tfsdk:"id"`
	Sandboxes  []sandboxModel     `tfsdk:"sandboxes"`
	Violations []violationModel   `tfsdk:"violations"`
	Summary    *summaryModel      `tfsdk:"summary"`
	Router     *routerReportModel `tfsdk:"router"`
}

// probeModel is one extra destination or source.
type probeModel struct {
	Name      types.String `tfsdk:"name"`
	Address   types.String `tfsdk:"address"`
	Namespace types.String `tfsdk:"namespace"`
	Labels    types.Map    `tfsdk:"labels"`
	Port      types.Int64  `tfsdk:"port"`
	Protocol  types.String `tfsdk:"protocol"`
}

// reportModel is what analyze computes.
type reportModel struct {
	Sandboxes  []sandboxModel
	Violations []violationModel
	Summary    summaryModel
	Router     *routerReportModel
}

type sandboxModel struct {
	Name       string                  `tfsdk:"name"`
	Namespace  string                  `tfsdk:"namespace"`
	Origin     string                  `tfsdk:"origin"`
	Owner      string                  `tfsdk:"owner"`
	Template   string                  `tfsdk:"template"`
	Pod        string                  `tfsdk:"pod"`
	Runtime    runtimeModel            `tfsdk:"runtime"`
	Identity   identityModel           `tfsdk:"identity"`
	Process    processModel            `tfsdk:"process"`
	Network    networkModel            `tfsdk:"network"`
	Sandboxd   []sandboxdModel         `tfsdk:"sandboxd"`
	Violations []sandboxViolationModel `tfsdk:"violations"`
}

type runtimeModel struct {
	RuntimeClassName string `tfsdk:"runtime_class_name"`
	Handler          string `tfsdk:"handler"`
	GVisor           bool   `tfsdk:"gvisor"`
	Isolation        string `tfsdk:"isolation"`
	Node             string `tfsdk:"node"`
}

type identityModel struct {
	ServiceAccount string   `tfsdk:"service_account"`
	TokenMounted   bool     `tfsdk:"token_mounted"`
	Permissions    []string `tfsdk:"permissions"`
}

type processModel struct {
	RunAsNonRoot            bool     `tfsdk:"run_as_non_root"`
	Privileged              bool     `tfsdk:"privileged"`
	PrivilegeEscalation     bool     `tfsdk:"privilege_escalation"`
	CapabilitiesAdded       []string `tfsdk:"capabilities_added"`
	AllCapabilitiesDropped  bool     `tfsdk:"all_capabilities_dropped"`
	Seccomp                 string   `tfsdk:"seccomp"`
	HostNetwork             bool     `tfsdk:"host_network"`
	HostPID                 bool     `tfsdk:"host_pid"`
	HostIPC                 bool     `tfsdk:"host_ipc"`
	HostPathVolumes         []string `tfsdk:"host_path_volumes"`
	ContainersWithoutLimits []string `tfsdk:"containers_without_limits"`
}

type networkModel struct {
	Policies        []string              `tfsdk:"policies"`
	IngressIsolated bool                  `tfsdk:"ingress_isolated"`
	EgressIsolated  bool                  `tfsdk:"egress_isolated"`
	Egress          map[string]reachModel `tfsdk:"egress"`
	Ingress         map[string]reachModel `tfsdk:"ingress"`
}

type reachModel struct {
	Address   string   `tfsdk:"address"`
	Port      int64    `tfsdk:"port"`
	Protocol  string   `tfsdk:"protocol"`
	Verdict   string   `tfsdk:"verdict"`
	AllowedBy []string `tfsdk:"allowed_by"`
	Reason    string   `tfsdk:"reason"`
}

type sandboxViolationModel struct {
	Title     string `tfsdk:"title"`
	Message   string `tfsdk:"message"`
	Attribute string `tfsdk:"attribute"`
}

type violationModel struct {
	Sandbox   string `tfsdk:"sandbox"`
	Title     string `tfsdk:"title"`
	Message   string `tfsdk:"message"`
	Attribute string `tfsdk:"attribute"`
}

type summaryModel struct {
	Sandboxes       int64 `tfsdk:"sandboxes"`
	Pods            int64 `tfsdk:"pods"`
	Clean           int64 `tfsdk:"clean"`
	Violations      int64 `tfsdk:"violations"`
	GVisor          int64 `tfsdk:"gvisor"`
	Declared        int64 `tfsdk:"declared_isolating"`
	TokenMounted    int64 `tfsdk:"token_mounted"`
	IngressIsolated int64 `tfsdk:"ingress_isolated"`
	EgressIsolated  int64 `tfsdk:"egress_isolated"`
}
