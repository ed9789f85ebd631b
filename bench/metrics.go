package main

import (
	"bufio"
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// apiserverCounts reads apiserver_request_total from the API server's
// /metrics and returns it summed by "VERB resource[/subresource]", over all
// groups, codes and scopes. The counter covers every client of the server,
// so a phase's requests are the difference of two reads, restricted to the
// resources only the benchmark touches.
func apiserverCounts(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return parseRequestTotal(raw), nil
}

var labelRE = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

func parseRequestTotal(raw []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for _, m := range labelRE.FindAllStringSubmatch(line[:end], -1) {
			labels[m[1]] = m[2]
		}
		res := labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			res += "/" + sub
		}
		out[labels["verb"]+" "+res] += v
	}
	return out
}

// benchResources are the resources whose requests a phase reports: only the
// benchmark's configurations create such objects in the benchmark's
// namespaces, and no controller runs in the sets scenario.
var benchResources = map[string]bool{
	"sandboxtemplates": true, "sandboxwarmpools": true, "networkpolicies": true,
	"sandboxclaims": true, "sandboxes": true,
}

func diffCounts(before, after map[string]float64) map[string]int64 {
	out := map[string]int64{}
	for k, a := range after {
		_, res, _ := strings.Cut(k, " ")
		res, _, _ = strings.Cut(res, "/")
		if !benchResources[res] {
			continue
		}
		if d := int64(a - before[k] + 0.5); d > 0 {
			out[k] = d
		}
	}
	return out
}

// providerCounts turns the provider's own counters ("METHOD /apis/g/v/namespaces/{namespace}/res/{name}")
// into the API server's vocabulary ("VERB res"), for the benchmark's
// resources, so that the two can be compared line by line. A GET without
// {name} is a LIST, a PATCH with application/apply-patch is reported by the
// server as APPLY: the provider's counter cannot tell those apart, so the
// comparison is of totals per resource.
func providerCountsByResource(in map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, n := range in {
		method, path, _ := strings.Cut(k, " ")
		segs := strings.Split(strings.Trim(path, "/"), "/")
		var res string
		for i, s := range segs {
			if benchResources[s] {
				res = s
				if i+2 < len(segs) {
					res += "/" + segs[i+2]
				}
				break
			}
		}
		if res == "" {
			continue
		}
		out[method+" "+res] += n
	}
	return out
}

func sum(m map[string]int64) int64 {
	var t int64
	for _, n := range m {
		t += n
	}
	return t
}
