// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

// Issue 66 (a), as the workflow runs: one cell of the column ends without
// its report, and the sign-off says how that cell's job ended, from the
// file result its upload holds (job.status), or, where the cell uploaded
// nothing, from the e2e job's one result; the column failed (exit 1),
// never "partial" as a label filter's column reads.
func TestWorkflowSaysHowACellWithoutItsReportEnded(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the matrix job's step needs jq, as a hosted runner has it: not on PATH")
	}
	tools := standInTools(t)
	for _, tc := range []struct {
		name string
		// uploaded: the serial cell's job ran its last steps (make e2e
		// failed before it wrote a report); otherwise it left nothing.
		uploaded bool
		want     string
	}{
		{name: "make e2e failed before its report", uploaded: true, want: "1.35 defaults: no report: its job ended failure (e2e 1.35 defaults serial)"},
		{name: "the cell uploaded nothing", want: "1.35 defaults: no report: its job ended without uploading (e2e 1.35 defaults serial; the e2e job, of all its cells, ended failure)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wr := newWorkflowRun(t, readWorkflow(t), tools, "workflow_dispatch", map[string]string{"release": "1.35", "features": "defaults", "labels": ""})
			mx := wr.matrixJob(nil)
			var cells struct{ Include []matrix.Cell }
			if err := json.Unmarshal([]byte(mx.jobOutputs["cells"]), &cells); err != nil {
				t.Fatal(err)
			}
			allocators := allocatorsOf(t, mx.jobOutputs["releases"], mx.jobOutputs["features"])
			store := artifactStore{}
			for _, c := range cells.Include {
				if c.Group != "serial" {
					r := cellReport(c, allocators[c.Release+" "+c.Features], false, nil, nil)
					wr.cell(c, &r, 0, store)
					continue
				}
				if !tc.uploaded {
					continue
				}
				if j := wr.cell(c, nil, 2, store); !j.failed {
					t.Fatalf("cell %s: make e2e failed, the job did not; steps %v", c.Name, j.ran)
				}
				if got := readArtifactFile(t, store, c.Artifact, "result"); got != "failure" {
					t.Errorf("cell %s's artifact says its job ended %q; want failure", c.Name, got)
				}
			}
			wr.contexts["needs.e2e.result"] = "failure"
			j := signOff(t, wr, store)
			summary := j.summary.String()
			if code := j.exits[mergeStep]; code != signoff.ExitFailed || !j.failed {
				t.Fatalf("the sign-off exits %d (job failed %v); want %d\n%s", code, j.failed, signoff.ExitFailed, summary)
			}
			if first, _, _ := strings.Cut(summary, "\n"); !strings.HasPrefix(first, "**NOT signed off: 0 of 1 columns signed off; "+tc.want+" (requirements: ") || strings.Contains(first, "partial") {
				t.Errorf("the summary's verdict %q; want it to start with %q", first, tc.want)
			}
		})
	}
}

// Issue 66 (b): the unit job failed, so the e2e job (no cell) runs not;
// the sign-off runs still, and its summary says that the unit job failed,
// each column saying so, rather than that each column's report is missing.
func TestWorkflowSaysTheUnitJobFailed(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the matrix job's step needs jq, as a hosted runner has it: not on PATH")
	}
	wr := newWorkflowRun(t, readWorkflow(t), standInTools(t), "workflow_dispatch", map[string]string{"release": "1.35", "features": "all", "labels": ""})
	wr.contexts["needs.unit.result"] = "failure"
	wr.matrixJob(nil)
	if e2e := wr.job("e2e"); wr.allowed(e2e) {
		t.Fatalf("the e2e job runs after unit failed (if %q)", e2e.job.If)
	}
	wr.contexts["needs.e2e.result"] = "skipped"
	j := signOff(t, wr, artifactStore{})
	summary := j.summary.String()
	if code := j.exits[mergeStep]; code != signoff.ExitFailed {
		t.Fatalf("the sign-off exits %d; want %d\n%s", code, signoff.ExitFailed, summary)
	}
	want := "**NOT signed off: the unit job ended failure (make test: its log says why), so no cell ran; 0 of 2 columns signed off; 1.35 defaults: no report: the unit job ended failure ("
	if !strings.HasPrefix(summary, want) || !strings.Contains(summary, "; 1.35 alpha: no report: the unit job ended failure (") || strings.Contains(summary, "no report.json") {
		t.Errorf("the summary does not start %q:\n%s", want, summary)
	}
}

// Issue 66 (c): a dispatch of which no column is left (1.33 lists no
// stable set) fails the matrix job, whose summary says why; no cell and no
// sign-off run.
func TestWorkflowMatrixOfNothingSaysWhy(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the matrix job's step needs jq, as a hosted runner has it: not on PATH")
	}
	wr := newWorkflowRun(t, readWorkflow(t), standInTools(t), "workflow_dispatch", map[string]string{"release": "1.33", "features": "stable", "labels": ""})
	mx := wr.job("matrix")
	mx.run()
	if !mx.failed || !strings.Contains(mx.summary.String(), `Kubernetes 1.33 has no DRA feature set "stable": it lists defaults`) {
		t.Fatalf("the matrix job failed %v; summary:\n%s", mx.failed, mx.summary.String())
	}
	for k, v := range mx.jobOutputs {
		wr.contexts["needs.matrix.outputs."+k] = v
	}
	for _, name := range []string{"e2e", "signoff"} {
		if j := wr.job(name); wr.allowed(j) {
			t.Errorf("the %s job runs without a matrix (if %q)", name, j.job.If)
		}
	}
}

// readArtifactFile is a file of the folder dir of the run's artifact dir.
func readArtifactFile(t *testing.T, store artifactStore, dir, file string) string {
	t.Helper()
	root, ok := store[dir]
	if !ok {
		t.Fatalf("the run has no artifact %s", dir)
	}
	data, err := os.ReadFile(filepath.Join(root, dir, file))
	if err != nil {
		t.Fatalf("artifact %s: %v", dir, err)
	}
	return strings.TrimSpace(string(data))
}
