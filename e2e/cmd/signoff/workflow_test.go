// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

// The stand-ins on the runner's PATH: make e2e writes the report the test
// made for the cell (none where it made none), says how it was called and
// exits as told, make node-image-tag prints a tag of the release (the
// recipe's hash is make's, e2e/cmd/run's test), gh names the previous weekly run and keeps a release's
// assets in SIGNOFF_TEST_GH, docker loads nothing. go is the real one, in a workspace
// that is this repository's checkout (checkout below).
var standIns = map[string]string{
	"make": `#!/bin/bash
[ "$1" = -s ] && shift
if [ "$1" = node-image-tag ]; then
  shift
  for a in "$@"; do export "${a%%=*}=${a#*=}"; done
  echo "kind-e2e/node:v$K8S_VERSION-0123456789ab"
  exit 0
fi
[ "$1" = e2e ] || { echo "make stand-in: only make e2e and make node-image-tag" >&2; exit 2; }
shift
for a in "$@"; do export "${a%%=*}=${a#*=}"; done
printf '%s\n' "$K8S_VERSION" "$FEATURES" "$LABELS" > "$SIGNOFF_TEST_MAKE_ARGS"
if [ -n "$SIGNOFF_TEST_REPORT" ]; then
  mkdir -p "$ARTIFACTS/$K8S_VERSION"
  cp "$SIGNOFF_TEST_REPORT" "$ARTIFACTS/$K8S_VERSION/report.json"
  echo "# report of $K8S_VERSION" > "$ARTIFACTS/$K8S_VERSION/report.md"
fi
exit "${SIGNOFF_TEST_MAKE_EXIT:-0}"
`,
	"gh": `#!/bin/sh
[ "$1 $2" = "run list" ] && [ -n "$SIGNOFF_TEST_PREVIOUS_RUN" ] && echo "$SIGNOFF_TEST_PREVIOUS_RUN"
if [ "$1" = release ] && [ -n "$SIGNOFF_TEST_GH" ]; then
  echo "$*" >> "$SIGNOFF_TEST_GH/log"
  case $2 in
  view) [ -f "$SIGNOFF_TEST_GH/made" ]; exit ;;
  create) [ -f "$SIGNOFF_TEST_GH/made" ] && { echo "a release with tag $3 already exists" >&2; exit 1; }; : > "$SIGNOFF_TEST_GH/made" ;;
  upload) [ -f "$SIGNOFF_TEST_GH/made" ] || { echo "release not found" >&2; exit 1; } ;;
  esac
  # The release's assets: every file given, one of the same name only
  # with --clobber, as gh refuses it otherwise.
  clobber=no
  for a in "$@"; do [ "$a" = --clobber ] && clobber=yes; done
  mkdir -p "$SIGNOFF_TEST_GH/assets"
  for a in "$@"; do
    [ -f "$a" ] || continue
    if [ -f "$SIGNOFF_TEST_GH/assets/${a##*/}" ] && [ $clobber = no ]; then echo "asset ${a##*/} already exists" >&2; exit 1; fi
    cp "$a" "$SIGNOFF_TEST_GH/assets/"
  done
fi
exit 0
`,
	"docker": "#!/bin/sh\nexit 0\n",
}

// restoreStep is the e2e job's step that restores a node image built
// offline.
const restoreStep = "The node image the node-image job built offline"

// outcomes change a spec's outcome from passed, by column key and
// requirement index.
type outcomes map[string]map[int]report.Spec

// cellReport is what a cell's make e2e writes: a spec per requirement, in
// the group the requirement's index gives it (a custom filter's cell
// selects them all, or all of one group where partial), those of the
// other groups not selected; at the Kubernetes version given for its
// release, or none.
func cellReport(c matrix.Cell, allocator string, partial bool, change outcomes, version map[string]string) report.Report {
	r := report.Report{Meta: report.Meta{Release: c.Release, Version: version[c.Release], Features: c.Features, Allocator: allocator, SuiteCommit: "abc123", LabelFilter: c.Labels}}
	for i, q := range requirements.All {
		group := matrix.Groups[i%len(matrix.Groups)].Name
		s := report.Spec{Name: q.ID, KEP: q.Text, State: "passed"}
		if o, ok := change[c.Release+" "+c.Features][i]; ok {
			s.State, s.Reason = o.State, o.Reason
		}
		selected := group == c.Group || c.Group == "custom" && (!partial || group == matrix.Groups[0].Name)
		if !selected {
			s.State, s.Reason = "not selected", ""
		}
		r.Specs = append(r.Specs, s)
		switch s.State {
		case "passed":
			r.Totals.Passed++
		case "failed":
			r.Totals.Failed++
		case "not selected":
			r.Totals.NotSelected++
		}
	}
	return r
}

