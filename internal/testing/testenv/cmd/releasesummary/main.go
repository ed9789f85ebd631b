// Command releasesummary turns `go test -json` output (stdin) into one line
// per top-level test: profile, resource package, test, result, seconds,
// tab-separated. scripts/testacc-releases.sh collects these lines into the
// release x resource table.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

func main() {
	profile := flag.String("profile", "", "release profile the run used")
	flag.Parse()
	type key struct{ pkg, test string }
	results := map[key]event{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
		default:
			continue
		}
		if e.Test == "" {
			if e.Action == "fail" {
				// A package that failed outside any test (build, TestMain).
				results[key{e.Package, "(package)"}] = e
			}
			continue
		}
		if strings.Contains(e.Test, "/") {
			continue // subtests roll up into their test
		}
		results[key{e.Package, e.Test}] = e
	}
	keys := make([]key, 0, len(results))
	for k := range results {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].pkg != keys[j].pkg {
			return keys[i].pkg < keys[j].pkg
		}
		return keys[i].test < keys[j].test
	})
	for _, k := range keys {
		e := results[k]
		fmt.Printf("%s\t%s\t%s\t%s\t%.1f\n", *profile, path.Base(k.pkg), k.test, e.Action, e.Elapsed)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "releasesummary:", err)
		os.Exit(1)
	}
}
