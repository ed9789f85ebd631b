package release

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Signature is what gpg found in a release's SHA256SUMS.sig.
type Signature struct {
	// Fingerprint is the signing key's (a subkey's when a subkey signed);
	// Primary is its primary key's, the one a registry namespace holds.
	Fingerprint, Primary string
	// Algo is the OpenPGP public-key algorithm of the signing key.
	Algo int
}

// AlgoName names an OpenPGP public-key algorithm (RFC 4880 9.1, RFC 6637,
// the EdDSA draft gpg implements).
func AlgoName(algo int) string {
	switch algo {
	case 1, 2, 3:
		return "RSA"
	case 16:
		return "ElGamal"
	case 17:
		return "DSA"
	case 18:
		return "ECDH"
	case 19:
		return "ECDSA"
	case 22:
		return "EdDSA"
	}
	return "algorithm " + strconv.Itoa(algo)
}

// registryAlgos are the key algorithms the Terraform registry accepts for a
// namespace's signing key: "You must use an RSA or DSA type key"
// (developer.hashicorp.com/terraform/registry/providers/publishing). gpg's
// default since 2.3 is an ed25519 (EdDSA) key, which the registry refuses.
var registryAlgos = []int{1, 3, 17}

// VerifySignature checks SHA256SUMS.sig as the registry does when a version
// is published and as `terraform init` does before it installs a zip: a
// binary (not ASCII-armored) detached signature of the release's SHA256SUMS,
// good, made by the key in publicKey (ASCII-armored, as a namespace's key is
// registered), an RSA or DSA key. gpg runs with a keyring of its own that
// holds that public key only, so no other key on the machine (the signing
// key itself included) can make a wrong signature pass.
func VerifySignature(a *Artifacts, publicKey []byte) (*Signature, error) {
	base := Prefix + "_" + a.Version
	sums := filepath.Join(a.Dir, base+"_SHA256SUMS")
	sigPath := sums + ".sig"
	sig, err := os.ReadFile(sigPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no %s: the release is not signed (goreleaser's signs: must sign the checksum artifact)", filepath.Base(sigPath))
		}
		return nil, err
	}
	if bytes.HasPrefix(bytes.TrimSpace(sig), []byte("-----BEGIN PGP")) {
		return nil, fmt.Errorf("%s is ASCII-armored; the registry requires a binary detached signature (gpg --detach-sign without --armor)", filepath.Base(sigPath))
	}
	if !bytes.Contains(publicKey, []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----")) {
		return nil, errors.New("the public key is not an ASCII-armored public key block (gpg --armor --export FINGERPRINT), the form the registry takes")
	}
	if bytes.Contains(publicKey, []byte("PRIVATE KEY BLOCK")) {
		return nil, errors.New("the public key file holds a private key")
	}

	home, err := os.MkdirTemp("", "release-verify-gnupg-")
	if err != nil {
		return nil, err
	}
	defer func() {
		// gpg may have started an agent for this home; stop it before
		// removing the directory its socket lives in.
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run()
		_ = os.RemoveAll(home)
	}()
	if err := os.Chmod(home, 0o700); err != nil {
		return nil, err
	}
	imp := exec.Command("gpg", "--batch", "--no-tty", "--homedir", home, "--import")
	imp.Stdin = bytes.NewReader(publicKey)
	if out, err := imp.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gpg --import of the public key: %w\n%s", err, out)
	}
	var status, stderr bytes.Buffer
	verify := exec.Command("gpg", "--batch", "--no-tty", "--homedir", home, "--status-fd", "1", "--verify", sigPath, sums)
	verify.Stdout, verify.Stderr = &status, &stderr
	runErr := verify.Run()
	s, err := parseVerifyStatus(status.String())
	if err != nil {
		return nil, fmt.Errorf("%s: %w\ngpg --verify said:\n%s", filepath.Base(sigPath), err, strings.TrimSpace(stderr.String()))
	}
	if runErr != nil {
		// A good signature with a non-zero exit status: something else
		// went wrong; never call that verified.
		return nil, fmt.Errorf("gpg --verify: %w\n%s", runErr, strings.TrimSpace(stderr.String()))
	}
	return s, nil
}

// parseVerifyStatus reads gpg's machine-readable status lines (--status-fd;
// gnupg's doc/DETAILS) of one --verify and says whether they show a good,
// valid signature by a key the registry accepts.
func parseVerifyStatus(status string) (*Signature, error) {
	var s *Signature
	good := false
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		f := strings.Fields(strings.TrimPrefix(sc.Text(), "[GNUPG:] "))
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "BADSIG":
			return nil, errors.New("BAD signature: SHA256SUMS is not the file that was signed (altered after signing)")
		case "ERRSIG":
			// ERRSIG <keyid> <pkalgo> <hashalgo> <sig_class> <time> <rc>; rc 9: no public key.
			if len(f) > 6 && f[6] == "9" {
				return nil, fmt.Errorf("signed by key %s, which is not the given public key", f[1])
			}
			return nil, fmt.Errorf("the signature cannot be checked (%s)", strings.Join(f, " "))
		case "EXPSIG", "EXPKEYSIG", "REVKEYSIG":
			return nil, fmt.Errorf("the signature is not valid: %s (expired or revoked)", f[0])
		case "NODATA":
			return nil, errors.New("not an OpenPGP signature")
		case "GOODSIG":
			good = true
		case "VALIDSIG":
			// VALIDSIG <fpr> <date> <timestamp> <expire> <version> <reserved>
			// <pkalgo> <hashalgo> <class> [<primary fpr>]
			if len(f) < 10 {
				return nil, fmt.Errorf("short VALIDSIG status line %q", sc.Text())
			}
			algo, err := strconv.Atoi(f[7])
			if err != nil {
				return nil, fmt.Errorf("VALIDSIG status line %q: %w", sc.Text(), err)
			}
			s = &Signature{Fingerprint: f[1], Primary: f[1], Algo: algo}
			if len(f) > 10 {
				s.Primary = f[10]
			}
		}
	}
	if !good || s == nil {
		return nil, errors.New("gpg reported no good, valid signature")
	}
	if !slices.Contains(registryAlgos, s.Algo) {
		return nil, fmt.Errorf("a good signature, but by a %s key (%s); the Terraform registry accepts only RSA and DSA signing keys", AlgoName(s.Algo), s.Primary)
	}
	return s, nil
}
