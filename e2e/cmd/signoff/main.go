// Command signoff writes signoff.md and signoff.html from the report.json of
// each release a run covered: KEP requirement x release, with each release's
// provenance. Given several artifact folders (--artifacts, repeatable: the
// cells of a CI matrix, each of which ran some of a release's groups), it
// merges each release's reports into one (report.Merge) first. It exits 1
// unless every release has a report and the matrix is signed off.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

type folders []string

func (f *folders) String() string     { return strings.Join(*f, ",") }
func (f *folders) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var artifacts folders
	flag.Var(&artifacts, "artifacts", "a folder holding one folder per release (repeatable; default _artifacts)")
	releases := flag.String("releases", "", `the releases of the run, e.g. "1.33 1.34 1.35"`)
	out := flag.String("out", "", "where signoff.md and signoff.html go (default: the first --artifacts)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, `usage: signoff --artifacts DIR [--artifacts DIR ...] --releases "1.35 1.36" [--out DIR]`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if strings.TrimSpace(*releases) == "" {
		flag.Usage()
		os.Exit(2)
	}
	if len(artifacts) == 0 {
		artifacts = folders{"_artifacts"}
	}
	if *out == "" {
		*out = artifacts[0]
	}
	runs, missing, err := read(artifacts, strings.Fields(*releases))
	if err != nil {
		fmt.Fprintln(os.Stderr, "signoff:", err)
		os.Exit(1)
	}
	// Links go from the page to each release's report beside it: a merged
	// release gets its merged report.md and report.json there.
	if len(artifacts) > 1 || *out != artifacts[0] {
		for _, r := range runs {
			dir := filepath.Join(*out, r.Release)
			if err := errors.Join(os.MkdirAll(dir, 0o755), r.WriteJSON(filepath.Join(dir, "report.json")), r.WriteMarkdown(filepath.Join(dir, "report.md"))); err != nil {
				fmt.Fprintln(os.Stderr, "signoff:", err)
				os.Exit(1)
			}
		}
	}
	m := signoff.Build(runs, func(rel string) string { return rel })
	if err := os.MkdirAll(*out, 0o755); err == nil {
		page, herr := m.HTML()
		err = errors.Join(herr, os.WriteFile(filepath.Join(*out, "signoff.html"), []byte(page), 0o644),
			os.WriteFile(filepath.Join(*out, "signoff.md"), []byte(m.Markdown()), 0o644))
		if err != nil {
			fmt.Fprintln(os.Stderr, "signoff:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("signoff: %s (%s)\n", m.Verdict(), filepath.Join(*out, "signoff.html"))
	if len(missing) > 0 || strings.HasPrefix(m.Verdict(), "NOT") {
		os.Exit(1)
	}
}

// read gives one report per release: the merge of every folder's report of
// it. A release no folder has a report of is a failed column.
func read(artifacts []string, releases []string) ([]report.Report, []string, error) {
	var runs []report.Report
	var missing []string
	for _, rel := range releases {
		var parts []report.Report
		var why []string
		for _, dir := range artifacts {
			r, err := report.Read(filepath.Join(dir, rel, "report.json"))
			switch {
			case err == nil:
				parts = append(parts, r)
			case errors.Is(err, fs.ErrNotExist):
				why = append(why, err.Error())
			default:
				return nil, nil, err
			}
		}
		if len(parts) == 0 {
			missing = append(missing, rel)
			runs = append(runs, report.Report{Meta: report.Meta{Release: rel}, Problems: []string{"no report.json: " + strings.Join(why, "; ")}})
			continue
		}
		merged, err := report.Merge(parts...)
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, merged)
	}
	return runs, missing, nil
}