// scenario is one run of the workflow: its event and inputs, what the
// cells report, and what went before.
type scenario struct {
	name   string
	event  string
	inputs map[string]string
	// changed are the files a pull request changes.
	changed []string
	// partial: a custom filter's cell leaves specs out.
	partial bool
	change  outcomes
	// version is the Kubernetes version the cells of a release ran: a
	// pre-release of a release of the table stands for 1.38's row, which
	// the table does not have yet.
	version map[string]string
	// previous, where set, is the previous weekly run's sign-off: the
	// cells' reports of that week, with these changes.
	previous outcomes

	wantE2E     bool
	wantCells   int
	wantColumns int
	wantExit    int
	wantSigned  bool
	wantSummary []string
	// wantMatrixSummary are in the matrix job's summary.
	wantMatrixSummary []string
	// wantApart is the exit code of the pre-release columns' sign-off,
	// judged apart; 0 where there is none (the step then exits 0).
	wantApart int
}

// The sign-off job's run: steps, as written, find the reports of one
// artifact and of several as download-artifact lays them out (the cells'
// artifacts made by the e2e job's own steps), and their verdict reaches
// the job: signed off (0), a failure (1), and what ran passed with specs
// left out (3, which go run would have turned into 1). Pull requests run
// the default release's column, and none where only documentation
// changed; the weekly run compares its sign-off with the previous one's.
func TestWorkflowSignOffJobAsWritten(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the matrix job's step needs jq, as a hosted runner has it: not on PATH")
	}
	w := readWorkflow(t)
	tools := standInTools(t)
	failing := report.Spec{State: "failed", Reason: "expected 422, got 201"}
	for _, sc := range []scenario{
		{name: "dispatch: one cell, every spec", event: "workflow_dispatch",
			inputs:  map[string]string{"release": "1.35", "features": "defaults", "labels": "authz || !authz"},
			wantE2E: true, wantCells: 1, wantColumns: 1, wantExit: signoff.ExitSignedOff, wantSigned: true},
		{name: "dispatch: one cell, specs left out", event: "workflow_dispatch", partial: true,
			inputs:  map[string]string{"release": "1.35", "features": "defaults", "labels": "authz && !Serial"},
			wantE2E: true, wantCells: 1, wantColumns: 1, wantExit: signoff.ExitLeftOut},
		{name: "dispatch: a release's columns, one failed", event: "workflow_dispatch",
			inputs:  map[string]string{"release": "1.36", "features": "all", "labels": ""},
			change:  outcomes{"1.36 alpha": {4: failing}},
			wantE2E: true, wantCells: 9, wantColumns: 3, wantExit: signoff.ExitFailed},
		{name: "pull request: the default release's column", event: "pull_request", changed: []string{"Makefile", "README.md"},
			wantE2E: true, wantCells: len(matrix.Groups), wantColumns: 1, wantExit: signoff.ExitSignedOff, wantSigned: true},
		{name: "pull request: documentation only", event: "pull_request", changed: []string{"README.md", "docs/signoff-workflow.md"}},
		{name: "weekly: what changed since the previous week", event: "schedule",
			previous: outcomes{"1.35 defaults": {4: failing}},
			wantE2E:  true, wantExit: signoff.ExitSignedOff, wantSigned: true,
			wantSummary: []string{"## Since the previous weekly run", "Against [run 41](https://github.com/kep5018/adminaccess-conformance/actions/runs/41):",
				"**Sign-off: not signed off → signed off.**", "| " + requirements.All[4].ID + " | 1.35 defaults | failed | passed |"}},
		{name: "weekly: no previous week", event: "schedule",
			wantE2E: true, wantExit: signoff.ExitSignedOff, wantSigned: true,
			wantSummary: []string{"## Since the previous weekly run", "No sign-off of a previous weekly run to compare with."}},
		// A push runs every release: a pre-release's failed column is
		// signed off apart, and neither fails the job nor is hidden.
		{name: "push: a pre-release failed, apart", event: "push",
			change:  outcomes{"1.38 defaults": {4: failing}},
			wantE2E: true, wantExit: signoff.ExitSignedOff, wantSigned: true, wantApart: signoff.ExitFailed,
			wantSummary: []string{"**Pre-release columns, judged apart** (1.38 defaults, 1.38 alpha): ", "---\n\n**Pre-release Kubernetes v1.38.0-beta.0 (not 1.38.0): NOT signed off: 1 of 2 columns signed off; 1.38 defaults: 1 failed"}},
		{name: "push: a release failed, a pre-release passed", event: "push",
			change:  outcomes{"1.36 stable": {4: failing}},
			wantE2E: true, wantExit: signoff.ExitFailed, wantApart: signoff.ExitSignedOff,
			wantSummary: []string{"**NOT signed off: ", "; 1.36 stable: 1 failed", "**Pre-release Kubernetes v1.38.0-beta.0 (not 1.38.0): Signed off: all 2 columns (1.38 defaults, 1.38 alpha)"}},
		// The form offers every set beside every release: those that
		// lack it are left out, said by the matrix and the sign-off, and
		// fail nothing.
		{name: "dispatch: a set some releases lack", event: "workflow_dispatch",
			inputs:  map[string]string{"release": "all", "features": "stable", "labels": ""},
			wantE2E: true, wantCells: 6, wantColumns: 2, wantExit: signoff.ExitSignedOff, wantSigned: true,
			wantMatrixSummary: []string{"2 columns, 6 cells\nleft out: 1.33 has no stable set\nleft out: 1.34 has no stable set\n"},
			wantSummary:       []string{"; left out: 1.33 has no stable set, 1.34 has no stable set, 1.35 has no stable set, 1.38 has no stable set.**", "**Left out**: 1.33 has no stable set, "}},
		{name: "dispatch: a pre-release alone", event: "workflow_dispatch",
			inputs:  map[string]string{"release": "1.38", "features": "all", "labels": ""},
			wantE2E: true, wantColumns: 2, wantExit: signoff.ExitSignedOff, wantSigned: true,
			wantSummary: []string{"**Pre-release Kubernetes v1.38.0-beta.0 (not 1.38.0): Signed off: all 2 columns (1.38 defaults, 1.38 alpha)"}},
	} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, w, tools, sc) })
	}
}

