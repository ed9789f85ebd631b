#!/usr/bin/env bash
# Writes the provider's schema as `terraform providers schema -json` prints
# it to $1 (make generate and make docs-check hand it to tfplugindocs
# generate and validate with --providers-schema). tfplugindocs would
# otherwise build the provider and run terraform init for each of them; one
# build of the provider and one terraform call through dev_overrides (no
# init, nothing downloaded) serve both. The address is the one tfplugindocs
# looks the schema up under (registry.terraform.io/hashicorp/<name>); the
# docs do not depend on it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: providers-schema.sh OUT.json}
dir=$(dirname "$out")
mkdir -p "$dir/bin" "$dir/config"
go build -o "$dir/bin/terraform-provider-agentsandbox" .
cat >"$dir/dev.tfrc" <<EOT
provider_installation {
  dev_overrides {
    "registry.terraform.io/hashicorp/agentsandbox" = "$dir/bin"
  }
  direct {}
}
EOT
cat >"$dir/config/main.tf" <<'EOT'
terraform {
  required_providers {
    agentsandbox = { source = "hashicorp/agentsandbox" }
  }
}
EOT
if ! (cd "$dir/config" && TF_CLI_CONFIG_FILE="$dir/dev.tfrc" CHECKPOINT_DISABLE=1 terraform providers schema -json >"$out.tmp" 2>"$dir/terraform.log"); then
	cat "$dir/terraform.log" >&2
	echo "providers-schema: terraform providers schema failed" >&2
	exit 1
fi
mv "$out.tmp" "$out"
