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
