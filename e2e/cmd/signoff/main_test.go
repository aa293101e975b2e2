// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

// wholeRun is a report of 1.35 on an existing cluster with a driver of the
// user's own, a column of its class: a spec per requirement, the first three of them skipped
// because they read the bundled driver's contract, the rest passed.
func wholeRun() report.Report {
	r := report.Report{Meta: report.Meta{Release: "1.35", Existing: true, DeviceClass: "gpu.example.com"}}
	for i, q := range requirements.All {
		s := report.Spec{Name: fmt.Sprintf("spec %02d", i), KEP: q.Text, State: "passed"}
		if i < 3 {
			s.State, s.Declared, s.OutOfReach, s.Reason = "skipped", "bundled-driver", true, "the run claims the devices of the driver given with DRIVER"
			r.Totals.Skipped++
		} else {
			r.Totals.Passed++
		}
		r.Specs = append(r.Specs, s)
	}
	return r
}

// The exit code and the last line say the same: signed off (0, also where
// requirements were out of reach), not signed off for a failure or a
// missing report (1), called wrongly (2), and what ran passed but a filter
// left specs out (3).
func TestExitCodeAndLastLineAgree(t *testing.T) {
	partial := wholeRun()
	partial.LabelFilter, partial.Totals.NotSelected = "authz", 1
	partial.Specs = append(partial.Specs, report.Spec{Name: "left out", State: "not selected"})
	failed := wholeRun()
	failed.Specs[5].State, failed.Specs[5].Reason = "failed", "expected 422"
	failed.Totals.Passed, failed.Totals.Failed = failed.Totals.Passed-1, 1
	for _, c := range []struct {
		name   string
		report *report.Report
		args   []string
		code   int
		last   string
	}{
		{"signed off", ptr(wholeRun()), nil, signoff.ExitSignedOff,
			fmt.Sprintf("signoff: Signed off for the %d requirements a driver of one's own can check on this cluster (1.35 defaults class gpu.example.com); 3 out of reach (the bundled driver's contract).", len(requirements.All)-3)},
		{"failed", &failed, nil, signoff.ExitFailed, "signoff: NOT signed off: 0 of 1 columns signed off; 1.35 defaults class gpu.example.com: 1 failed ("},
		{"no report", nil, nil, signoff.ExitFailed, "signoff: NOT signed off: 0 of 1 columns signed off; 1.35 defaults: suite problem: no report.json of this column was found ("},
		{"partial", &partial, nil, signoff.ExitLeftOut, "signoff: NOT signed off: 0 of 1 columns signed off; 1.35 defaults class gpu.example.com: partial: "},
		{"the unit job failed", nil, []string{"--releases", "1.35", "--features", "defaults", "--unit-result", "failure", "--e2e-result", "skipped"}, signoff.ExitFailed,
			"signoff: NOT signed off: the unit job ended failure (make test: its log says why), so no cell ran; 0 of 1 columns signed off; 1.35 defaults: no report: the unit job ended failure ("},
		{"--labels without the jobs", ptr(wholeRun()), []string{"--releases", "1.35", "--labels", "authz"}, signoff.ExitUsage, ""},
		{"no releases", ptr(wholeRun()), []string{"--releases", " "}, signoff.ExitUsage, ""},
		{"unknown feature set", ptr(wholeRun()), []string{"--releases", "1.35", "--features", "nothing"}, signoff.ExitUsage, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.report != nil {
				if err := os.MkdirAll(filepath.Join(dir, "1.35"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := c.report.WriteJSON(filepath.Join(dir, "1.35", "report.json")); err != nil {
					t.Fatal(err)
				}
			}
			args := c.args
			if args == nil {
				args = []string{"--releases", "1.35", "--features", "defaults"}
			}
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"--artifacts", dir}, args...), &stdout, &stderr)
			lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if code != c.code || !strings.HasPrefix(last, c.last) {
				t.Fatalf("exit %d, last line %q; want %d, %q\nstderr: %s", code, last, c.code, c.last, stderr.String())
			}
			if code == signoff.ExitUsage {
				return
			}
			page, err := os.ReadFile(filepath.Join(dir, "signoff.md"))
			if first, _, _ := strings.Cut(string(page), "\n"); err != nil || "signoff: "+strings.Trim(first, "*") != last {
				t.Errorf("signoff.md's first line %q is not the last line printed, %q (%v)", first, last, err)
			}
		})
	}
}

func ptr(r report.Report) *report.Report { return &r }

