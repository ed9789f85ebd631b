// Package apidoc holds GKE's container/v1 API as Google publishes it: the
// discovery document (container/v1/container-api.json) that the module
// google.golang.org/api ships next to the generated client, at the version
// this module requires. It checks HTTP requests and answers against it:
// the method (HTTP verb and path template, path parameters and their
// patterns, query parameters), and JSON bodies against the method's request
// and response schemas (field names and nesting, types including int64
// carried as strings, enums, timestamps and durations).
//
// The emulator (package gkeemu) uses it to answer as GKE's front end does
// when a request does not fit the published API, and to report anything it
// sends or is sent that the document does not have (emutest turns that
// into a test failure, naming the field).
package apidoc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Module is the Go module that ships the document, and File its path in it.
const (
	Module = "google.golang.org/api"
	File   = "container/v1/container-api.json"
)

// Document is a parsed discovery document.
type Document struct {
	Revision string
	// Path is where the document was read from.
	Path    string
	schemas map[string]*Schema
	global  map[string]*Parameter
	methods []*Method
}

// Schema is a discovery schema or property.
type Schema struct {
	ID                   string             `json:"id"`
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Enum                 []string           `json:"enum"`
	Items                *Schema            `json:"items"`
	Properties           map[string]*Schema `json:"properties"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	ReadOnly             bool               `json:"readOnly"`
}

// Parameter is a method's (or the API's global) parameter.
type Parameter struct {
	Location string   `json:"location"`
	Required bool     `json:"required"`
	Pattern  string   `json:"pattern"`
	Type     string   `json:"type"`
	Enum     []string `json:"enum"`
	Repeated bool     `json:"repeated"`
	pattern  *regexp.Regexp
}

// Method is one API method.
type Method struct {
	// ID without the API's prefix, as GKE's reference and the emulator name
	// methods: "projects.locations.clusters.nodePools.create".
	ID         string
	HTTPMethod string
	// Path is the method's path template, e.g. "v1/{+name}:setSize".
	Path       string
	Parameters map[string]*Parameter
	// Request and Response are schema IDs ("" for none).
	Request, Response string
	pathRE            *regexp.Regexp
	pathParams        []string
}

type rawMethod struct {
	ID         string                `json:"id"`
	HTTPMethod string                `json:"httpMethod"`
	Path       string                `json:"path"`
	Parameters map[string]*Parameter `json:"parameters"`
	Request    *struct {
		Ref string `json:"$ref"`
	} `json:"request"`
	Response *struct {
		Ref string `json:"$ref"`
	} `json:"response"`
}

type rawResource struct {
	Methods   map[string]*rawMethod   `json:"methods"`
	Resources map[string]*rawResource `json:"resources"`
}

// Parse reads a discovery document.
func Parse(data []byte) (*Document, error) {
	var raw struct {
		ID         string                  `json:"id"`
		Revision   string                  `json:"revision"`
		Parameters map[string]*Parameter   `json:"parameters"`
		Resources  map[string]*rawResource `json:"resources"`
		Schemas    map[string]*Schema      `json:"schemas"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("apidoc: parsing the discovery document: %w", err)
	}
	if len(raw.Schemas) == 0 || len(raw.Resources) == 0 {
		return nil, fmt.Errorf("apidoc: the discovery document has no schemas or no resources")
	}
	d := &Document{Revision: raw.Revision, schemas: raw.Schemas, global: raw.Parameters}
	prefix := strings.TrimSuffix(raw.ID, ":v1")
	prefix = strings.SplitN(prefix, ":", 2)[0] + "."
	var walk func(map[string]*rawResource) error
	walk = func(rs map[string]*rawResource) error {
		for _, r := range rs {
			for _, m := range r.Methods {
				mm := &Method{ID: strings.TrimPrefix(m.ID, prefix), HTTPMethod: m.HTTPMethod, Path: m.Path, Parameters: m.Parameters}
				if m.Request != nil {
					mm.Request = m.Request.Ref
				}
				if m.Response != nil {
					mm.Response = m.Response.Ref
				}
				if err := mm.compile(); err != nil {
					return err
				}
				d.methods = append(d.methods, mm)
			}
			if err := walk(r.Resources); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(raw.Resources); err != nil {
		return nil, err
	}
	sort.Slice(d.methods, func(i, j int) bool { return d.methods[i].ID < d.methods[j].ID })
	return d, nil
}

var templateVarRE = regexp.MustCompile(`\{(\+?)([A-Za-z0-9_.]+)\}`)

// compile turns the path template into a regular expression: {+name}
// matches across slashes (its pattern then decides), {name} one segment.
func (m *Method) compile() error {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range templateVarRE.FindAllStringSubmatchIndex(m.Path, -1) {
		b.WriteString(regexp.QuoteMeta(m.Path[last:loc[0]]))
		if loc[3] > loc[2] {
			b.WriteString("(.+)")
		} else {
			b.WriteString("([^/]+)")
		}
		m.pathParams = append(m.pathParams, m.Path[loc[4]:loc[5]])
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(m.Path[last:]))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return fmt.Errorf("apidoc: method %s: path %q: %w", m.ID, m.Path, err)
	}
	m.pathRE = re
	for name, p := range m.Parameters {
		if p.Pattern != "" {
			if p.pattern, err = regexp.Compile(p.Pattern); err != nil {
				return fmt.Errorf("apidoc: method %s: parameter %s: %w", m.ID, name, err)
			}
		}
	}
	return nil
}

