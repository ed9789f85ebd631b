package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"golang.org/x/mod/semver"
)

// DefaultReleaseBaseURL is where upstream publishes release assets:
// <base>/<tag>/<asset>.
const DefaultReleaseBaseURL = "https://github.com/kubernetes-sigs/agent-sandbox/releases/download"

// Release asset names, as upstream names them.
const (
	assetAll        = "sandbox-with-extensions.yaml" // ≥ v0.5.2, core + extensions in one
	assetCore       = "sandbox.yaml"                 // ≥ v0.5.2, core only
	assetLegacyCore = "manifest.yaml"                // ≤ v0.5.1, core only
	assetExtensions = "extensions.yaml"              // extension CRDs and RBAC, applied after the core
)

// firstAllInOneRelease is the first release that publishes sandbox.yaml and
// sandbox-with-extensions.yaml; older ones only have manifest.yaml and
// extensions.yaml.
const firstAllInOneRelease = "v0.5.2"

// inlineSource names an inline manifest in messages.
const inlineSource = "the inline manifest"

// sourceSpec is where the manifest comes from, resolved from the
// configuration: either URLs, fetched and concatenated in order, or an
// inline manifest.
type sourceSpec struct {
	URLs   []string
	Inline string
	// File is a local manifest file (manifest_file), read when planning
	// and again when applying.
	File string
	// Attr is the attribute that chose the source, for error paths.
	Attr string
}

// releaseAssets picks the assets of a release: the all-in-one file for
// releases that have it, else the legacy pair (or only the core file
// without extensions).
func releaseAssets(version string, extensions bool) []string {
	if semver.Compare(version, firstAllInOneRelease) < 0 {
		if extensions {
			return []string{assetLegacyCore, assetExtensions}
		}
		return []string{assetLegacyCore}
	}
	if extensions {
		return []string{assetAll}
	}
	return []string{assetCore}
}

// releaseURLs builds the download URLs of a release's assets.
func releaseURLs(base, version string, extensions bool) []string {
	if base == "" {
		base = DefaultReleaseBaseURL
	}
	base = strings.TrimRight(base, "/")
	var out []string
	for _, a := range releaseAssets(version, extensions) {
		out = append(out, base+"/"+version+"/"+a)
	}
	return out
}

// describe says in a few words where the manifest comes from.
func (s sourceSpec) describe() string {
	if s.File != "" {
		return "the file " + s.File
	}
	if len(s.URLs) == 0 {
		return inlineSource
	}
	return strings.Join(s.URLs, " + ")
}

// readManifestFile reads a manifest_file, bounded like a download.
func readManifestFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%s is larger than %d MiB: not a manifest", name, maxManifestBytes>>20)
	}
	return data, nil
}

// fetchError is a failure to obtain the manifest bytes.
type fetchError struct {
	URL string
	// Status is the HTTP status when the server answered, 0 otherwise.
	Status int
	Err    error
}

func (e *fetchError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("GET %s: the server answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("GET %s: %v", e.URL, e.Err)
}

func (e *fetchError) Unwrap() error { return e.Err }

// maxManifestBytes bounds one download: upstream's largest asset is about
// 1 MiB, so anything near this limit is not a manifest.
const maxManifestBytes = 64 << 20

// fetchAttempts and fetchBackoff make downloads survive a flaky mirror or
// a rate-limited GitHub without hiding a real outage for long. Tests
// shorten fetchBackoff.
var (
	fetchAttempts = 3
	fetchBackoff  = time.Second
)

// httpClient downloads manifests. It honours HTTPS_PROXY / NO_PROXY like
// every Go program and follows GitHub's redirect to its asset storage. Each
// request is bounded by the caller's context (the resource's timeouts), and
// the whole exchange additionally by a generous per-request limit so a
// stalled server can not hold a plan forever.
var httpClient = &http.Client{Timeout: 2 * time.Minute}

// fetch obtains the manifest files of a source. It never talks to the
// cluster, so errors here happen before any Kubernetes request.
func fetch(ctx context.Context, s sourceSpec, userAgent string) ([]manifestFile, error) {
	if s.File != "" {
		data, err := readManifestFile(s.File)
		if err != nil {
			return nil, err
		}
		return []manifestFile{{Source: s.File, Data: data}}, nil
	}
	if len(s.URLs) == 0 {
		return []manifestFile{{Source: inlineSource, Data: []byte(s.Inline)}}, nil
	}
	files := make([]manifestFile, 0, len(s.URLs))
	for _, u := range s.URLs {
		data, err := download(ctx, u, userAgent)
		if err != nil {
			return nil, err
		}
		files = append(files, manifestFile{Source: u, Data: data})
	}
	return files, nil
}

func download(ctx context.Context, url, userAgent string) ([]byte, error) {
	var last error
	for attempt := 1; attempt <= fetchAttempts; attempt++ {
		if attempt > 1 {
			select {
			case <-ctx.Done():
				return nil, &fetchError{URL: url, Err: errors.Join(ctx.Err(), last)}
			case <-time.After(fetchBackoff * time.Duration(attempt-1)):
			}
		}
		data, retry, err := downloadOnce(ctx, url, userAgent)
		if err == nil {
			tflog.Debug(ctx, "downloaded agent-sandbox manifest", map[string]any{"url": url, "bytes": len(data), "attempt": attempt})
			return data, nil
		}
		last = err
		if !retry {
			break
		}
		tflog.Warn(ctx, "downloading agent-sandbox manifest failed, retrying", map[string]any{"url": url, "attempt": attempt, "error": err.Error()})
	}
	return nil, last
}

// downloadOnce makes one attempt; retry says whether another could help
// (connection failures, 429 and 5xx), as opposed to a 404 or a bad URL.
func downloadOnce(ctx context.Context, url, userAgent string) (data []byte, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, false, &fetchError{URL: url, Err: err}
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/yaml, text/yaml, application/octet-stream, */*")
	resp, err := httpClient.Do(req)
	if err != nil {
		var netErr net.Error
		retry := ctx.Err() == nil && (errors.As(err, &netErr) || strings.Contains(err.Error(), "connection"))
		return nil, retry, &fetchError{URL: url, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return nil, retry, &fetchError{URL: url, Status: resp.StatusCode}
	}
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxManifestBytes+1))
	if err != nil {
		return nil, ctx.Err() == nil, &fetchError{URL: url, Err: fmt.Errorf("reading the body: %w", err)}
	}
	if len(data) > maxManifestBytes {
		return nil, false, &fetchError{URL: url, Err: fmt.Errorf("the response is larger than %d MiB, which is not a manifest", maxManifestBytes>>20)}
	}
	return data, false, nil
}

// manifestSHA256 is the digest manifest_sha256 is checked against: of the
// bytes exactly as fetched, files concatenated in order (for the two-file
// releases: manifest.yaml then extensions.yaml, as `cat a b | sha256sum`).
func manifestSHA256(files []manifestFile) string {
	h := sha256.New()
	for _, f := range files {
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}
