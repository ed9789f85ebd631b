package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

const (
	defaultFieldManager = "agentsandbox"
	defaultQPS          = kube.DefaultQPS
	defaultBurst        = kube.DefaultBurst
)

var (
	stringType       = types.StringType
	gkeClusterNameRE = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/clusters/[^/]+$`)
	osLookupEnv      = os.LookupEnv
)

type providerModel struct {
	FieldManager types.String     `tfsdk:"field_manager"`
	Kubernetes   *kubernetesModel `tfsdk:"kubernetes"`
	GKE          *gkeModel        `tfsdk:"gke"`
}

type kubernetesModel struct {
	ConfigPath           types.String  `tfsdk:"config_path"`
	ConfigContext        types.String  `tfsdk:"config_context"`
	Host                 types.String  `tfsdk:"host"`
	Token                types.String  `tfsdk:"token"`
	ClusterCACertificate types.String  `tfsdk:"cluster_ca_certificate"`
	ClientCertificate    types.String  `tfsdk:"client_certificate"`
	ClientKey            types.String  `tfsdk:"client_key"`
	Insecure             types.Bool    `tfsdk:"insecure"`
	AllowCredsOverHTTP   types.Bool    `tfsdk:"allow_credentials_over_http"`
	TLSServerName        types.String  `tfsdk:"tls_server_name"`
	ProxyURL             types.String  `tfsdk:"proxy_url"`
	GKECluster           types.String  `tfsdk:"gke_cluster"`
	QPS                  types.Float64 `tfsdk:"qps"`
	Burst                types.Int64   `tfsdk:"burst"`
	Exec                 *execModel    `tfsdk:"exec"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

type gkeModel struct {
	Project        types.String `tfsdk:"project"`
	Credentials    types.String `tfsdk:"credentials"`
	AccessToken    types.String `tfsdk:"access_token"`
	Endpoint       types.String `tfsdk:"endpoint"`
	RequestTimeout types.String `tfsdk:"request_timeout"`
	AllowCredsHTTP types.Bool   `tfsdk:"allow_credentials_over_http"`
}

// validate checks combinations that single-attribute validators cannot see.
// Unknown values are skipped: they are checked again at apply.
func (m providerModel) validate() diag.Diagnostics {
	var diags diag.Diagnostics
	k := m.Kubernetes
	if k == nil {
		return diags
	}
	if e := k.Exec; e != nil {
		if e.Command.IsNull() {
			diags.AddAttributeError(path.Root("kubernetes").AtName("exec").AtName("command"), "Missing exec command",
				"The exec block runs a credential plugin and needs the command to run, e.g. command = \"gke-gcloud-auth-plugin\".")
		}
		if e.APIVersion.IsNull() {
			diags.AddAttributeError(path.Root("kubernetes").AtName("exec").AtName("api_version"), "Missing exec api_version",
				"Set api_version to the ExecCredential version the plugin speaks, usually \"client.authentication.k8s.io/v1\".")
		}
		if !k.GKECluster.IsNull() {
			diags.AddAttributeError(path.Root("kubernetes").AtName("gke_cluster"), "Conflicting credentials",
				"gke_cluster obtains the token from the gke block's Google credentials; remove the exec block or gke_cluster.")
		}
	}
	diags.Append(k.validatePlainHTTP()...)
	if !k.ClientCertificate.IsNull() != !k.ClientKey.IsNull() && !k.ClientCertificate.IsUnknown() && !k.ClientKey.IsUnknown() {
		diags.AddAttributeError(path.Root("kubernetes").AtName("client_key"), "Incomplete client certificate",
			"client_certificate and client_key must be set together.")
	}
	return diags
}

// resolve applies "attribute > environment variable" to every setting; the
// kube package then applies "explicit > kubeconfig". A setting whose
// attribute is unknown (e.g. a cluster endpoint created in this apply) makes
// the whole connection unknown for this phase: clients are then refused with
// an explanation instead of guessing from the environment.
func (m providerModel) resolve(lookupEnv func(string) (string, bool), version string) (conn.Settings, diag.Diagnostics) {
	var diags diag.Diagnostics
	r := resolver{lookupEnv: lookupEnv}
	s := conn.Settings{}

	s.FieldManager = r.str(m.FieldManager, "AGENTSANDBOX_FIELD_MANAGER")
	if s.FieldManager == "" {
		s.FieldManager = defaultFieldManager
	}
	userAgent := fmt.Sprintf("terraform-provider-agentsandbox/%s", version)

	k := m.Kubernetes
	if k == nil {
		k = &kubernetesModel{}
	}
	kc := kube.Config{UserAgent: userAgent, QPS: defaultQPS, Burst: defaultBurst}
	if p := r.str(k.ConfigPath, "KUBE_CONFIG_PATH"); p != "" {
		kc.ConfigPaths = []string{p}
	} else if ps := r.env("KUBE_CONFIG_PATHS"); ps != "" {
		kc.ConfigPaths = filepath.SplitList(ps)
	} else if ps := r.env("KUBECONFIG"); ps != "" {
		kc.ConfigPaths = filepath.SplitList(ps)
	}
	kc.ConfigContext = r.str(k.ConfigContext, "KUBE_CTX")
	kc.Host = r.str(k.Host, "KUBE_HOST")
	kc.Token = r.str(k.Token, "KUBE_TOKEN")
	kc.ClusterCACertificate = r.str(k.ClusterCACertificate, "KUBE_CLUSTER_CA_CERT_DATA")
	kc.ClientCertificate = r.str(k.ClientCertificate, "KUBE_CLIENT_CERT_DATA")
	kc.ClientKey = r.str(k.ClientKey, "KUBE_CLIENT_KEY_DATA")
	kc.TLSServerName = r.str(k.TLSServerName, "KUBE_TLS_SERVER_NAME")
	kc.ProxyURL = r.str(k.ProxyURL, "KUBE_PROXY_URL")
	kc.GKECluster = r.str(k.GKECluster, "")
	insecure, err := r.boolean(k.Insecure, "KUBE_INSECURE")
	if err != nil {
		diags.AddAttributeError(path.Root("kubernetes").AtName("insecure"), "Invalid KUBE_INSECURE", err.Error())
	}
	kc.Insecure = insecure
	allowHTTP, err := r.boolean(k.AllowCredsOverHTTP, "KUBE_ALLOW_CREDENTIALS_OVER_HTTP")
	if err != nil {
		diags.AddAttributeError(path.Root("kubernetes").AtName("allow_credentials_over_http"), "Invalid KUBE_ALLOW_CREDENTIALS_OVER_HTTP", err.Error())
	}
	kc.AllowCredentialsOverHTTP = allowHTTP
	if !k.QPS.IsNull() && !k.QPS.IsUnknown() {
		kc.QPS = float32(k.QPS.ValueFloat64())
	}
	if !k.Burst.IsNull() && !k.Burst.IsUnknown() {
		kc.Burst = int(k.Burst.ValueInt64())
	}
	if e := k.Exec; e != nil {
		ec := &kube.ExecConfig{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString()}
		diags.Append(e.Args.ElementsAs(context.Background(), &ec.Args, false)...)
		if !e.Env.IsNull() {
			diags.Append(e.Env.ElementsAs(context.Background(), &ec.Env, false)...)
		}
		r.note(e.APIVersion, e.Command, e.Args, e.Env)
		kc.Exec = ec
	}
	s.Kube = kc
	s.KubeUnknown = r.unknown

	r.unknown = false
	g := m.GKE
	if g == nil {
		g = &gkeModel{}
	}
	gc := gkeapi.Config{UserAgent: userAgent}
	gc.Project = r.str(g.Project, "GOOGLE_PROJECT", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT")
	gc.Credentials = r.str(g.Credentials, "GOOGLE_CREDENTIALS", "GOOGLE_CLOUD_KEYFILE_JSON", "GCLOUD_KEYFILE_JSON")
	gc.AccessToken = r.str(g.AccessToken, "GOOGLE_OAUTH_ACCESS_TOKEN")
	gc.Endpoint = r.str(g.Endpoint, "GOOGLE_CONTAINER_CUSTOM_ENDPOINT")
	gc.AllowCredentialsOverHTTP, _ = r.boolean(g.AllowCredsHTTP, "")
	if t := r.str(g.RequestTimeout, ""); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			diags.AddAttributeError(path.Root("gke").AtName("request_timeout"), "Invalid duration", err.Error())
		}
		gc.RequestTimeout = d
	}
	s.GKE = gc
	s.GKEUnknown = r.unknown
	// gke_cluster credentials come from the GKE connection, so an unknown
	// GKE setting also leaves the Kubernetes connection unknown.
	if kc.GKECluster != "" && s.GKEUnknown {
		s.KubeUnknown = true
	}
	return s, diags
}

