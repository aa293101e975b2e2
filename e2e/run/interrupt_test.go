// SPDX-License-Identifier: Apache-2.0

package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
)

// Ctrl-C while the specs run: the suite's report says which it cut short
// (as the suite writes it from Ginkgo's), and make e2e's sign-off, of the
// real signoff, says the run was interrupted and counts them as not run;
// the runner still exits 130, and signoff.json carries the flag beside
// the sign-off's own code.
func TestAnInterruptedReleaseIsSignedOffAsInterrupted(t *testing.T) {
	var out bytes.Buffer
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	f := &fakeRun{interrupt: interrupt, interruptAt: "ginkgo"}
	var artifacts string
	f.started = func(args []string) {
		for _, a := range args {
			file, ok := strings.CutPrefix(a, "--run=")
			if !ok {
				continue
			}
			run, err := resolved.Read(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := run.Layout.Artifacts
			artifacts = filepath.Dir(dir)
			kep := func(q requirements.Requirement) []types.ReportEntry {
				return []types.ReportEntry{{Name: report.KEPEntry, Value: types.WrapEntryValue(q.Text)}}
			}
			r := report.FromGinkgo(types.Report{SpecReports: types.SpecReports{
				{LeafNodeType: types.NodeTypeIt, LeafNodeText: "passes", State: types.SpecStatePassed, ReportEntries: kep(requirements.All[0])},
				{LeafNodeType: types.NodeTypeIt, LeafNodeText: "stopped", State: types.SpecStateInterrupted,
					Failure: types.Failure{Message: "Interrupted by User"}, ReportEntries: kep(requirements.All[1])},
				{LeafNodeType: types.NodeTypeIt, LeafNodeText: "never reached", State: types.SpecStateSkipped, ReportEntries: kep(requirements.All[2])},
			}}, report.Meta{Release: "1.35", Profile: "default"})
			if err := errors.Join(os.MkdirAll(dir, 0o755), r.WriteJSON(filepath.Join(dir, "report.json"))); err != nil {
				t.Error(err)
			}
		}
	}
	c := Resolve(env("K8S_VERSION", "1.35", "UPGRADE", "0"), nil, t.TempDir())
	if code := pipeline(f, &out).E2E(ctx, c); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	got := lines(&out)
	want := "signoff: NOT signed off: interrupted (Ctrl-C); 0 of 1 columns signed off; 1.35 defaults: interrupted after 1 of 3 specs, 1 more cut short and counted not run (requirements: 1 checked, "
	if len(got) < 2 || !strings.HasPrefix(got[len(got)-2], want) || got[len(got)-1] != "e2e: interrupted; releases after it were not run" {
		t.Errorf("closing lines %q, want the verdict to start %q", got[max(0, len(got)-2):], want)
	}
	data, err := os.ReadFile(filepath.Join(artifacts, "signoff.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted *bool `json:"interrupted"`
		ExitCode    int   `json:"exitCode"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Interrupted == nil || !*doc.Interrupted || doc.ExitCode != 1 {
		t.Errorf("signoff.json: interrupted %v, exit code %d (%v)", doc.Interrupted, doc.ExitCode, err)
	}
}