// workflowRun is one run of the workflow: the expression contexts every
// job sees (the event's; needs.* as jobs end) and the runner's environment.
type workflowRun struct {
	t        *testing.T
	w        workflow
	repo     string
	contexts map[string]string
	base     []string
}

func newWorkflowRun(t *testing.T, w workflow, tools, event string, inputs map[string]string) *workflowRun {
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	contexts := map[string]string{"github.event_name": event, "github.run_id": "42", "github.run_attempt": "1", "github.token": "token",
		"needs.unit.result": "success", "needs.node-image.result": "success", "needs.e2e.result": "success"}
	for k, v := range inputs {
		contexts["inputs."+k] = v
	}
	base := []string{"PATH=" + tools + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "CGO_ENABLED", "GOTOOLCHAIN"} {
		if v, ok := os.LookupEnv(k); ok {
			base = append(base, k+"="+v)
		}
	}
	return &workflowRun{t: t, w: w, repo: repo, contexts: contexts, base: base}
}

// job is the job name on a runner of its own, in a fresh checkout, with
// the run's contexts as they are now and extra in its environment.
func (wr *workflowRun) job(name string, extra ...string) *jobRun {
	t := wr.t
	j, ok := wr.w.Jobs[name]
	if !ok {
		t.Fatalf("the workflow has no job %s", name)
	}
	ctx := map[string]string{}
	for k, v := range wr.contexts {
		ctx[k] = v
	}
	r := &jobRun{t: t, name: name, job: j, workspace: checkout(t, wr.repo), temp: t.TempDir(), contexts: ctx,
		baseEnv: append(append([]string{}, wr.base...), extra...), artifacts: artifactStore{}}
	r.workflowEnv = map[string]string{}
	for k, v := range wr.w.Env {
		out, err := r.interpolate(v, nil)
		if err != nil {
			t.Fatalf("workflow env %s: %v", k, err)
		}
		r.workflowEnv[k] = out
	}
	return r
}

