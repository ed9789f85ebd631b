#!/usr/bin/env bash
# make testacc-matrix: the provider as users install and run it, under every
# Terraform and OpenTofu CLI of the version matrix (tools/tfcli/build.sh:
# Terraform 1.5.7, the one on PATH, the newest Terraform and the newest
# OpenTofu the Go module proxy serves). Against ONE local cluster (testenv):
#   mirror    terraform init from a mirror of the release artifacts (lock
#             file hashes, version constraints, nothing else installed)
#   resources one acceptance lifecycle of every resource and data source but
#             the controller, in one configuration (internal/testing/
#             matrixacc): create, update in place, import
#             (ImportStateVerify), destroy (CheckDestroy)
#   module    examples/modules/agent-sandbox-platform's `terraform test`
#             (CLIs with `terraform test`: Terraform >= 1.6, OpenTofu)
#   examples  every example directory: apply, empty plan, destroy (one private
#             demo stack for all CLIs: the examples install the controller)
#   controller  agentsandbox_controller's lifecycle, last (it changes the
#             cluster-wide CRDs every other test uses)
# Environment: MATRIX="terraform-1.5.7 tofu-1.12.6" runs only those CLIs;
# MATRIX_PARTS="mirror module" only those parts. MATRIX_PROVIDER=dev gives the
# module tests a development build through dev_overrides instead of the
# release mirror (no goreleaser; the mirror part is then not run): what CI
# does. Results: .cache/matrix/results.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.cache/matrix
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
export GOFLAGS=${GOFLAGS:--buildvcs=false}
# Each step sets the CLI configuration it needs.
unset TF_CLI_CONFIG_FILE

step() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

if [[ ${1:-} != inner ]]; then
	mkdir -p "$OUT"
	step "the CLIs of the matrix (built from the Go module proxy, cached in .cache/tfcli)"
	t0=$SECONDS
	if [[ -z ${MATRIX:-} ]]; then
		tools/tfcli/build.sh >"$OUT/clis.txt"
	else
		# Only the CLIs asked for; the Terraform on PATH is used as it is.
		onpath=$(terraform version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([^"]*\)".*/terraform-\1/p')
		: >"$OUT/clis.txt"
		for l in $MATRIX; do
			case $l in
			"$onpath") echo "$l $(command -v terraform)" >>"$OUT/clis.txt" ;;
			terraform-*) tools/tfcli/build.sh "terraform@v${l#terraform-}" >>"$OUT/clis.txt" ;;
			tofu-*) tools/tfcli/build.sh "opentofu@v${l#tofu-}" >>"$OUT/clis.txt" ;;
			*) echo "MATRIX: unknown CLI $l (terraform-<version> or tofu-<version>)" >&2; exit 2 ;;
			esac
		done
	fi
	echo "    ready in $((SECONDS - t0)) s:"
	sed 's/^/    /' "$OUT/clis.txt"

	if [[ ${MATRIX_PROVIDER:-} == dev ]]; then
		step "the provider for dev_overrides (go build; no release artifacts, no goreleaser)"
		mkdir -p "$OUT/devbin"
		go build -o "$OUT/devbin/terraform-provider-agentsandbox" .
		cat >"$OUT/dev.tfrc" <<-EOT
			provider_installation {
			  dev_overrides {
			    "registry.terraform.io/agentsandbox/agentsandbox" = "$OUT/devbin"
			    "registry.opentofu.org/agentsandbox/agentsandbox" = "$OUT/devbin"
			  }
			  direct {}
			}
		EOT
	elif [[ -z ${MATRIX_PARTS:-} || " $MATRIX_PARTS " == *" mirror "* || " $MATRIX_PARTS " == *" module "* ]]; then
		platform=$(go env GOOS)_$(go env GOARCH)
		step "release artifacts for $platform (goreleaser, checked)"
		: "${GORELEASER:?run make testacc-matrix (it builds goreleaser), or set GORELEASER}"
		RELEASE_PLATFORMS=$platform RELEASE_DIST=$OUT/dist scripts/release.sh | sed 's/^/    /'
		rm -rf "$OUT/mirror"
		.cache/bin/release mirror -dist "$OUT/dist" -platforms "$platform" -dir "$OUT/mirror" -cli-config "$OUT/mirror.tfrc" | sed 's/^/    /'
	fi

	step "one local cluster for the whole matrix (testenv)"
	go build -o .cache/bin/testenv ./internal/testing/testenv/cmd/testenv
	if [[ -z ${AGENTSANDBOX_LOCALCLUSTER_BIN:-} ]]; then
		AGENTSANDBOX_LOCALCLUSTER_BIN="$(internal/devenv/localcluster/build.sh | tail -n1)"
	fi
	export AGENTSANDBOX_LOCALCLUSTER_BIN
	rc=0
	.cache/bin/testenv -- env TF_ACC=1 "$0" inner || rc=$?
	step "results (.cache/matrix/results.tsv)"
	column -t -s $'\t' "$OUT/results.tsv" | sed 's/^/    /'
	exit $rc
fi

