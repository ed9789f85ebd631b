package fastpath

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

func testMarker() readMarker {
	return readMarker{
		Type:   "agentsandbox_warm_pool",
		Object: ObjectKey{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxwarmpools", Namespace: "bench", Name: "set-1"},
		UID:    "6f1c0d7e-1111-2222-3333-444455556666", ResourceVersion: "4711",
		StateSHA256:  stateHash([]byte("state")),
		FieldManager: "terraform-provider-agentsandbox", Binary: "abc/def",
	}
}

func testPlanMarker() *planMarker {
	return &planMarker{ConfigSHA256: stateHash([]byte("config")), ProviderSHA256: stateHash([]byte("provider"))}
}

func TestReadMarker_roundTripInTheFrameworksEncoding(t *testing.T) {
	t.Run("read marker", func(t *testing.T) { roundTrip(t, testMarker()) })
	t.Run("with a plan marker", func(t *testing.T) {
		m := testMarker()
		m.Plan = testPlanMarker()
		roundTrip(t, m)
	})
}

func roundTrip(t *testing.T, m readMarker) {
	p, err := m.encodePrivate()
	if err != nil {
		t.Fatal(err)
	}
	// The framework's encoding: a JSON object of base64 JSON values
	// (internal/privatestate Data.Bytes is encoding/json of
	// map[string][]byte), so the framework hands it on byte for byte.
	var keys map[string][]byte
	if err := json.Unmarshal(p, &keys); err != nil || len(keys) != 1 || !json.Valid(keys[ReadMarkerKey]) {
		t.Fatalf("not the framework's encoding: %s (%v)", p, err)
	}
	again, _ := json.Marshal(keys)
	if !bytes.Equal(again, p) {
		t.Errorf("re-encoded by the framework: %s, want %s", again, p)
	}
	got, ok := decodePrivate(p)
	if !ok || !reflect.DeepEqual(got, m) {
		t.Fatalf("decoded %+v (%v), want %+v", got, ok, m)
	}
	if !onlyReadMarker(p) {
		t.Error("onlyReadMarker: false")
	}
}

func TestReadMarker_refusesAnythingElse(t *testing.T) {
	enc := func(keys map[string]string) []byte {
		m := map[string][]byte{}
		for k, v := range keys {
			m[k] = []byte(v)
		}
		b, _ := json.Marshal(m)
		return b
	}
	good, _ := json.Marshal(testMarker())
	var asMap map[string]any
	_ = json.Unmarshal(good, &asMap)
	without := func(field string) string {
		c := map[string]any{}
		for k, v := range asMap {
			if k != field {
				c[k] = v
			}
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	cases := map[string][]byte{
		"empty":               nil,
		"not JSON":            []byte("{"),
		"sdk style":           []byte(`{"agentsandbox_read":{"type":"x"}}`),
		"another key too":     enc(map[string]string{ReadMarkerKey: string(good), "agentsandbox_import_read": "true"}),
		"only another key":    enc(map[string]string{"agentsandbox_import_read": "true"}),
		"framework key too":   enc(map[string]string{ReadMarkerKey: string(good), ".import_before_read": "true"}),
		"unknown field":       enc(map[string]string{ReadMarkerKey: strings.Replace(string(good), `{`, `{"extra":1,`, 1)}),
		"trailing value":      enc(map[string]string{ReadMarkerKey: string(good) + " {}"}),
		"not an object":       enc(map[string]string{ReadMarkerKey: `"marker"`}),
		"short hash":          enc(map[string]string{ReadMarkerKey: strings.Replace(string(good), testMarker().StateSHA256, "abcd", 1)}),
		"no uid":              enc(map[string]string{ReadMarkerKey: without("uid")}),
		"no resourceVersion":  enc(map[string]string{ReadMarkerKey: without("rv")}),
		"no binary":           enc(map[string]string{ReadMarkerKey: without("binary")}),
		"no field manager":    enc(map[string]string{ReadMarkerKey: without("field_manager")}),
		"no type":             enc(map[string]string{ReadMarkerKey: without("type")}),
		"no object":           enc(map[string]string{ReadMarkerKey: without("object")}),
		"no state hash":       enc(map[string]string{ReadMarkerKey: without("state_sha256")}),
		"marker of null JSON": enc(map[string]string{ReadMarkerKey: `null`}),
	}
	withPlan := func(plan string) []byte {
		return enc(map[string]string{ReadMarkerKey: strings.Replace(string(good), `{`, `{"plan":`+plan+`,`, 1)})
	}
	full, _ := json.Marshal(testPlanMarker())
	if _, ok := decodePrivate(withPlan(string(full))); !ok {
		t.Fatalf("a marker with a plan marker refused: %s", withPlan(string(full)))
	}
	for name, plan := range map[string]string{
		"plan: short config hash": strings.Replace(string(full), testPlanMarker().ConfigSHA256, "abcd", 1),
		"plan: no provider hash":  `{"config_sha256":"` + testPlanMarker().ConfigSHA256 + `"}`,
		"plan: unknown field":     strings.Replace(string(full), `{`, `{"extra":1,`, 1),
		"plan: not an object":     `"plan"`,
		"plan: empty":             `{}`,
	} {
		cases[name] = withPlan(plan)
	}
	for name, p := range cases {
		if m, ok := decodePrivate(p); ok {
			t.Errorf("%s: accepted as %+v", name, m)
		}
	}
}

func TestWithoutReadMarker(t *testing.T) {
	only, _ := testMarker().encodePrivate()
	out, had, ok := withoutReadMarker(only)
	if !ok || !had || out != nil {
		t.Errorf("marker alone: %q %v %v", out, had, ok)
	}
	both, _ := json.Marshal(map[string][]byte{ReadMarkerKey: []byte(`{}`), "applied": []byte(`{"a":1}`)})
	out, had, ok = withoutReadMarker(both)
	want, _ := json.Marshal(map[string][]byte{"applied": []byte(`{"a":1}`)})
	if !ok || !had || !bytes.Equal(out, want) {
		t.Errorf("with another key: %q %v %v, want %q", out, had, ok, want)
	}
	out, had, ok = withoutReadMarker(want)
	if !ok || had || !bytes.Equal(out, want) {
		t.Errorf("without a marker: %q %v %v", out, had, ok)
	}
	if _, _, ok := withoutReadMarker([]byte("{")); ok {
		t.Error("undecodable private state: ok")
	}
}

// The build ID read from the test binary is the one `go tool buildid`
// prints for it.
func TestReadBuildID_isGoToolBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := readBuildID(exe)
	if err != nil || got == "" {
		t.Fatalf("readBuildID(%s): %q, %v", exe, got, err)
	}
	if binaryIdentity() != got {
		t.Errorf("binaryIdentity() = %q, want %q", binaryIdentity(), got)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to compare with")
	}
	out, err := exec.Command(goBin, "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if want := strings.TrimSpace(string(out)); got != want {
		t.Errorf("build ID %q, go tool buildid says %q", got, want)
	}
}

func TestReadBuildID_formats(t *testing.T) {
	// The ELF note: namesz, descsz, type, "Go\0\0", the ID padded to 4.
	note := func(typ uint32, name, desc string) []byte {
		var b bytes.Buffer
		for _, v := range []uint32{uint32(len(name)), uint32(len(desc)), typ} {
			_ = binary.Write(&b, binary.LittleEndian, v)
		}
		b.WriteString(name)
		b.Write(make([]byte, int(align4(uint32(len(name))))-len(name)))
		b.WriteString(desc)
		b.Write(make([]byte, int(align4(uint32(len(desc))))-len(desc)))
		return b.Bytes()
	}
	data := append(note(1, "GNU\x00", "xyz"), note(4, "Go\x00\x00", "aa/bb/cc/dd")...)
	if id, err := parseBuildIDNote(data, binary.LittleEndian); err != nil || id != "aa/bb/cc/dd" {
		t.Errorf("note: %q %v", id, err)
	}
	if _, err := parseBuildIDNote(note(4, "Gx\x00\x00", "aa"), binary.LittleEndian); err == nil {
		t.Error("a note of another owner was taken")
	}
	if _, err := parseBuildIDNote(data[:20], binary.LittleEndian); err == nil {
		t.Error("a truncated note was taken")
	}
	text := []byte("\x00\x01\xff Go build ID: \"aa/bb\"\n \xff\x00")
	if id, err := parseBuildIDString(text); err != nil || id != "aa/bb" {
		t.Errorf("text: %q %v", id, err)
	}
	if _, err := parseBuildIDString([]byte("\xff Go build ID: \"aa")); err == nil {
		t.Error("an unterminated ID was taken")
	}
	if _, err := readBuildID(os.DevNull); err == nil {
		t.Error("an empty file has a build ID")
	}
}

func TestReadSlot(t *testing.T) {
	var nilSlot *ReadSlot
	if _, _, ok := nilSlot.Take(ObjectKey{Name: "a"}); ok {
		t.Error("a nil slot offered an object")
	}
	nilSlot.Saw(Seen{}) // no panic
	ctx, s := withReadSlot(context.Background())
	if ReadSlotFrom(ctx) != s || ReadSlotFrom(context.Background()) != nil {
		t.Fatal("ReadSlotFrom")
	}
	a, b := ObjectKey{Version: "v1", Resource: "x", Name: "a"}, ObjectKey{Version: "v1", Resource: "x", Name: "b"}
	s.offer(Seen{Key: a, Found: true, UID: "u", ResourceVersion: "1"}, "obj")
	if _, _, ok := s.Take(b); ok {
		t.Error("the object of another key was taken")
	}
	obj, found, ok := s.Take(a)
	if !ok || !found || obj != "obj" {
		t.Errorf("Take: %v %v %v", obj, found, ok)
	}
	if _, _, ok := s.Take(a); ok {
		t.Error("taken twice")
	}
	if _, one := s.only(); one {
		t.Error("no read recorded, yet one")
	}
	s.Saw(Seen{Key: a, Found: true, UID: "u", ResourceVersion: "1"})
	if seen, one := s.only(); !one || seen.UID != "u" {
		t.Errorf("one read: %+v %v", seen, one)
	}
	s.Saw(Seen{Key: b})
	if _, one := s.only(); one {
		t.Error("two reads counted as one")
	}
}

// applyOnly is a framework server whose ApplyResourceChange answers resp.
type applyOnly struct {
	FrameworkServer
	resp *tfprotov6.ApplyResourceChangeResponse
}

func (a applyOnly) ApplyResourceChange(context.Context, *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return a.resp, nil
}

// An apply the wrapper does not mark (here: an unconfigured provider)
// drops the marker the framework carried over from the planned private
// state, and keeps every other key.
func TestApply_dropsTheMarkerItDoesNotWrite(t *testing.T) {
	marker := readMarker{Type: "agentsandbox_sandbox", Object: ObjectKey{Version: "v1", Resource: "sandboxes", Name: "a"}, UID: "u",
		ResourceVersion: "1", StateSHA256: strings.Repeat("0", 64), FieldManager: "agentsandbox", Binary: "b"}
	onlyMarker, err := marker.encodePrivate()
	if err != nil {
		t.Fatal(err)
	}
	withOther := []byte(`{"agentsandbox_read":` + strconv.Quote(base64.StdEncoding.EncodeToString(mustJSON(t, marker))) +
		`,"other":"dHJ1ZQ=="}`)
	for _, tc := range []struct {
		private, want []byte
	}{
		{onlyMarker, nil},
		{withOther, []byte(`{"other":"dHJ1ZQ=="}`)},
		{[]byte(`{"other":"dHJ1ZQ=="}`), []byte(`{"other":"dHJ1ZQ=="}`)},
		{nil, nil},
	} {
		s := New(applyOnly{resp: &tfprotov6.ApplyResourceChangeResponse{Private: tc.private}}, "agentsandbox", nil,
			func() (any, bool) { return nil, false })
		resp, err := s.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
			TypeName: "agentsandbox_sandbox", PlannedState: &tfprotov6.DynamicValue{MsgPack: []byte{0x80}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(resp.Private, tc.want) {
			t.Errorf("private %s: got %s, want %s", tc.private, resp.Private, tc.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