// allowed is the job's if.
func (wr *workflowRun) allowed(r *jobRun) bool {
	ok, err := r.condition(r.job.If, nil)
	if err != nil {
		wr.t.Fatalf("job %s: if %q: %v", r.name, r.job.If, err)
	}
	return ok
}

// matrixJob runs the matrix job and hands its outputs to the jobs after it.
func (wr *workflowRun) matrixJob(changed []string) *jobRun {
	mx := wr.job("matrix")
	if wr.contexts["github.event_name"] == "pull_request" {
		pullRequestCheckout(wr.t, mx.workspace, changed)
	}
	mx.run()
	if mx.failed {
		wr.t.Fatalf("the matrix job failed; steps %v, exits %v", mx.ran, mx.exits)
	}
	for k, v := range mx.jobOutputs {
		wr.contexts["needs.matrix.outputs."+k] = v
	}
	wr.contexts["needs.matrix.result"] = "success"
	return mx
}

// cell runs the e2e job of cell c, its artifacts going to store: make e2e
// writes r as the cell's report, or nothing where r is nil, and exits
// makeExit.
func (wr *workflowRun) cell(c matrix.Cell, r *report.Report, makeExit int, store artifactStore) *jobRun {
	t := wr.t
	reportFile, argsFile := "", filepath.Join(t.TempDir(), "make-args")
	if r != nil {
		reportFile = filepath.Join(t.TempDir(), "report.json")
		if err := r.WriteJSON(reportFile); err != nil {
			t.Fatal(err)
		}
	}
	j := wr.job("e2e", "SIGNOFF_TEST_REPORT="+reportFile, "SIGNOFF_TEST_MAKE_ARGS="+argsFile, fmt.Sprintf("SIGNOFF_TEST_MAKE_EXIT=%d", makeExit))
	for k, v := range map[string]string{"name": c.Name, "release": c.Release, "features": c.Features, "group": c.Group, "labels": c.Labels, "artifact": c.Artifact} {
		j.contexts["matrix."+k] = v
	}
	j.artifacts = store
	j.run()
	if args, _ := os.ReadFile(argsFile); string(args) != c.Release+"\n"+c.Features+"\n"+c.Labels+"\n" {
		t.Fatalf("cell %s: make e2e got %q", c.Name, args)
	}
	return j
}