// Methods lists the document's methods, by ID.
func (d *Document) Methods() []*Method { return d.methods }

// Schema returns a schema by ID.
func (d *Document) Schema(id string) (*Schema, bool) {
	s, ok := d.schemas[id]
	return s, ok
}

var (
	loadOnce sync.Once
	loaded   *Document
	loadErr  error
)

// Load reads the document from the module cache, once per process: the
// copy of google.golang.org/api that this module requires (go.mod), found
// with the go command. AGENTSANDBOX_CONTAINER_API_JSON names another file.
func Load() (*Document, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

func load() (*Document, error) {
	path := os.Getenv("AGENTSANDBOX_CONTAINER_API_JSON")
	if path == "" {
		dir, err := moduleDir()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, filepath.FromSlash(File))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("apidoc: reading the container/v1 discovery document: %w", err)
	}
	d, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("apidoc: %s: %w", path, err)
	}
	d.Path = path
	return d, nil
}

// moduleDir asks the go command where the required google.golang.org/api
// is, downloading it if the module cache does not hold it yet.
func moduleDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Module).Output()
	if dir := strings.TrimSpace(string(out)); err == nil && dir != "" {
		return dir, nil
	}
	out, err = exec.Command("go", "mod", "download", "-json", Module).Output()
	if err != nil {
		return "", fmt.Errorf("apidoc: finding %s in the module cache (go list -m, go mod download): %w; "+
			"set AGENTSANDBOX_CONTAINER_API_JSON to the path of %s instead", Module, err, File)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("apidoc: go mod download -json %s gave no directory: %s", Module, bytes.TrimSpace(out))
	}
	return info.Dir, nil
}

// Violation is one way a request or an answer departs from the document.
type Violation struct {
	// Method is the API method's ID, or "" when the request matched none.
	Method string
	// Where is "request" (the path, the query or the body) or "response".
	Where string
	// Field is the JSON path of the offending value in the body
	// ("nodePool.config.sandboxConfig.type"), or the parameter.
	Field string
	// Problem says what is wrong.
	Problem string
	// Unknown is set when the field does not exist in the document at all
	// (as opposed to a value of the wrong type or outside an enum).
	Unknown bool
}

func (v Violation) String() string {
	var b strings.Builder
	b.WriteString(v.Where)
	if v.Method != "" {
		b.WriteString(" of " + v.Method)
	}
	if v.Field != "" {
		b.WriteString(" at " + v.Field)
	}
	b.WriteString(": " + v.Problem)
	return b.String()
}

// Match finds the method a request addresses. The path is the URL path
// ("/v1/projects/..."); path parameters must match their patterns.
func (d *Document) Match(httpMethod, urlPath string) (*Method, map[string]string) {
	p := strings.TrimPrefix(urlPath, "/")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	for _, m := range d.methods {
		if m.HTTPMethod != httpMethod {
			continue
		}
		sub := m.pathRE.FindStringSubmatch(p)
		if sub == nil {
			continue
		}
		params := map[string]string{}
		ok := true
		for i, name := range m.pathParams {
			params[name] = sub[i+1]
			if prm := m.Parameters[name]; prm != nil && prm.pattern != nil && !prm.pattern.MatchString(sub[i+1]) {
				ok = false
			}
		}
		if ok {
			return m, params
		}
	}
	return nil, nil
}