// signoff diff prints what changed between two sign-offs it wrote, exits 0
// with or without a change, and 2 for a file it cannot read as one.
func TestDiffOfTwoSignOffs(t *testing.T) {
	write := func(r report.Report) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "1.35"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(filepath.Join(dir, "1.35", "report.json")); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		run([]string{"--artifacts", dir, "--releases", "1.35", "--features", "defaults"}, &out, &out)
		return filepath.Join(dir, "signoff.json")
	}
	failed := wholeRun()
	failed.Specs[5].State, failed.Specs[5].Reason = "failed", "expected 422"
	failed.Totals.Passed, failed.Totals.Failed = failed.Totals.Passed-1, 1
	before, after := write(wholeRun()), write(failed)
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"a move", []string{"diff", before, after}, 0, []string{"**Sign-off: signed off → not signed off.**",
			fmt.Sprintf("| %s | 1.35 defaults class gpu.example.com | passed | failed | spec 05: expected 422 |", requirements.All[5].ID)}},
		{"no change", []string{"diff", before, before}, 0, []string{"No column, requirement verdict or known upstream defect changed."}},
		{"a missing file", []string{"diff", before, filepath.Join(t.TempDir(), "signoff.json")}, signoff.ExitUsage, nil},
		{"one file", []string{"diff", before}, signoff.ExitUsage, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(c.args, &stdout, &stderr); code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout.String(), stderr.String())
			}
			for _, w := range c.wants {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("no %q in\n%s", w, stdout.String())
				}
			}
		})
	}
}

// madeRun is a whole run of a column on a cluster the suite made, at a
// Kubernetes version, every spec passed but the failed one (-1: none).
func madeRun(release, version string, failed int) report.Report {
	r := report.Report{Meta: report.Meta{Release: release, Version: version, Allocator: "incubating"}}
	for i, q := range requirements.All {
		s := report.Spec{Name: fmt.Sprintf("spec %02d", i), KEP: q.Text, State: "passed"}
		if i == failed {
			s.State, s.Reason = "failed", "expected 422"
			r.Totals.Failed++
		} else {
			r.Totals.Passed++
		}
		r.Specs = append(r.Specs, s)
	}
	return r
}

// With released and pre-release columns the exit code and the last line
// are the released columns' whatever the pre-release ones did, which are
// said on a line of their own and signed off apart in prerelease/; a
// sign-off of pre-release columns alone exits 0 where they passed, its
// last line saying what they are. (A pre-release of 1.37 stands for 1.38,
// whose row the table does not have yet.)
func TestPreReleaseColumnsDoNotDecideTheExitCode(t *testing.T) {
	for _, c := range []struct {
		name     string
		releases string
		reports  []report.Report
		code     int
		last     string
		apart    string
	}{
		{"a pre-release failed", "1.35 1.37", []report.Report{madeRun("1.35", "1.35.8", -1), madeRun("1.37", "1.37.3-rc.0", 5)}, signoff.ExitSignedOff,
			"signoff: Signed off: the one column (1.35 defaults) passed every applicable check",
			"signoff: the pre-release columns (1.37 defaults), judged apart in %s (their exit code, 1, is not this one's): Pre-release Kubernetes v1.37.3-rc.0 (not 1.37.3): NOT signed off: "},
		{"a release failed", "1.35 1.37", []report.Report{madeRun("1.35", "1.35.8", 5), madeRun("1.37", "1.37.3-rc.0", -1)}, signoff.ExitFailed,
			"signoff: NOT signed off: 0 of 1 columns signed off; 1.35 defaults: 1 failed",
			"signoff: the pre-release columns (1.37 defaults), judged apart in %s (their exit code, 0, is not this one's): Pre-release Kubernetes v1.37.3-rc.0 (not 1.37.3): Signed off: "},
		{"pre-release columns alone", "1.37", []report.Report{madeRun("1.37", "1.37.3-rc.0", -1)}, signoff.ExitSignedOff,
			"signoff: Pre-release Kubernetes v1.37.3-rc.0 (not 1.37.3): Signed off: the one column (1.37 defaults) passed every applicable check", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, r := range c.reports {
				if err := os.MkdirAll(filepath.Join(dir, r.Release), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := r.WriteJSON(filepath.Join(dir, r.Release, "report.json")); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"--artifacts", dir, "--releases", c.releases, "--features", "defaults"}, &stdout, &stderr)
			lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; code != c.code || !strings.HasPrefix(last, c.last) {
				t.Fatalf("exit %d, last line %q; want %d, %q\nstderr: %s", code, last, c.code, c.last, stderr.String())
			}
			page, err := os.ReadFile(filepath.Join(dir, "signoff.md"))
			if first, _, _ := strings.Cut(string(page), "\n"); err != nil || "signoff: "+strings.Trim(first, "*") != lines[len(lines)-1] {
				t.Errorf("signoff.md's first line %q is not the last line printed (%v)", first, err)
			}
			_, err = os.Stat(filepath.Join(dir, signoff.PreReleaseDir, "signoff.md"))
			if c.apart == "" {
				if !os.IsNotExist(err) || len(lines) != 2 {
					t.Errorf("nothing is apart: %v\n%s", err, stdout.String())
				}
				return
			}
			if want := fmt.Sprintf(c.apart, filepath.Join(dir, signoff.PreReleaseDir)); err != nil || len(lines) != 3 || !strings.HasPrefix(lines[1], want) {
				t.Errorf("the pre-release columns' line: want %q, %v in\n%s", want, err, stdout.String())
			}
		})
	}
}