func runScenario(t *testing.T, w workflow, tools string, sc scenario) {
	wr := newWorkflowRun(t, w, tools, sc.event, sc.inputs)

	// The matrix job, in a checkout: for a pull request, its merge into
	// the base (HEAD^1 the base, as fetch-depth 2 gives it).
	mx := wr.matrixJob(sc.changed)
	// The releases of the run built offline: those whose row kind
	// publishes no image of.
	offline := []string{}
	if sc.wantE2E {
		cols, _, err := matrix.Available(mx.jobOutputs["releases"], mx.jobOutputs["features"])
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			if r, err := release.Get(c.Release); err == nil && r.Published == "" && !slices.Contains(offline, c.Release) {
				offline = append(offline, c.Release)
			}
		}
		if got, _ := json.Marshal(offline); mx.jobOutputs["offline"] != string(got) {
			t.Fatalf("the matrix job's offline output is %q; want %s", mx.jobOutputs["offline"], got)
		}
	}
	if got := mx.jobOutputs["e2e"] == "true"; got != sc.wantE2E {
		t.Fatalf("matrix says e2e=%q; want %v (outputs %v)", mx.jobOutputs["e2e"], sc.wantE2E, mx.jobOutputs)
	}
	for _, want := range sc.wantMatrixSummary {
		if !strings.Contains(mx.summary.String(), want) {
			t.Errorf("the matrix job's summary lacks %q:\n%s", want, mx.summary.String())
		}
	}

	// Each cell on a runner of its own; their artifacts go to the run.
	run := artifactStore{}
	e2e := wr.job("e2e")
	// The node image each cell of a release restores, by the key it asked for.
	restoredKeys := map[string]string{}
	if !wr.allowed(e2e) {
		if sc.wantE2E {
			t.Fatalf("the e2e job does not run (if %q)", e2e.job.If)
		}
		wr.contexts["needs.e2e.result"] = "skipped"
	} else {
		var cells struct{ Include []matrix.Cell }
		if err := json.Unmarshal([]byte(mx.jobOutputs["cells"]), &cells); err != nil {
			t.Fatalf("cells %q: %v", mx.jobOutputs["cells"], err)
		}
		if sc.wantCells > 0 && len(cells.Include) != sc.wantCells {
			t.Fatalf("%d cells; want %d: %v", len(cells.Include), sc.wantCells, cells.Include)
		}
		allocators := allocatorsOf(t, mx.jobOutputs["releases"], mx.jobOutputs["features"])
		for _, c := range cells.Include {
			r := cellReport(c, allocators[c.Release+" "+c.Features], sc.partial, sc.change, sc.version)
			cell := wr.cell(c, &r, 0, run)
			// A cell of a release built offline restores and loads the
			// image the node-image job built; no other cell does.
			restored := slices.Contains(cell.ran, restoreStep) && slices.Contains(cell.ran, "Load the node image")
			if want := slices.Contains(offline, c.Release); restored != want {
				t.Fatalf("cell %s: restores the node image %v, want %v (built offline: %q); steps %v", c.Name, restored, want, offline, cell.ran)
			}
			if restored {
				restoredKeys[c.Release] = strings.Join(cell.cacheKeys, " ")
			}
			if cell.failed {
				wr.contexts["needs.e2e.result"] = "failure"
			}
		}
	}
	// The node-image jobs run where a release of the run is built offline,
	// one a release, and save the image under the key its cells restore:
	// the image's tag (make node-image-tag), nothing else.
	if nodeImage := wr.job("node-image"); sc.wantE2E && wr.allowed(nodeImage) != (len(offline) > 0) {
		t.Fatalf("the node-image job runs %v with %q built offline (if %q)", wr.allowed(nodeImage), offline, nodeImage.job.If)
	}
	for _, rel := range offline {
		j := wr.job("node-image")
		j.contexts["matrix.release"] = rel
		j.run()
		want := "nodeimage-kind-e2e/node:v" + rel + "-0123456789ab"
		if j.failed || len(j.cacheKeys) != 1 || j.cacheKeys[0] != want || restoredKeys[rel] != want {
			t.Fatalf("node-image %s: failed %v, cache keys %q, its cells restore %q; want %q for both (steps %v)", rel, j.failed, j.cacheKeys, restoredKeys[rel], want, j.ran)
		}
	}

	signoffJob := wr.job("signoff", "SIGNOFF_TEST_PREVIOUS_RUN="+map[bool]string{true: "41"}[sc.previous != nil])
	if !wr.allowed(signoffJob) {
		if sc.wantE2E {
			t.Fatalf("the signoff job does not run (if %q)", signoffJob.job.If)
		}
		return
	}
	if !sc.wantE2E {
		t.Fatalf("the signoff job runs without cells (if %q)", signoffJob.job.If)
	}
	signoffJob.artifacts = run
	if sc.previous != nil {
		signoffJob.previousRun, signoffJob.previous = "41", artifactStore{"signoff": previousSignOff(t, mx.jobOutputs, sc.previous)}
	}
	signoffJob.run()

	const merge = "Merge the cells into one sign-off"
	code, ok := signoffJob.exits[merge]
	if !ok {
		t.Fatalf("no step %q ran; steps %v", merge, signoffJob.ran)
	}
	if code != sc.wantExit || signoffJob.failed != (code != 0) {
		t.Fatalf("the sign-off step exits %d (job failed: %v); want %d\nsummary:\n%s", code, signoffJob.failed, sc.wantExit, signoffJob.summary.String())
	}
	// The pre-release columns' step says their verdict by its own exit
	// code, which the job's result (the step above) does not take.
	const apart = "The pre-release columns' sign-off, apart"
	if got, ok := signoffJob.exits[apart]; !ok || got != sc.wantApart {
		t.Fatalf("the step %q exits %d (ran: %v); want %d\nsummary:\n%s", apart, got, ok, sc.wantApart, signoffJob.summary.String())
	}
	doc, err := signoff.ReadDocument(filepath.Join(signoffJob.workspace, "signoff", "signoff.json"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.ExitCode != code || doc.SignedOff != sc.wantSigned || (sc.wantColumns > 0 && len(doc.Columns) != sc.wantColumns) {
		t.Fatalf("signoff.json: exit code %d, signed off %v, %d columns; want %d, %v, %d: %s", doc.ExitCode, doc.SignedOff, len(doc.Columns), code, sc.wantSigned, sc.wantColumns, doc.Verdict)
	}
	for _, c := range doc.Columns {
		for _, why := range c.Unsigned {
			if strings.Contains(why, "no report.json") {
				t.Fatalf("column %s: %s (the cells' layout is not what the sign-off reads)", c.Key, why)
			}
		}
	}
	page, err := os.ReadFile(filepath.Join(signoffJob.workspace, "signoff", "signoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	summary := signoffJob.summary.String()
	if first, _, _ := strings.Cut(string(page), "\n"); !strings.HasPrefix(summary, first+"\n") {
		t.Errorf("the job summary does not start with signoff.md's verdict %q:\n%s", first, summary)
	}
	for _, want := range sc.wantSummary {
		if !strings.Contains(summary, want) {
			t.Errorf("the job summary lacks %q:\n%s", want, summary)
		}
	}
}

// standInTools writes the stand-ins to a folder for the runner's PATH.
func standInTools(t *testing.T) string {
	dir := t.TempDir()
	for name, script := range standIns {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkout is a workspace that reads as this repository's checkout: a link
// to each of its top-level files and folders, so that a step's go command
// builds this repository's packages and its relative paths stay in the
// workspace. Left out: git's folder (a pull request's checkout is a
// repository of its own) and what the pull request scenarios change
// (documentation, the Makefile), which they write into the workspace.
func checkout(t *testing.T, repo string) string {
	dir := t.TempDir()
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if n == ".git" || n == "docs" || n == "Makefile" || strings.HasSuffix(n, ".md") || strings.HasPrefix(n, "_") {
			continue
		}
		if err := os.Symlink(filepath.Join(repo, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// pullRequestCheckout makes the workspace a checkout of a pull request's
// merge commit whose first parent is the base, the merge changing files.
// A file under a link to the repository would be written into the
// repository itself: refused.
func pullRequestCheckout(t *testing.T, dir string, changed []string) {
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "base"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	for _, f := range changed {
		top, _, _ := strings.Cut(f, "/")
		if fi, err := os.Lstat(filepath.Join(dir, top)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			t.Fatalf("%s is under %s, a link into the repository: change another file", f, top)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "merge")
}

// allocatorsOf are the matrix's columns' allocators, by column key.
func allocatorsOf(t *testing.T, releases, features string) map[string]string {
	cols, err := matrix.Columns(releases, features)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range cols {
		out[c.Key()] = c.Allocator
	}
	return out
}

// previousSignOff is the signoff artifact of an earlier run of the same
// cells whose reports had the changes given.
func previousSignOff(t *testing.T, outputs map[string]string, change outcomes) string {
	cols, err := matrix.Columns(outputs["releases"], outputs["features"])
	if err != nil {
		t.Fatal(err)
	}
	cells, err := matrix.Cells(cols, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range cells {
		r := cellReport(c, allocatorsOf(t, c.Release, c.Features)[c.Release+" "+c.Features], false, change, nil)
		folder := filepath.Join(dir, "cells", strings.ReplaceAll(c.Name, " ", "-"), c.Release)
		if err := os.MkdirAll(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(filepath.Join(folder, "report.json")); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "signoff")
	var discard strings.Builder
	code := signoff.Collect(signoff.Sources{Cells: []string{filepath.Join(dir, "cells")}, Releases: outputs["releases"], Features: outputs["features"], Out: out}, &discard, &discard)
	if code == signoff.ExitUsage {
		t.Fatalf("the previous sign-off: %s", discard.String())
	}
	if _, err := os.Stat(filepath.Join(out, "signoff.json")); err != nil {
		t.Fatal(fmt.Errorf("the previous sign-off: %w", err))
	}
	return out
}
