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
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

// Re-run failed jobs, as GitHub does it: one cell of a column failed, and
// its second attempt runs in the same run, beside the first attempt's
// artifacts, then the sign-off's second attempt. The re-run cell's upload
// replaces its first attempt's artifact (overwrite), also where its make
// e2e wrote no report, so the sign-off judges the latest attempt of every
// cell; the same workflow without overwrite fails the re-run's upload, as
// upload-artifact does.
func TestWorkflowReRunOfOneCell(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the matrix job's step needs jq, as a hosted runner has it: not on PATH")
	}
	tools := standInTools(t)
	// Requirement 4's spec is in the serial cell (cellReport: index mod
	// the groups).
	const failing = 4
	failedGroup := matrix.Groups[failing%len(matrix.Groups)].Name
	for _, tc := range []struct {
		name string
		// withoutOverwrite drops overwrite from the cells' upload.
		withoutOverwrite bool
		// reportless: the re-run's make e2e fails before it writes a report.
		reportless bool
		// wantReRunFailed: the re-run cell's job fails.
		wantReRunFailed bool
		// wantAttempt is the attempt whose artifact the run keeps of the cell.
		wantAttempt string
		wantSigned  bool
		// wantExit, where not 0, is the sign-off's exit code.
		wantExit int
		// wantState is the failing requirement's verdict in the column.
		wantState string
	}{
		{name: "the second attempt passes", wantAttempt: "2", wantSigned: true, wantState: "passed"},
		{name: "the second attempt writes no report", reportless: true, wantReRunFailed: true, wantAttempt: "2", wantState: "not run"},
		{name: "without overwrite the second attempt cannot upload", withoutOverwrite: true,
			wantReRunFailed: true, wantAttempt: "1", wantExit: signoff.ExitFailed, wantState: "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := readWorkflow(t)
			if tc.withoutOverwrite {
				for _, s := range w.Jobs["e2e"].Steps {
					if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
						delete(s.With, "overwrite")
					}
				}
			}
			wr := newWorkflowRun(t, w, tools, "workflow_dispatch", map[string]string{"release": "1.35", "features": "defaults", "labels": ""})
			mx := wr.matrixJob(nil)
			var cells struct{ Include []matrix.Cell }
			if err := json.Unmarshal([]byte(mx.jobOutputs["cells"]), &cells); err != nil {
				t.Fatal(err)
			}
			allocators := allocatorsOf(t, mx.jobOutputs["releases"], mx.jobOutputs["features"])
			store := artifactStore{}
			var failed matrix.Cell
			for _, c := range cells.Include {
				change, exit := outcomes(nil), 0
				if c.Group == failedGroup {
					change, exit, failed = outcomes{c.Release + " " + c.Features: {failing: {State: "failed", Reason: "expected 422, got 201"}}}, 2, c
				}
				r := cellReport(c, allocators[c.Release+" "+c.Features], false, change, nil)
				if j := wr.cell(c, &r, exit, store); j.failed != (exit != 0) {
					t.Fatalf("cell %s, first attempt: failed %v; steps %v", c.Name, j.failed, j.ran)
				}
			}
			if failed.Name == "" {
				t.Fatalf("no cell of group %s among %v", failedGroup, cells.Include)
			}
			first := signOff(t, wr, store)
			if code := first.exits[mergeStep]; code != signoff.ExitFailed {
				t.Fatalf("the first attempt's sign-off exits %d; want %d", code, signoff.ExitFailed)
			}

			// Re-run failed jobs: the failed cell, then the sign-off.
			wr.contexts["github.run_attempt"] = "2"
			var again *report.Report
			if !tc.reportless {
				r := cellReport(failed, allocators[failed.Release+" "+failed.Features], false, nil, nil)
				again = &r
			}
			exit := 0
			if tc.reportless {
				exit = 2
			}
			if j := wr.cell(failed, again, exit, store); j.failed != tc.wantReRunFailed {
				t.Fatalf("the re-run of cell %s: failed %v, want %v; steps %v", failed.Name, j.failed, tc.wantReRunFailed, j.ran)
			}
			cellName := "e2e-" + failed.Release + "-" + failed.Features + "-" + failed.Group
			if got := attemptOf(t, store, cellName, cellName); got != tc.wantAttempt {
				t.Fatalf("the run keeps attempt %q of %s; want %q", got, cellName, tc.wantAttempt)
			}
			second := signOff(t, wr, store)
			if got := attemptOf(t, store, "signoff", ""); got != "2" {
				t.Errorf("the run keeps attempt %q of the sign-off; want 2 (its upload overwrites)", got)
			}
			doc, err := signoff.ReadDocument(filepath.Join(second.workspace, "signoff", "signoff.json"))
			if err != nil {
				t.Fatal(err)
			}
			// A column without one cell's report is not signed off; how its
			// verdict reads is the sign-off's own test's.
			if code := second.exits[mergeStep]; doc.SignedOff != tc.wantSigned || (code == signoff.ExitSignedOff) != tc.wantSigned || (tc.wantExit != 0 && code != tc.wantExit) || doc.ExitCode != code {
				t.Fatalf("the second attempt's sign-off exits %d (signoff.json %d, signed off %v); want signed off %v, exit %d: %s", code, doc.ExitCode, doc.SignedOff, tc.wantSigned, tc.wantExit, doc.Verdict)
			}
			id := requirements.All[failing].ID
			for _, r := range doc.Requirements {
				if r.ID == id {
					if got := r.Verdicts[failed.Release+" "+failed.Features].State; got != tc.wantState {
						t.Errorf("%s reads %q in the second attempt's sign-off; want %q", id, got, tc.wantState)
					}
				}
			}
		})
	}
}

const mergeStep = "Merge the cells into one sign-off"

// signOff runs an attempt of the signoff job on the run's artifacts.
func signOff(t *testing.T, wr *workflowRun, store artifactStore) *jobRun {
	t.Helper()
	j := wr.job("signoff")
	if !wr.allowed(j) {
		t.Fatalf("the signoff job does not run (if %q)", j.job.If)
	}
	j.artifacts = store
	j.run()
	if _, ok := j.exits[mergeStep]; !ok {
		t.Fatalf("no step %q ran; steps %v", mergeStep, j.ran)
	}
	return j
}

// attemptOf is the attempt the run's artifact name holds (its file
// attempt, in the folder dir of the artifact).
func attemptOf(t *testing.T, store artifactStore, name, dir string) string {
	t.Helper()
	root, ok := store[name]
	if !ok {
		t.Fatalf("the run has no artifact %s", name)
	}
	data, err := os.ReadFile(filepath.Join(root, dir, "attempt"))
	if err != nil {
		t.Fatalf("artifact %s: %v", name, err)
	}
	return strings.TrimSpace(string(data))
}
