package fastpath

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
)

// ReadMarkerKey is the key of the read marker in the framework's private
// state. The framework keeps keys that do not start with "." for the
// provider (terraform-plugin-framework internal/privatestate: keys with a
// leading "." are its own, e.g. ".import_before_read") and hands them to
// every later call unchanged, encoded as a JSON object whose values are
// the keys' JSON values in base64 (encoding/json of map[string][]byte).
const ReadMarkerKey = "agentsandbox_read"

// readMarker is the read marker: what a ReadResource answered by the
// framework saw, when its answer was the state it was given (see
// Server.ReadResource).
type readMarker struct {
	Type            string    `json:"type"`
	Object          ObjectKey `json:"object"`
	UID             string    `json:"uid"`
	ResourceVersion string    `json:"rv"`
	// StateSHA256 is the hex SHA-256 of the state's msgpack bytes, as
	// Terraform sent them.
	StateSHA256  string `json:"state_sha256"`
	FieldManager string `json:"field_manager"`
	Binary       string `json:"binary"`
	// Plan, when present, is the plan marker (plan.go): a plan of this
	// state under the configuration and provider settings it names plans
	// the state itself.
	Plan *planMarker `json:"plan,omitempty"`
}

func (m readMarker) complete() bool {
	return m.Type != "" && m.Object.Version != "" && m.Object.Resource != "" && m.Object.Name != "" &&
		m.UID != "" && m.ResourceVersion != "" && len(m.StateSHA256) == sha256.Size*2 && m.FieldManager != "" && m.Binary != "" &&
		(m.Plan == nil || m.Plan.complete())
}

// encodePrivate returns the private state that holds m and nothing else,
// as the framework encodes it.
func (m readMarker) encodePrivate() ([]byte, error) {
	v, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string][]byte{ReadMarkerKey: v})
}

// decodePrivate returns the read marker of a private state that holds it
// and nothing else; ok is false for anything else (no private state,
// other keys, a marker that is not one, with unknown or missing fields).
func decodePrivate(private []byte) (readMarker, bool) {
	var m readMarker
	if len(private) == 0 {
		return m, false
	}
	var keys map[string][]byte
	if json.Unmarshal(private, &keys) != nil || len(keys) != 1 {
		return m, false
	}
	raw, ok := keys[ReadMarkerKey]
	if !ok {
		return m, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(&m) != nil || dec.More() || !m.complete() {
		return readMarker{}, false
	}
	return m, true
}

// onlyReadMarker reports whether private holds a read marker and nothing
// else.
func onlyReadMarker(private []byte) bool {
	_, ok := decodePrivate(private)
	return ok
}

// withoutReadMarker returns private without the read marker key, as the
// framework would encode it (nil when nothing is left), and whether it held
// the key; ok is false when private cannot be decoded.
func withoutReadMarker(private []byte) (out []byte, had, ok bool) {
	if len(private) == 0 {
		return private, false, true
	}
	var keys map[string][]byte
	if json.Unmarshal(private, &keys) != nil {
		return private, false, false
	}
	if _, had = keys[ReadMarkerKey]; !had {
		return private, false, true
	}
	delete(keys, ReadMarkerKey)
	if len(keys) == 0 {
		return nil, true, true
	}
	out, err := json.Marshal(keys)
	if err != nil {
		return private, false, false
	}
	return out, true, true
}

func stateHash(msgpack []byte) string {
	h := sha256.Sum256(msgpack)
	return hex.EncodeToString(h[:])
}

// binaryIdentity is the Go build ID of the running executable: it changes
// whenever anything compiled into it changes, a dirty development build
// included (the build ID is a hash of the inputs and of the linked
// output). "" when it cannot be read, which turns the read fast path off.
var binaryIdentity = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	id, err := readBuildID(exe)
	if err != nil {
		return ""
	}
	return id
})

// readBuildID reads the Go build ID of the executable at path: from the
// ELF note Go's linker writes (section .note.go.buildid, note type 4,
// owner "Go"), else from the "\xff Go build ID: \"...\"\n \xff" string
// the linker puts at the start of the text of every Go binary (how
// `go tool buildid` reads it on other formats).
func readBuildID(path string) (string, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			data, err := s.Data()
			if err != nil {
				return "", err
			}
			return parseBuildIDNote(data, f.ByteOrder)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", err
	}
	return parseBuildIDString(buf[:n])
}

var errNoBuildID = errors.New("no Go build ID")

type byteOrder interface{ Uint32([]byte) uint32 }

func parseBuildIDNote(data []byte, bo byteOrder) (string, error) {
	const goNoteType = 4
	for len(data) >= 12 {
		namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		nameEnd := 12 + align4(namesz)
		descEnd := nameEnd + align4(descsz)
		if uint64(descEnd) > uint64(len(data)) {
			break
		}
		name := data[12 : 12+namesz]
		if typ == goNoteType && string(bytes.TrimRight(name, "\x00")) == "Go" && descsz > 0 {
			return string(data[nameEnd : nameEnd+descsz]), nil
		}
		data = data[descEnd:]
	}
	return "", errNoBuildID
}

func align4(n uint32) uint32 { return (n + 3) &^ 3 }

func parseBuildIDString(data []byte) (string, error) {
	prefix := []byte("\xff Go build ID: \"")
	i := bytes.Index(data, prefix)
	if i < 0 {
		return "", errNoBuildID
	}
	rest := data[i+len(prefix):]
	j := bytes.Index(rest, []byte("\"\n \xff"))
	if j <= 0 {
		return "", errNoBuildID
	}
	return string(rest[:j]), nil
}
