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
MIRROR=$DEMO/mirror
platform= # os_arch, set by release
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
	grep -E '^(Plan:|Apply complete|Destroy complete|No changes)|^- (Installing|Installed|Reusing|Using)|: (Creating|Creation complete|Modifying|Modifications complete|Destroying|Destruction complete|Still)' "$log" | sed 's/^/    /' || true
}

build() {
	step "Building the demo orchestrator (Go build cache: first time ~1-2 min)"
	mkdir -p "$BIN"
	go build -o "$BIN/demo" ./internal/devenv/demo/cmd/demo
}

# release builds the provider as the registry gets it (goreleaser, this
# platform only: the zip, SHA256SUMS, the manifest; checked against the
# registry's requirements), then makes the local filesystem mirror (packed
# layout) and the CLI configuration that installs agentsandbox/agentsandbox
# from it and nothing from the network.
release() {
	platform=$(go env GOOS)_$(go env GOARCH)
	step "Building the release artifacts for $platform with goreleaser and checking them (make release-snapshot RELEASE_PLATFORMS=$platform; ~1-2 min)"
	: "${GORELEASER:?run make demo (it builds goreleaser from the Go module proxy), or set GORELEASER}"
	RELEASE_PLATFORMS=$platform RELEASE_DIST=$DEMO/dist scripts/release.sh | sed 's/^/    /'

	step "Mirroring them into $MIRROR (packed layout); writing $TF_CLI_CONFIG_FILE, which installs agentsandbox/agentsandbox from there and nothing from the network"
	rm -rf "$MIRROR"
	.cache/bin/release mirror -dist "$DEMO/dist" -platforms "$platform" -dir "$MIRROR" -cli-config "$TF_CLI_CONFIG_FILE" | sed 's/^/    /'
}

up() {
	step "Prerequisites"
	echo "    $(go version)"
	# (not with the demo's CLI configuration, which is written below)
	echo "    $(env -u TF_CLI_CONFIG_FILE terraform version | head -n1)"
	build
	release

	step "Building the local control plane (first time ~10 min on 2 cores, then cached in .cache/localcluster)"
	local lc
	lc=$(internal/devenv/localcluster/build.sh | tail -n1)

	# Built here, in the foreground and without a time limit, not by the
	# stack below: on a fresh clone of a loaded machine the build alone can
	# outlast the stack's start-up bound.
	step "Building upstream's agent-sandbox controller of the default release from the Go module proxy (first time ~3-10 min on 2 cores, then cached in .cache/agent-sandbox-controller)"
	go run ./internal/devenv/realcontroller/cmd/realcontroller default | sed 's/^/    /'

	step "Starting the local stack in the background: control plane, the release's real controller, GKE emulator, release server"
	"$BIN/demo" up --dir "$DEMO" --localcluster-bin "$lc"

	step "Copying examples/quickstart to .cache/demo/quickstart, with terraform.tfvars.json pointing it at the local stack"
	mkdir -p "$WORK"
	rm -f "$WORK"/*.tf
	cp examples/quickstart/*.tf "$WORK/"
	cp "$DEMO/demo.tfvars.json" "$WORK/terraform.tfvars.json"

	step "terraform init: installs the provider from the mirror and records its version and hash in .terraform.lock.hcl"
	# A rebuilt provider (the tree changed since the last demo) keeps its
	# version, a snapshot of the same release, but not its hash: the old lock
	# file would refuse it, as it should refuse a changed release.
	local zip
	zip=$(cat "$DEMO"/dist/*.zip | sha256sum | cut -c1-64)
	if [[ -f $WORK/.terraform.lock.hcl && $(cat "$WORK/.provider-zip.sha256" 2>/dev/null) != "$zip" ]]; then
		echo "    the provider was rebuilt since the last make demo: dropping the lock file that records the old build"
		rm -rf "$WORK/.terraform.lock.hcl" "$WORK/.terraform/providers"
	fi
	if [[ ! -f $WORK/.terraform.lock.hcl ]]; then
		# As for any mirror: the lock file gets the package's hash from
		# terraform providers lock (what a team does for each platform it
		# runs on); init alone would compute it and warn that the lock file
		# holds this platform's checksum only.
		if ! terraform -chdir="$WORK" providers lock -fs-mirror="$MIRROR" -platform="$platform" -no-color >"$DEMO/terraform-lock.log" 2>&1; then
			cat "$DEMO/terraform-lock.log" >&2
			return 1
		fi
	fi
	tf init
	echo "$zip" >"$WORK/.provider-zip.sha256"
	sed -n '/^provider "registry.terraform.io\/agentsandbox\/agentsandbox"/,/^}/p' "$WORK/.terraform.lock.hcl" | sed 's/^/    /'

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
		  - Controller: the bundle's Deployment is installed but never runs (fake node); upstream's REAL controller of the
		    same release, built from the Go module proxy, runs on this machine out of cluster and reconciles them.
		  - Release assets: upstream's own release files, rendered from the release's Go module, served from a loopback mirror.
		  - The provider: this tree built by goreleaser as the registry gets it, installed by terraform init from a
		    local filesystem mirror (.cache/demo/mirror), not from the registry.

		Inspect:
		  kubectl --kubeconfig $DEMO/cluster/kubeconfig get sandboxwarmpool,sandbox -A
		  kubectl --kubeconfig $DEMO/cluster/kubeconfig get sandboxtemplate,networkpolicy,pods,svc -n default
		  terraform -chdir=.cache/demo/quickstart plan      (with TF_CLI_CONFIG_FILE=.cache/demo/terraformrc)
		  .cache/demo/quickstart/.terraform.lock.hcl        (the provider's version and hash, installed from .cache/demo/mirror)
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
