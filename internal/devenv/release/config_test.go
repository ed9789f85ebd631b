package release

import (
	"os"
	"strings"
	"testing"
)

// The repository's goreleaser configuration makes exactly what the registry
// reads, and each way of breaking it that goreleaser itself accepts (it
// would build and publish a release the registry then refuses) is caught.
func TestCheckConfig(t *testing.T) {
	cfg, err := os.ReadFile("../../../.goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckConfig(cfg); err != nil {
		t.Fatalf(".goreleaser.yml: %v", err)
	}
	cases := map[string]struct{ old, new, want string }{
		"armored signature": {`      - "--detach-sign"`, `      - "--armor"
      - "--detach-sign"`, "--armor: the registry requires a binary signature"},
		"clear-signed":          {`      - "--detach-sign"`, `      - "--clearsign"`, "lack \"--detach-sign\""},
		"every artifact signed": {`  - artifacts: checksum`, `  - artifacts: all`, "signs[0].artifacts \"all\""},
		"signature renamed": {`  - artifacts: checksum`, `  - artifacts: checksum
    signature: "${artifact}.asc"`, "want the default ${artifact}.sig"},
		"no signing key": {`      - "{{ .Env.GPG_FINGERPRINT }}"`, `      - "release@example.com"`, "lack \"--local-user\" \"{{ .Env.GPG_FINGERPRINT }}\""},
		"interactive gpg": {`      - "--batch"
`, ``, "lack --batch"},
		"no signs block":      {"signs:\n  - artifacts", "nosigns:\n  - artifacts", "0 signs entries"},
		"zip with README":     {`    files: ["none*"]`, ``, "want [\"none*\"]"},
		"tar.gz archives":     {`  - formats: [zip]`, `  - formats: [tar.gz]`, "want [zip]"},
		"binary without _v":   {`binary: "{{ .ProjectName }}_v{{ .Version }}"`, `binary: "{{ .ProjectName }}"`, "builds[0].binary"},
		"checksums.txt":       {`  name_template: "{{ .ProjectName }}_{{ .Version }}_SHA256SUMS"`, `  name_template: "checksums.txt"`, "checksum.name_template"},
		"manifest not hashed": {"checksum:\n  name_template: \"{{ .ProjectName }}_{{ .Version }}_SHA256SUMS\"\n  algorithm: sha256\n  extra_files:", "checksum:\n  name_template: \"{{ .ProjectName }}_{{ .Version }}_SHA256SUMS\"\n  algorithm: sha256\n  nothing:", "checksum.extra_files does not list"},
		"published at once":   {"  draft: true\n", "", "release.draft is not true"},
		"cgo":                 {"      - CGO_ENABLED=0\n", "      - CGO_ENABLED=1\n", "CGO_ENABLED=0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(string(cfg), tc.old) {
				t.Fatalf(".goreleaser.yml no longer holds %q: update this case", tc.old)
			}
			broken := strings.Replace(string(cfg), tc.old, tc.new, 1)
			err := CheckConfig([]byte(broken))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckConfig: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}
