// Command signoff writes $(ARTIFACTS)/signoff.md and signoff.html from the
// report.json of each release a make e2e run covered: KEP requirement x
// release, with each release's provenance. It exits 1 unless every release
// has a report and passed.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

func main() {
	artifacts := flag.String("artifacts", "_artifacts", "the folder holding one folder per release")
	releases := flag.String("releases", "", `the releases of the run, e.g. "1.33 1.34 1.35"`)
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, `usage: signoff --artifacts DIR --releases "1.35 1.36"`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if strings.TrimSpace(*releases) == "" {
		flag.Usage()
		os.Exit(2)
	}
	var runs []report.Report
	var missing []string
	for _, rel := range strings.Fields(*releases) {
		r, err := report.Read(filepath.Join(*artifacts, rel, "report.json"))
		if err != nil {
			// A release whose run died before its report is a failed column.
			missing = append(missing, rel)
			r = report.Report{Meta: report.Meta{Release: rel}, Problems: []string{"no report.json: " + err.Error()}}
		}
		runs = append(runs, r)
	}
	m := signoff.Build(runs, func(rel string) string { return rel })
	page, err := m.HTML()
	if err == nil {
		err = os.WriteFile(filepath.Join(*artifacts, "signoff.html"), []byte(page), 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(*artifacts, "signoff.md"), []byte(m.Markdown()), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "signoff:", err)
		os.Exit(1)
	}
	fmt.Printf("signoff: %s (%s)\n", m.Verdict(), filepath.Join(*artifacts, "signoff.html"))
	if len(missing) > 0 || strings.HasPrefix(m.Verdict(), "NOT") {
		os.Exit(1)
	}
}
