#!/usr/bin/env bash
# make demo / make demo-destroy: examples/quickstart applied against a local
# stand-in for GKE (see the README's quick start, which lists exactly these
# steps). Everything listens on 127.0.0.1; state lives in .cache/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEMO=$ROOT/.cache/demo
WORK=$DEMO/quickstart
BIN=$DEMO/bin
export TF_CLI_CONFIG_FILE=$DEMO/terraformrc
export TF_IN_AUTOMATION=1
# The quickstart reaches the cluster through the emulated GKE cluster only;
# nothing may fall back to a kubeconfig of this machine.
unset KUBECONFIG KUBE_CONFIG_PATH KUBE_CONFIG_PATHS GOOGLE_APPLICATION_CREDENTIALS GOOGLE_CREDENTIALS

T0=$SECONDS
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
elapsed() { printf '%dm%02ds' $(((SECONDS - T0) / 60)) $(((SECONDS - T0) % 60)); }

# tf runs terraform in the working copy, logging everything to LOG and
# showing the progress lines; on failure it shows the end of the log.
tf() {
	local log=$DEMO/terraform-$1.log
	if ! terraform -chdir="$WORK" "$@" -input=false -no-color >"$log" 2>&1; then
		tail -n 60 "$log" >&2
		echo "terraform $1 failed; full log: $log" >&2
		return 1
	fi
	grep -E '^(Plan:|Apply complete|Destroy complete|No changes)|: (Creating|Creation complete|Modifying|Modifications complete|Destroying|Destruction complete|Still)' "$log" | sed 's/^/    /' || true
}

build() {
	step "Building the provider and the demo orchestrator (Go build cache: first time ~1-2 min)"
	mkdir -p "$BIN"
	go build -o "$BIN/terraform-provider-agentsandbox" .
	go build -o "$BIN/demo" ./internal/devenv/demo/cmd/demo
}

up() {
	step "Prerequisites"
	echo "    $(go version)"
	# (not with the demo's CLI configuration, which is written below)
	echo "    $(env -u TF_CLI_CONFIG_FILE terraform version | head -n1)"
	build

	step "Building the local control plane (first time ~10 min on 2 cores, then cached in .cache/localcluster)"
	local lc
	lc=$(internal/devenv/localcluster/build.sh | tail -n1)

	step "Starting the local stack in the background: control plane, stand-in controller, GKE emulator, release server"
	"$BIN/demo" up --dir "$DEMO" --localcluster-bin "$lc"

	step "Writing $TF_CLI_CONFIG_FILE (dev_overrides: terraform uses the provider just built, no terraform init)"
	cat >"$TF_CLI_CONFIG_FILE" <<-EOT
		provider_installation {
		  dev_overrides {
		    "registry.terraform.io/agentsandbox/agentsandbox" = "$BIN"
		  }
		  direct {}
		}
	EOT

	step "Copying examples/quickstart to .cache/demo/quickstart, with terraform.tfvars.json pointing it at the local stack"
	mkdir -p "$WORK"
	rm -f "$WORK"/*.tf
	cp examples/quickstart/*.tf "$WORK/"
	cp "$DEMO/demo.tfvars.json" "$WORK/terraform.tfvars.json"

	step "terraform apply: gVisor node pool, controller, template, isolation policy, warm pool of 5, long-lived sandbox"
	tf apply -auto-approve

	step "terraform plan again: it must be empty"
	local rc=0
	terraform -chdir="$WORK" plan -detailed-exitcode -input=false -no-color >"$DEMO/terraform-plan.log" 2>&1 || rc=$?
	case $rc in
	0) echo "    No changes: the second plan is empty." ;;
	2)
		cat "$DEMO/terraform-plan.log" >&2
		echo "the second plan is NOT empty (a perpetual diff): please report it" >&2
		return 1
		;;
	*)
		tail -n 60 "$DEMO/terraform-plan.log" >&2
		return 1
		;;
	esac

	step "Outputs"
	terraform -chdir="$WORK" output -no-color | sed 's/^/    /'

	cat <<-EOT

		Done in $(elapsed). What ran where:
		  - Kubernetes: a real control plane on 127.0.0.1 with FAKE kwok nodes: no container runs, nothing runs in
		    gVisor, NetworkPolicies are stored but not enforced.
		  - GKE: the container API EMULATOR (internal/testing/gkeemu), not Google; its node pool has no VMs.
		  - Controller: the bundle's Deployment is installed but never runs; sandboxsim, a test-only STAND-IN for the
		    upstream controller, reconciles the sandboxes and the warm pool.
		  - Release assets: this repository's offline stand-ins, served from a loopback mirror.

		Inspect:
		  kubectl --kubeconfig $DEMO/cluster/kubeconfig get sandboxwarmpool,sandbox -A
		  kubectl --kubeconfig $DEMO/cluster/kubeconfig get sandboxtemplate,networkpolicy,pods,svc -n default
		  terraform -chdir=.cache/demo/quickstart plan      (with TF_CLI_CONFIG_FILE=.cache/demo/terraformrc)
		  logs: .cache/demo/serve.log (emulator and release server), .cache/demo/terraform-*.log

		Stop everything:
		  make demo-destroy
	EOT
}

down() {
	if [[ ! -x $BIN/demo ]]; then
		build
	fi
	if [[ -f $WORK/terraform.tfstate ]] && "$BIN/demo" status --dir "$DEMO" | grep -q '^running'; then
		step "terraform destroy"
		tf destroy -auto-approve
	elif [[ -f $WORK/terraform.tfstate ]]; then
		step "The local stack is not running: its objects are gone with it, skipping terraform destroy"
	fi
	rm -rf "$WORK"

	step "Stopping the local stack and checking that nothing is left running"
	"$BIN/demo" down --dir "$DEMO"
	printf '\nmake demo-destroy done in %s.\n' "$(elapsed)"
}

case ${1:-} in
up) up ;;
down) down ;;
*)
	echo "usage: scripts/demo.sh up|down" >&2
	exit 2
	;;
esac
