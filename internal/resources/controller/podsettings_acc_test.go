package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccController_chartPodOptions: the chart's pod options on the
// installed controller Deployment and on its running pods (scheduled by
// the affinity onto the system pool), changed in place, with an empty plan
// after each apply.
func TestAccController_chartPodOptions(t *testing.T) {
	rs := newReleaseServer(t)
	affinity := `jsonencode({ nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = [{
      matchExpressions = [{ key = "cloud.google.com/gke-nodepool", operator = "In", values = ["system-pool"] }] }] } } })`
	first := `
  controller = {
    image_pull_policy  = "IfNotPresent"
    image_pull_secrets = ["mirror-creds"]
    pod_labels         = { team = "platform" }
    pod_annotations    = { "example.com/scrape" = "true" }
    pod_security_context = { run_as_non_root = true, run_as_user = 65532, seccomp_profile = "RuntimeDefault" }
    container_security_context = {
      allow_privilege_escalation = false
      read_only_root_filesystem  = true
      capabilities_drop          = ["ALL"]
    }
    affinity = ` + affinity + `
  }`
	second := `
  controller = {
    image_pull_policy  = "Always"
    image_pull_secrets = ["mirror-creds", "backup-creds"]
    pod_labels         = { team = "agents" }
    container_security_context = { allow_privilege_escalation = false }
  }`
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:           configRelease(rs.URL, "v1.0.3", first),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDeploymentAvailable(),
				checkControllerPods(t, func(p corev1.Pod) string {
					c := p.Spec.Containers[0]
					switch {
					case c.ImagePullPolicy != corev1.PullIfNotPresent:
						return fmt.Sprintf("imagePullPolicy %s", c.ImagePullPolicy)
					case fmt.Sprint(p.Spec.ImagePullSecrets) != "[{mirror-creds}]":
						return fmt.Sprintf("imagePullSecrets %v", p.Spec.ImagePullSecrets)
					case p.Labels["team"] != "platform" || p.Labels["app"] != controllerName:
						return fmt.Sprintf("labels %v", p.Labels)
					case p.Annotations["example.com/scrape"] != "true":
						return fmt.Sprintf("annotations %v", p.Annotations)
					case p.Spec.SecurityContext == nil || p.Spec.SecurityContext.RunAsNonRoot == nil || !*p.Spec.SecurityContext.RunAsNonRoot ||
						p.Spec.SecurityContext.RunAsUser == nil || *p.Spec.SecurityContext.RunAsUser != 65532 ||
						p.Spec.SecurityContext.SeccompProfile == nil || p.Spec.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
						return fmt.Sprintf("pod securityContext %+v", p.Spec.SecurityContext)
					case c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation ||
						c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem ||
						c.SecurityContext.Capabilities == nil || fmt.Sprint(c.SecurityContext.Capabilities.Drop) != "[ALL]":
						return fmt.Sprintf("container securityContext %+v", c.SecurityContext)
					case p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil:
						return fmt.Sprintf("affinity %+v", p.Spec.Affinity)
					case !strings.HasPrefix(p.Spec.NodeName, "system-pool-"):
						return fmt.Sprintf("scheduled on %q, not on the system pool the affinity requires", p.Spec.NodeName)
					}
					return ""
				}),
			),
		}, {
			// Changed in place: the rollout's pods carry the new values,
			// and what was removed (affinity, pod security context,
			// annotations) is gone.
			Config: configRelease(rs.URL, "v1.0.3", second),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate)},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkDeploymentAvailable(),
				checkControllerPods(t, func(p corev1.Pod) string {
					c := p.Spec.Containers[0]
					switch {
					case c.ImagePullPolicy != corev1.PullAlways:
						return fmt.Sprintf("imagePullPolicy %s", c.ImagePullPolicy)
					case fmt.Sprint(p.Spec.ImagePullSecrets) != "[{mirror-creds} {backup-creds}]":
						return fmt.Sprintf("imagePullSecrets %v", p.Spec.ImagePullSecrets)
					case p.Labels["team"] != "agents":
						return fmt.Sprintf("labels %v", p.Labels)
					case p.Annotations["example.com/scrape"] != "":
						return fmt.Sprintf("annotations %v (removed from the configuration)", p.Annotations)
					case p.Spec.Affinity != nil:
						return fmt.Sprintf("affinity %+v (removed from the configuration)", p.Spec.Affinity)
					case p.Spec.SecurityContext != nil && p.Spec.SecurityContext.RunAsUser != nil:
						return fmt.Sprintf("pod securityContext %+v (removed from the configuration)", p.Spec.SecurityContext)
					case c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem != nil:
						return fmt.Sprintf("container securityContext %+v", c.SecurityContext)
					}
					return ""
				}),
			),
		}},
	})
}

