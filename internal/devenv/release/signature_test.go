package release

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gnupg is a throwaway GnuPG home with keys made for one test.
type gnupg struct {
	t    *testing.T
	home string
}

func newGnupg(t *testing.T) *gnupg {
	t.Helper()
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Skip("gpg not installed")
	}
	// gpg-agent's socket lives in it: stop the agent before the directory
	// is removed (cleanups run last-registered first).
	home := t.TempDir()
	t.Cleanup(func() { _ = exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run() })
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return &gnupg{t: t, home: home}
}

func (g *gnupg) run(stdin string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("gpg", append([]string{"--batch", "--no-tty", "--homedir", g.home}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		g.t.Fatalf("gpg %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

// key makes an unprotected signing key ("RSA" or "EDDSA") and returns its
// fingerprint.
func (g *gnupg) key(kind, name string) string {
	g.t.Helper()
	params := "%no-protection\nKey-Type: RSA\nKey-Length: 2048\n"
	if kind == "EDDSA" {
		params = "%no-protection\nKey-Type: EDDSA\nKey-Curve: ed25519\n"
	}
	params += "Key-Usage: sign\nName-Real: " + name + "\nName-Email: " + name + "@example.invalid\nExpire-Date: 0\n%commit\n"
	g.run(params, "--gen-key")
	for _, l := range strings.Split(g.run("", "--with-colons", "--list-secret-keys", name+"@example.invalid"), "\n") {
		if f := strings.Split(l, ":"); f[0] == "fpr" {
			return f[9]
		}
	}
	g.t.Fatalf("no fingerprint for %s", name)
	return ""
}

func (g *gnupg) publicKey(fpr string) []byte {
	return []byte(g.run("", "--armor", "--export", fpr))
}

func (g *gnupg) sign(fpr, file string, extra ...string) {
	g.t.Helper()
	_ = os.Remove(file + ".sig")
	g.run("", append(append([]string{"--local-user", fpr, "--output", file + ".sig"}, extra...), "--detach-sign", file)...)
}

// signedRelease writes a SHA256SUMS (content need not match any zip here:
// VerifySignature checks the signature only) and signs it with fpr.
func signedRelease(t *testing.T, g *gnupg, fpr string) (*Artifacts, string) {
	t.Helper()
	dir := t.TempDir()
	sums := filepath.Join(dir, Prefix+"_1.2.3_SHA256SUMS")
	content := strings.Repeat("a", 64) + "  " + Prefix + "_1.2.3_linux_amd64.zip\n" +
		strings.Repeat("b", 64) + "  " + Prefix + "_1.2.3_manifest.json\n"
	if err := os.WriteFile(sums, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	g.sign(fpr, sums)
	return &Artifacts{Dir: dir, Version: "1.2.3"}, sums
}

// The signature check is what the registry and terraform init do: a good
// binary detached signature of SHA256SUMS by the registered RSA or DSA key,
// checked with that public key alone. Each tampering a release can suffer
// after signing, and each signing mistake, fails it.
func TestVerifySignature(t *testing.T) {
	g := newGnupg(t)
	rsa := g.key("RSA", "release")
	other := g.key("RSA", "intruder")
	ed := g.key("EDDSA", "modern")

	t.Run("good", func(t *testing.T) {
		a, _ := signedRelease(t, g, rsa)
		s, err := VerifySignature(a, g.publicKey(rsa))
		if err != nil {
			t.Fatal(err)
		}
		if s.Primary != rsa || AlgoName(s.Algo) != "RSA" {
			t.Errorf("signature %+v, want RSA key %s", s, rsa)
		}
	})

	cases := map[string]struct {
		key    string // whose public key is "registered"
		signer string
		edit   func(t *testing.T, sums string)
		want   string
	}{
		"a checksum altered after signing": {edit: func(t *testing.T, sums string) {
			b, _ := os.ReadFile(sums)
			b[0] = 'c'
			writeFile(t, sums, b)
		}, want: "BAD signature"},
		"lines reordered after signing (every checksum still right)": {edit: func(t *testing.T, sums string) {
			b, _ := os.ReadFile(sums)
			l := strings.SplitAfter(string(b), "\n")
			writeFile(t, sums, []byte(l[1]+l[0]))
		}, want: "BAD signature"},
		"a line added after signing": {edit: func(t *testing.T, sums string) {
			b, _ := os.ReadFile(sums)
			writeFile(t, sums, append(b, []byte(strings.Repeat("d", 64)+"  extra.zip\n")...))
		}, want: "BAD signature"},
		"signed by a key other than the registered one": {signer: "other", want: "which is not the given public key"},
		"ASCII-armored signature": {edit: func(t *testing.T, sums string) {
			g.sign(rsa, sums, "--armor")
		}, want: "ASCII-armored"},
		"clear-signed instead of detached": {edit: func(t *testing.T, sums string) {
			_ = os.Remove(sums + ".sig")
			g.run("", "--local-user", rsa, "--output", sums+".sig", "--clearsign", sums)
		}, want: "ASCII-armored"},
		"an EdDSA key (gpg's default, which the registry refuses)": {key: "ed", signer: "ed", want: "by a EdDSA key"},
		"no signature": {edit: func(t *testing.T, sums string) {
			_ = os.Remove(sums + ".sig")
		}, want: "the release is not signed"},
		"not a signature": {edit: func(t *testing.T, sums string) {
			writeFile(t, sums+".sig", []byte("\x00\x01 not an OpenPGP packet"))
		}, want: "not an OpenPGP signature"},
	}
	keys := map[string]string{"": rsa, "other": other, "ed": ed}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, sums := signedRelease(t, g, keys[tc.signer])
			if tc.edit != nil {
				tc.edit(t, sums)
			}
			_, err := VerifySignature(a, g.publicKey(keys[tc.key]))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("VerifySignature: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}

	t.Run("the key given is not a public key block", func(t *testing.T) {
		a, _ := signedRelease(t, g, rsa)
		priv := []byte(g.run("", "--armor", "--export-secret-keys", rsa))
		if _, err := VerifySignature(a, priv); err == nil {
			t.Error("a private key block was accepted as the registry's public key")
		}
		if _, err := VerifySignature(a, []byte("AAAA")); err == nil || !strings.Contains(err.Error(), "ASCII-armored public key") {
			t.Errorf("VerifySignature with garbage: %v", err)
		}
	})
}

// gpg's status lines (doc/DETAILS) decide the verdict, not its exit status
// alone: an expired or revoked key is refused, and a good signature needs
// both GOODSIG and VALIDSIG.
func TestParseVerifyStatus(t *testing.T) {
	const fpr = "0123456789ABCDEF0123456789ABCDEF01234567"
	valid := func(algo string) string {
		return "[GNUPG:] VALIDSIG " + fpr + " 2026-12-05 1796000000 0 4 0 " + algo + " 10 00 " + fpr + "\n"
	}
	cases := map[string]struct{ status, want string }{
		"good RSA":        {status: "[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 0123456789ABCDEF release\n" + valid("1")},
		"good DSA":        {status: "[GNUPG:] GOODSIG 0123456789ABCDEF release\n" + valid("17")},
		"good ECDSA":      {status: "[GNUPG:] GOODSIG 0123456789ABCDEF release\n" + valid("19"), want: "by a ECDSA key"},
		"bad":             {status: "[GNUPG:] BADSIG 0123456789ABCDEF release\n", want: "BAD signature"},
		"expired key":     {status: "[GNUPG:] EXPKEYSIG 0123456789ABCDEF release\n" + valid("1"), want: "EXPKEYSIG"},
		"revoked key":     {status: "[GNUPG:] REVKEYSIG 0123456789ABCDEF release\n" + valid("1"), want: "REVKEYSIG"},
		"unknown key":     {status: "[GNUPG:] ERRSIG 0123456789ABCDEF 1 10 00 1796000000 9 -\n[GNUPG:] NO_PUBKEY 0123456789ABCDEF\n", want: "not the given public key"},
		"GOODSIG only":    {status: "[GNUPG:] GOODSIG 0123456789ABCDEF release\n", want: "no good, valid signature"},
		"VALIDSIG only":   {status: valid("1"), want: "no good, valid signature"},
		"nothing":         {status: "", want: "no good, valid signature"},
		"not a signature": {status: "[GNUPG:] NODATA 1\n", want: "not an OpenPGP signature"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := parseVerifyStatus(tc.status)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("parseVerifyStatus: %v", err)
			case tc.want == "" && s.Primary != fpr:
				t.Errorf("primary %q, want %q", s.Primary, fpr)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("parseVerifyStatus: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
