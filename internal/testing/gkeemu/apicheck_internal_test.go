package gkeemu

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/apidoc"
)

// The mutation the guard exists for, on the emulator's side: an answer
// with a field name the published API does not have (a typo in the
// emulator) is reported, naming the field. The emulator's real answer
// passes; the same answer with "nodePools" misspelt does not.
func TestGuardReportsAnAnswerWithAFieldTypo(t *testing.T) {
	doc, err := apidoc.Load()
	if err != nil {
		t.Fatal(err)
	}
	var got []apidoc.Violation
	s := New(Options{API: doc, Violation: func(v apidoc.Violation) { got = append(got, v) }})
	name, err := s.AddCluster(ClusterSpec{Project: "emu-project", Location: "us-central1", Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/"+name, nil)
	r.Header.Set("Authorization", "Bearer t")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || len(got) != 0 {
		t.Fatalf("the emulator's own answer: HTTP %d, violations %v", rec.Code, got)
	}
	if !bytes.Contains(rec.Body.Bytes(), []byte(`"nodePools"`)) {
		t.Fatalf("no nodePools in %s", rec.Body)
	}
	for typo, field := range map[string]string{
		`"nodePools"`:    "nodePols",
		`"addonsConfig"`: "addonsConfg",
		`"imageType"`:    "imageTyp",
	} {
		got = nil
		tw := &teeWriter{ResponseWriter: httptest.NewRecorder(), status: http.StatusOK}
		tw.buf.Write(bytes.Replace(rec.Body.Bytes(), []byte(typo), []byte(`"`+field+`"`), 1))
		s.checkAnswer(r, tw)
		if len(got) != 1 || !got[0].Unknown || got[0].Where != "response" || !strings.HasSuffix(got[0].Field, field) {
			t.Errorf("%s misspelt %s: violations %v", typo, field, got)
		}
	}
}

func TestFrontEndRefusalWording(t *testing.T) {
	for _, tc := range []struct {
		v    apidoc.Violation
		want string
	}{
		{apidoc.Violation{Field: "nodePool.config.sandboxConfg", Unknown: true},
			`Invalid JSON payload received. Unknown name "sandboxConfg" at 'node_pool.config': Cannot find field.`},
		{apidoc.Violation{Field: "nodePol", Unknown: true}, `Invalid JSON payload received. Unknown name "nodePol": Cannot find field.`},
		{apidoc.Violation{Field: "nodePool.config.sandboxConfig.type", Problem: `value "KATA" is not one of`},
			`Invalid value at 'node_pool.config.sandbox_config.type': value "KATA" is not one of.`},
		{apidoc.Violation{Field: `nodePool.config.labels["someKey"]`, Problem: "want a string"},
			`Invalid value at 'node_pool.config.labels["someKey"]': want a string.`},
		{apidoc.Violation{Field: "?validateOnly", Unknown: true, Problem: `unknown query parameter "validateOnly"`},
			`Invalid request: unknown query parameter "validateOnly".`},
	} {
		e := frontEndRefusal(tc.v)
		if e.status != "INVALID_ARGUMENT" || e.message != tc.want {
			t.Errorf("%+v:\n got %s %s\nwant %s", tc.v, e.status, e.message, tc.want)
		}
	}
}