// CheckRequest checks a request: that it addresses a method of the
// document, with known query parameters, and that its body fits the
// method's request schema. The method is nil when none matched.
func (d *Document) CheckRequest(httpMethod, urlPath string, query url.Values, body []byte) (*Method, []Violation) {
	m, _ := d.Match(httpMethod, urlPath)
	if m == nil {
		return nil, []Violation{{Where: "request", Field: httpMethod + " " + urlPath, Unknown: true,
			Problem: "no method of the container/v1 discovery document has this HTTP verb and path"}}
	}
	var vs []Violation
	for _, k := range sortedKeys(query) {
		prm := m.Parameters[k]
		if prm == nil || prm.Location != "query" {
			prm = d.global[k]
		}
		if prm == nil || prm.Location != "query" {
			vs = append(vs, Violation{Method: m.ID, Where: "request", Field: "?" + k, Unknown: true,
				Problem: fmt.Sprintf("unknown query parameter %q", k)})
			continue
		}
		for _, v := range query[k] {
			if len(prm.Enum) > 0 && !contains(prm.Enum, v) {
				vs = append(vs, Violation{Method: m.ID, Where: "request", Field: "?" + k,
					Problem: fmt.Sprintf("value %q is not one of %s", v, strings.Join(prm.Enum, ", "))})
			}
		}
	}
	switch {
	case m.Request == "" && len(bytes.TrimSpace(body)) > 0:
		vs = append(vs, Violation{Method: m.ID, Where: "request", Problem: "the method takes no request body, but one was sent"})
	case m.Request != "":
		vs = append(vs, d.checkBody(m.ID, "request", m.Request, body)...)
	}
	return m, vs
}

// CheckResponse checks a successful answer's body against the method's
// response schema.
func (d *Document) CheckResponse(m *Method, body []byte) []Violation {
	if m == nil || m.Response == "" {
		return nil
	}
	return d.checkBody(m.ID, "response", m.Response, body)
}

// CheckError checks an error answer's body against the error envelope of
// Google APIs ({"error": {"code", "message", "status", "errors", "details"}}),
// which discovery documents do not describe.
func CheckError(method string, body []byte) []Violation {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return []Violation{{Method: method, Where: "response", Problem: "the error answer is not a JSON object: " + err.Error()}}
	}
	var vs []Violation
	for k := range top {
		if k != "error" {
			vs = append(vs, Violation{Method: method, Where: "response", Field: k, Unknown: true, Problem: "unknown field of an error answer"})
		}
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal(top["error"], &e); err != nil || e == nil {
		return append(vs, Violation{Method: method, Where: "response", Field: "error", Problem: "missing or not an object"})
	}
	for _, k := range sortedKeys(e) {
		if !contains([]string{"code", "message", "status", "errors", "details"}, k) {
			vs = append(vs, Violation{Method: method, Where: "response", Field: "error." + k, Unknown: true, Problem: "unknown field of the error envelope"})
		}
	}
	return vs
}

func (d *Document) checkBody(method, where, schemaID string, body []byte) []Violation {
	if len(bytes.TrimSpace(body)) == 0 {
		return []Violation{{Method: method, Where: where, Problem: fmt.Sprintf("no body; the document says a %s", schemaID)}}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []Violation{{Method: method, Where: where, Problem: "the body is not JSON: " + err.Error()}}
	}
	var vs []Violation
	// Google's JSON parser reads an int64 from a number as well as from a
	// string, so a request may carry either; GKE's answers always carry
	// strings, and so must the emulator's.
	c := checker{d: d, strictInt64: where != "request"}
	c.check(&Schema{Ref: schemaID}, v, "", func(field, problem string, unknown bool) {
		vs = append(vs, Violation{Method: method, Where: where, Field: field, Problem: problem, Unknown: unknown})
	})
	return vs
}