// resolver reads one setting: the attribute when set, otherwise the first
// non-empty environment variable. It remembers whether any attribute was
// unknown.
type resolver struct {
	lookupEnv func(string) (string, bool)
	unknown   bool
}

func (r *resolver) note(vals ...attr.Value) {
	for _, v := range vals {
		if v.IsUnknown() {
			r.unknown = true
		}
	}
}

func (r *resolver) env(names ...string) string {
	for _, n := range names {
		if n == "" {
			continue
		}
		if v, ok := r.lookupEnv(n); ok && v != "" {
			return v
		}
	}
	return ""
}

func (r *resolver) str(v types.String, envNames ...string) string {
	r.note(v)
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	return r.env(envNames...)
}

func (r *resolver) boolean(v types.Bool, envName string) (bool, error) {
	r.note(v)
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueBool(), nil
	}
	raw := r.env(envName)
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(raw))
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean; use true or false", envName, raw)
	}
	return b, nil
}

// validatePlainHTTP refuses, at validate, what the configuration alone
// shows: an http:// host with a credential set in the same block and no
// explicit opt-in. What only the environment or a kubeconfig shows is
// refused when the client is built (kube.PlainHTTPError), before any request.
func (k *kubernetesModel) validatePlainHTTP() diag.Diagnostics {
	var diags diag.Diagnostics
	if k.Host.IsNull() || k.Host.IsUnknown() || k.AllowCredsOverHTTP.IsUnknown() || k.AllowCredsOverHTTP.ValueBool() {
		return diags
	}
	host := strings.TrimSpace(k.Host.ValueString())
	if !strings.HasPrefix(strings.ToLower(host), "http://") {
		return diags
	}
	var creds []string
	set := func(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }
	if set(k.Token) {
		creds = append(creds, "token")
	}
	if set(k.ClientCertificate) || set(k.ClientKey) {
		creds = append(creds, "client_certificate/client_key")
	}
	if k.Exec != nil {
		creds = append(creds, "exec")
	}
	if len(creds) == 0 {
		return diags
	}
	diags.AddAttributeError(path.Root("kubernetes").AtName("host"), "Credentials would be sent in clear text",
		fmt.Sprintf("host uses plain http, so %s would cross the network unencrypted, readable by anyone on the path. "+
			"Use an https:// address (an address without a scheme means https). Only for a throw-away cluster on a "+
			"network you trust, set allow_credentials_over_http = true; insecure = true does not allow this, it only "+
			"skips certificate verification.", strings.Join(creds, " and ")))
	return diags
}