# --- inner: runs under testenv, with KUBECONFIG pointing at its cluster ---
results=$OUT/results.tsv
printf 'cli\tpart\tresult\tseconds\n' >"$results"
failed=0
# record CLI PART CMD...: runs CMD, logging to .cache/matrix/<cli>-<part>.log.
record() {
	local cli=$1 part=$2 t0=$SECONDS res=pass
	shift 2
	local log=$OUT/$cli-$part.log
	printf '    %-18s %-10s ' "$cli" "$part"
	if ! "$@" >"$log" 2>&1; then
		res=FAIL
		failed=1
	elif grep -q -- '--- SKIP' "$log" && ! grep -q -- '--- PASS' "$log"; then
		res=skip
	fi
	printf '%s (%d s; %s)\n' "$res" $((SECONDS - t0)) "${log#"$ROOT"/}"
	[[ $res == FAIL ]] && tail -n 30 "$log" | sed 's/^/        /'
	printf '%s\t%s\t%s\t%d\n' "$cli" "$part" "$res" $((SECONDS - t0)) >>"$results"
}
wants() { [[ -z ${MATRIX_PARTS:-} || " $MATRIX_PARTS " == *" $1 "* ]]; }

declare -a labels paths
while read -r label path; do
	if [[ -z ${MATRIX:-} || " $MATRIX " == *" $label "* ]]; then
		labels+=("$label")
		paths+=("$path")
	fi
done <"$OUT/clis.txt"

# tfenv CLI_PATH: the environment terraform-plugin-testing needs for a CLI.
tfenv() {
	local env=(TF_ACC_TERRAFORM_PATH="$1")
	# OpenTofu resolves the provider's address on its own registry.
	[[ $(basename "$1") == tofu ]] && env+=(TF_ACC_PROVIDER_HOST=registry.opentofu.org)
	printf '%s\n' "${env[@]}"
}

# Every resource and data source but the controller, in one configuration
# (internal/testing/matrixacc): create, update in place, import
# (ImportStateVerify) and destroy, an empty plan after each apply.
RESOURCE_RUN='^TestAccMatrix_lifecycle$'
CONTROLLER_RUN='^TestAccController_(import|upgradeV05ToV10)$'

# module_test CLI_PATH: the module's own tests, in a copy of it, with the
# provider installed from the release mirror as a user's CI would (or, with
# MATRIX_PROVIDER=dev, a development build: no init for the provider, which
# dev_overrides serves; get installs the tests' fixture modules).
module_test() (
	bin=$1
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	cp -r examples/modules/agent-sandbox-platform "$dir/module"
	cd "$dir/module" || exit 1
	export HOME=$dir
	if [[ ${MATRIX_PROVIDER:-} == dev ]]; then
		export TF_CLI_CONFIG_FILE=$OUT/dev.tfrc
		"$bin" get -no-color || exit 1
	else
		export TF_CLI_CONFIG_FILE=$OUT/mirror.tfrc
		"$bin" init -input=false -no-color || exit 1
	fi
	"$bin" test -no-color -verbose
)

step "mirror, resources and module tests under each CLI"
for i in "${!labels[@]}"; do
	label=${labels[$i]} bin=${paths[$i]}
	mapfile -t env < <(tfenv "$bin")
	if wants mirror && [[ ${MATRIX_PROVIDER:-} != dev ]]; then
		record "$label" mirror env "${env[@]}" AGENTSANDBOX_RELEASE_DIST="$OUT/dist" \
			go test -count=1 -v -run '^TestAccInitFromMirror$' ./internal/devenv/release/
	fi
	if wants resources; then
		record "$label" resources env "${env[@]}" go test -count=1 -v -timeout 30m -run "$RESOURCE_RUN" ./internal/testing/matrixacc/
	fi
	if wants module; then
		if [[ $label == terraform-1.5.* ]]; then
			# Terraform 1.5's `terraform test` is the experimental one, which
			# reads no .tftest.hcl files.
			printf '%s\t%s\t%s\t%d\n' "$label" module "n/a (terraform test needs 1.6)" 0 >>"$results"
		else
			record "$label" module module_test "$bin"
		fi
	fi
done

if wants examples; then
	step "every example under each CLI (one private demo stack)"
	list=
	for i in "${!labels[@]}"; do list+="${list:+,}${labels[$i]}=${paths[$i]}"; done
	record all-clis examples env TF_ACC_TERRAFORM_PATHS="$list" go test -count=1 -v -timeout 60m -run '^TestAccExamples$' ./internal/testing/exampletest/
	# One row per CLI, from the test's subtests.
	for label in "${labels[@]}"; do
		for ex in existing-cluster platform-teams quickstart; do
			res=FAIL
			grep -q -- "--- PASS: TestAccExamples/$label/$ex " "$OUT/all-clis-examples.log" && res=pass
			printf '%s\t%s\t%s\t-\n' "$label" "example $ex" "$res" >>"$results"
		done
	done
fi

if wants controller; then
	step "agentsandbox_controller's lifecycle under each CLI (last: it changes the shared CRDs)"
	for i in "${!labels[@]}"; do
		mapfile -t env < <(tfenv "${paths[$i]}")
		record "${labels[$i]}" controller env "${env[@]}" go test -count=1 -v -timeout 30m -run "$CONTROLLER_RUN" ./internal/resources/controller/
	done
fi
exit $failed