// Validate checks a JSON value against a schema of the document, by ID.
func (d *Document) Validate(schemaID string, data []byte) []Violation {
	return d.checkBody("", "value", schemaID, data)
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

type checker struct {
	d           *Document
	strictInt64 bool
}

// check walks v against s, calling report for each departure.
func (c checker) check(s *Schema, v any, path string, report func(field, problem string, unknown bool)) {
	if s.Ref != "" {
		ref, ok := c.d.schemas[s.Ref]
		if !ok {
			report(path, fmt.Sprintf("the document refers to a schema %q it does not define", s.Ref), false)
			return
		}
		s = ref
	}
	if v == nil {
		return // JSON null: the field is absent, as Google's front end reads it
	}
	if s.Type == "" && s.Properties == nil && s.AdditionalProperties == nil {
		return // a schema that says nothing about its shape
	}
	switch s.Type {
	case "object", "":
		obj, ok := v.(map[string]any)
		if !ok {
			report(path, fmt.Sprintf("want an object (%s), got %s", nameOf(s), kindOf(v)), false)
			return
		}
		for _, k := range sortedKeys(obj) {
			if p, ok := s.Properties[k]; ok {
				c.check(p, obj[k], join(path, k), report)
				continue
			}
			if s.AdditionalProperties != nil {
				c.check(s.AdditionalProperties, obj[k], fmt.Sprintf("%s[%q]", path, k), report)
				continue
			}
			report(join(path, k), fmt.Sprintf("unknown field %q: %s has no such field", k, nameOf(s)), true)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			report(path, "want an array, got "+kindOf(v), false)
			return
		}
		for i, e := range arr {
			if s.Items != nil {
				c.check(s.Items, e, fmt.Sprintf("%s[%d]", path, i), report)
			}
		}
	case "string":
		str, ok := v.(string)
		if n, isNum := v.(json.Number); isNum && !c.strictInt64 && (s.Format == "int64" || s.Format == "uint64") {
			str, ok = string(n), true
		}
		if !ok {
			hint := ""
			if s.Format == "int64" || s.Format == "uint64" {
				hint = " (int64 values travel as JSON strings)"
			}
			report(path, fmt.Sprintf("want a string%s, got %s", hint, kindOf(v)), false)
			return
		}
		if len(s.Enum) > 0 && !contains(s.Enum, str) {
			report(path, fmt.Sprintf("value %q is not one of the enum's values (%s)", str, strings.Join(s.Enum, ", ")), false)
		}
		if problem := checkFormat(s.Format, str); problem != "" {
			report(path, problem, false)
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			report(path, "want an integer, got "+kindOf(v), false)
			return
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		switch {
		case err != nil:
			report(path, fmt.Sprintf("want an integer, got %s", n), false)
		case s.Format == "int32" && (i < math.MinInt32 || i > math.MaxInt32):
			report(path, fmt.Sprintf("%d is outside int32", i), false)
		case s.Format == "uint32" && (i < 0 || i > math.MaxUint32):
			report(path, fmt.Sprintf("%d is outside uint32", i), false)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			report(path, "want a number, got "+kindOf(v), false)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			report(path, "want a boolean, got "+kindOf(v), false)
		}
	case "any":
	default:
		report(path, fmt.Sprintf("the document has a type %q this check does not know", s.Type), false)
	}
}

var durationRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,9})?s$`)

func checkFormat(format, s string) string {
	switch format {
	case "int64":
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Sprintf("%q is not an int64", s)
		}
	case "uint64":
		if _, err := strconv.ParseUint(s, 10, 64); err != nil {
			return fmt.Sprintf("%q is not a uint64", s)
		}
	case "google-datetime":
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return fmt.Sprintf("%q is not an RFC 3339 timestamp", s)
		}
	case "google-duration":
		if !durationRE.MatchString(s) {
			return fmt.Sprintf("%q is not a duration such as \"3.5s\"", s)
		}
	case "byte":
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			if _, err := base64.URLEncoding.DecodeString(s); err != nil {
				return fmt.Sprintf("%q is not base64", s)
			}
		}
	}
	return ""
}

func nameOf(s *Schema) string {
	if s.ID != "" {
		return s.ID
	}
	return "the object"
}

func kindOf(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + string(v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
