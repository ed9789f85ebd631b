package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReleaseAssets(t *testing.T) {
	cases := []struct {
		version    string
		extensions bool
		want       []string
	}{
		{"v0.4.0", true, []string{"manifest.yaml", "extensions.yaml"}},
		{"v0.5.0", true, []string{"manifest.yaml", "extensions.yaml"}},
		{"v0.5.0", false, []string{"manifest.yaml"}},
		// v0.5.1 is the last release with the old names (published on
		// GitHub; no offline bundle, as the module proxy does not serve it).
		{"v0.5.1", true, []string{"manifest.yaml", "extensions.yaml"}},
		{"v0.5.2", true, []string{"sandbox-with-extensions.yaml"}},
		{"v0.5.6", false, []string{"sandbox.yaml"}},
		{"v1.0.0-rc.1", true, []string{"sandbox-with-extensions.yaml"}},
		{"v1.0.3", true, []string{"sandbox-with-extensions.yaml"}},
	}
	for _, c := range cases {
		if got := releaseAssets(c.version, c.extensions); !slices.Equal(got, c.want) {
			t.Errorf("releaseAssets(%s, %v) = %v, want %v", c.version, c.extensions, got, c.want)
		}
	}
}

func TestReleaseURLs(t *testing.T) {
	if got := releaseURLs("", "v1.0.3", true); !slices.Equal(got, []string{DefaultReleaseBaseURL + "/v1.0.3/sandbox-with-extensions.yaml"}) {
		t.Errorf("default base: %v", got)
	}
	got := releaseURLs("https://mirror.example.com/agent-sandbox/", "v0.5.0", true)
	want := []string{
		"https://mirror.example.com/agent-sandbox/v0.5.0/manifest.yaml",
		"https://mirror.example.com/agent-sandbox/v0.5.0/extensions.yaml",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mirror with trailing slash: %v, want %v", got, want)
	}
}

func TestSourceOfModel(t *testing.T) {
	m := controllerModelFor(map[string]string{"version": "v1.0.3"})
	if s := m.source(); s.Attr != "version" || len(s.URLs) != 1 || !strings.HasPrefix(s.URLs[0], DefaultReleaseBaseURL) {
		t.Errorf("release source: %+v", s)
	}
	m = controllerModelFor(map[string]string{"version": "v1.0.3", "manifest_url": "https://x/y.yaml"})
	if s := m.source(); s.Attr != "manifest_url" || !slices.Equal(s.URLs, []string{"https://x/y.yaml"}) || s.describe() != "https://x/y.yaml" {
		t.Errorf("URL source: %+v", s)
	}
	m = controllerModelFor(map[string]string{"version": "v1.0.3", "manifest": "kind: x"})
	if s := m.source(); s.Attr != "manifest" || s.Inline != "kind: x" || s.describe() != inlineSource {
		t.Errorf("inline source: %+v", s)
	}
}

func fastFetch(t *testing.T) {
	t.Helper()
	saved := fetchBackoff
	fetchBackoff = time.Millisecond
	t.Cleanup(func() { fetchBackoff = saved })
}

func TestFetch(t *testing.T) {
	fastFetch(t)
	var calls atomic.Int32
	var flaky atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("User-Agent") != "ua" {
			t.Errorf("User-Agent %q", r.Header.Get("User-Agent"))
		}
		switch r.URL.Path {
		case "/a.yaml":
			_, _ = w.Write([]byte("a: 1\n"))
		case "/b.yaml":
			_, _ = w.Write([]byte("b: 2\n"))
		case "/flaky.yaml":
			if flaky.Add(1) < 3 {
				http.Error(w, "try later", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok\n"))
		case "/down.yaml":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	files, err := fetch(ctx, sourceSpec{URLs: []string{srv.URL + "/a.yaml", srv.URL + "/b.yaml"}}, "ua")
	if err != nil || len(files) != 2 || string(files[0].Data) != "a: 1\n" || files[1].Source != srv.URL+"/b.yaml" {
		t.Fatalf("fetch two files: %v %+v", err, files)
	}
	sum := sha256.Sum256([]byte("a: 1\nb: 2\n"))
	if got := manifestSHA256(files); got != hex.EncodeToString(sum[:]) {
		t.Errorf("the checksum is not of the concatenation: %s", got)
	}

	calls.Store(0)
	if _, err = fetch(ctx, sourceSpec{URLs: []string{srv.URL + "/flaky.yaml"}}, "ua"); err != nil || calls.Load() != 3 {
		t.Errorf("a 503 twice, then 200: err %v after %d calls, want success after 3", err, calls.Load())
	}

	calls.Store(0)
	_, err = fetch(ctx, sourceSpec{URLs: []string{srv.URL + "/missing.yaml"}}, "ua")
	var fe *fetchError
	if !errors.As(err, &fe) || fe.Status != http.StatusNotFound || calls.Load() != 1 {
		t.Errorf("404: %v after %d calls; want a fetchError with status 404 and no retry", err, calls.Load())
	}
	if !strings.Contains(err.Error(), "GET "+srv.URL+"/missing.yaml: the server answered 404 Not Found") {
		t.Errorf("404 message: %v", err)
	}

	calls.Store(0)
	_, err = fetch(ctx, sourceSpec{URLs: []string{srv.URL + "/down.yaml"}}, "ua")
	if !errors.As(err, &fe) || fe.Status != http.StatusInternalServerError || calls.Load() != int32(fetchAttempts) {
		t.Errorf("500: %v after %d calls; want the status after %d attempts", err, calls.Load(), fetchAttempts)
	}

	_, err = fetch(ctx, sourceSpec{URLs: []string{"http://127.0.0.1:1/x.yaml"}}, "ua")
	if !errors.As(err, &fe) || fe.Status != 0 || !strings.Contains(err.Error(), "GET http://127.0.0.1:1/x.yaml:") {
		t.Errorf("unreachable: %v", err)
	}

	files, err = fetch(ctx, sourceSpec{Inline: "kind: x"}, "ua")
	if err != nil || len(files) != 1 || files[0].Source != inlineSource {
		t.Errorf("inline: %v %+v", err, files)
	}
}

func TestFetch_CancelledWhileBackingOff(t *testing.T) {
	saved := fetchBackoff
	fetchBackoff = time.Hour
	t.Cleanup(func() { fetchBackoff = saved })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := fetch(ctx, sourceSpec{URLs: []string{srv.URL + "/x"}}, "ua")
	if err == nil || time.Since(start) > 10*time.Second || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v after %s; want the deadline to end the backoff", err, time.Since(start))
	}
}