// checkControllerPods waits until every pod of the controller Deployment
// (and at least one) passes check, as a rollout finishes.
func checkControllerPods(t *testing.T, check func(corev1.Pod) string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		cs := acctest.Clientset(t)
		return waitFor(ctx, time.Minute, func() error {
			pods, err := cs.CoreV1().Pods(controllerNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + controllerName})
			if err != nil {
				return err
			}
			n := 0
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					continue
				}
				n++
				if p.Status.Phase != corev1.PodRunning {
					return fmt.Errorf("controller pod %s is %s", p.Name, p.Status.Phase)
				}
				if bad := check(p); bad != "" {
					return fmt.Errorf("controller pod %s: %s", p.Name, bad)
				}
			}
			if n == 0 {
				return fmt.Errorf("no controller pods in %s", controllerNS)
			}
			return nil
		})
	}
}

// TestAccController_chartControllerValues: the chart's typed controller
// values on the installed Deployment's container args (and on its pods),
// in the chart's order after the release's own, changed in place, then
// removed (back to the release's args), with an empty plan after each
// apply.
func TestAccController_chartControllerValues(t *testing.T) {
	rs := newReleaseServer(t)
	checkArgs := func(want ...string) resource.TestCheckFunc {
		return checkControllerPods(t, func(p corev1.Pod) string {
			if got := p.Spec.Containers[0].Args; strings.Join(got, " ") != strings.Join(want, " ") {
				return fmt.Sprintf("args %q, want %q", got, want)
			}
			return ""
		})
	}
	step := func(settings string, want ...string) resource.TestStep {
		return resource.TestStep{
			Config:           configRelease(rs.URL, "v1.0.3", settings),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check:            resource.ComposeAggregateTestCheckFunc(checkDeploymentAvailable(), checkArgs(want...)),
		}
	}
	update := func(s resource.TestStep) resource.TestStep {
		s.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(resourceAddr, plancheck.ResourceActionUpdate)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
		return s
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(`
  controller = {
    leader_elect                             = false
    cluster_domain                           = "corp.example"
    kube_api_qps                             = 50
    kube_api_burst                           = 100
    sandbox_concurrent_workers               = 20
    sandbox_warm_pool_max_batch_size         = 50
    sandbox_warm_pool_readiness_grace_period = "10m"
    enable_warm_pool_eviction                = false
    args                                     = ["--zap-log-level=debug"]
  }`, "--leader-elect=false", "--extensions", "--cluster-domain=corp.example", "--kube-api-qps=50", "--kube-api-burst=100",
				"--sandbox-concurrent-workers=20", "--sandbox-warm-pool-max-batch-size=50",
				"--sandbox-warm-pool-readiness-grace-period=10m", "--enable-warm-pool-eviction=false", "--zap-log-level=debug"),
			// The other values; the block profile rate in decimal
			// (the chart renders 1000000 as 1e+06).
			update(step(`
  controller = {
    leader_election_namespace                        = "kube-system"
    enable_tracing                                   = true
    enable_pprof                                     = true
    enable_pprof_debug                               = true
    pprof_block_profile_rate                         = 1000000
    pprof_mutex_profile_fraction                     = 100
    kube_api_qps                                     = 2.5
    sandbox_claim_concurrent_workers                 = 25
    sandbox_warm_pool_concurrent_workers             = 4
    sandbox_template_concurrent_workers              = 2
    sandbox_warm_pool_unschedulable_recheck_interval = "90s"
  }`, "--leader-elect=true", "--extensions", "--leader-election-namespace=kube-system", "--enable-tracing=true",
				"--enable-pprof=true", "--enable-pprof-debug=true", "--pprof-block-profile-rate=1000000",
				"--pprof-mutex-profile-fraction=100", "--kube-api-qps=2.5", "--sandbox-claim-concurrent-workers=25",
				"--sandbox-warm-pool-concurrent-workers=4", "--sandbox-template-concurrent-workers=2",
				"--sandbox-warm-pool-unschedulable-recheck-interval=90s")),
			// v1.0.3's metrics TLS: the flags, and the Secret mounted
			// where --metrics-cert-dir points.
			update(resource.TestStep{
				Config: configRelease(rs.URL, "v1.0.3", `
  controller = {
    metrics_secure_serving = true
    metrics_cert_secret    = "metrics-tls"
  }`),
				Check: resource.ComposeAggregateTestCheckFunc(checkDeploymentAvailable(),
					checkArgs("--leader-elect=true", "--extensions", "--metrics-secure-serving=true", "--metrics-cert-dir=/etc/metrics-certs"),
					checkControllerPods(t, func(p corev1.Pod) string {
						mounted := slices.ContainsFunc(p.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool {
							return m.Name == "metrics-certs" && m.MountPath == "/etc/metrics-certs" && m.ReadOnly
						})
						secret := slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool {
							return v.Name == "metrics-certs" && v.Secret != nil && v.Secret.SecretName == "metrics-tls"
						})
						if !mounted || !secret {
							return fmt.Sprintf("metrics-tls not mounted: volumes %v, mounts %v", p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts)
						}
						return ""
					})),
			}),
			update(step("", "--leader-elect=true", "--extensions")),
		},
	})
}
