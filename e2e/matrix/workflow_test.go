// SPDX-License-Identifier: Apache-2.0

package matrix

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kep5018/adminaccess-conformance/clusters/gobuild"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// ciWorkflow is what this test reads of .github/workflows/ci.yaml.
type ciWorkflow struct {
	// sigs.k8s.io/yaml reads YAML 1.1, where the key on is the boolean true.
	On struct {
		Dispatch struct {
			Inputs map[string]struct {
				Description string   `json:"description"`
				Options     []string `json:"options"`
			} `json:"inputs"`
		} `json:"workflow_dispatch"`
	} `json:"true"`
	Env         map[string]string `json:"env"`
	Permissions map[string]string `json:"permissions"`
	Jobs        map[string]struct {
		// Needs is a job's name or a list of them.
		Needs       any               `json:"needs"`
		If          string            `json:"if"`
		Permissions map[string]string `json:"permissions"`
		Env         map[string]string `json:"env"`
		Outputs     map[string]string `json:"outputs"`
		// Strategy's matrix is a map, or an expression (e2e's).
		Strategy struct {
			Matrix any `json:"matrix"`
		} `json:"strategy"`
		Steps []struct {
			ID   string            `json:"id"`
			Name string            `json:"name"`
			If   string            `json:"if"`
			Uses string            `json:"uses"`
			Run  string            `json:"run"`
			Env  map[string]string `json:"env"`
			With map[string]any    `json:"with"`
		} `json:"steps"`
	} `json:"jobs"`
}

// updateWorkflow has TestWorkflowRepeatsTheTables write the dispatch's
// release options from the release table into the workflow, where they
// differ: go test ./e2e/matrix -run TestWorkflowRepeatsTheTables -update-workflow
var updateWorkflow = flag.Bool("update-workflow", false, "write the release table's minors into the workflow's dispatch options")

// releaseOptions is the workflow's line of the dispatch's release options
// for the minors given, as the workflow spells it.
func releaseOptions(minors []string) string {
	quoted := make([]string, 0, len(minors)+1)
	for _, m := range append([]string{"all"}, minors...) {
		q, _ := json.Marshal(m)
		quoted = append(quoted, string(q))
	}
	return "options: [" + strings.Join(quoted, ", ") + "]"
}

// optionsLine finds the release input's options line in the workflow.
var optionsLine = regexp.MustCompile(`(?m)^(\s+)options: \["all"(, "[0-9.]+")*\]$`)

const workflowPath = "../../.github/workflows/ci.yaml"

func readWorkflow(t *testing.T) ciWorkflow {
	t.Helper()
	data, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	var w ciWorkflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", workflowPath, err)
	}
	return w
}

// The workflow repeats by hand what the release table and the build
// settings say, since a dispatch's choices and an env block are YAML, not
// Go: a release added to the table, a feature set, a new default release
// or a build flag must move the workflow with it, or a dispatch cannot ask
// for the new release, a pull request checks the old default, or the
// cache unit saves misses every cell's compile.
func TestWorkflowRepeatsTheTables(t *testing.T) {
	w := readWorkflow(t)
	inputs := w.On.Dispatch.Inputs

	if want := append([]string{"all"}, release.Minors()...); !slices.Equal(inputs["release"].Options, want) {
		line := releaseOptions(release.Minors())
		if *updateWorkflow {
			writeOptions(t, line)
		} else {
			t.Errorf("the dispatch's release options are %q; the release table's minors are %q: in %s, make the release input's options line\n\t%s\n(or run go test ./e2e/matrix -run TestWorkflowRepeatsTheTables -update-workflow)",
				inputs["release"].Options, want, ".github/workflows/ci.yaml", line)
		}
	}
	// The description names no release: the options do, and a range in
	// words would need a hand edit for each new release.
	if d := inputs["release"].Description; regexp.MustCompile(`[0-9]+\.[0-9]+`).MatchString(d) {
		t.Errorf("the dispatch's release description %q names releases: the options list them", d)
	}
	sets := []string{"all"}
	for _, m := range release.Minors() {
		r, err := release.Get(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.SetNames() {
			if !slices.Contains(sets, s) {
				sets = append(sets, s)
			}
		}
	}
	got := slices.Clone(inputs["features"].Options)
	slices.Sort(got)
	slices.Sort(sets)
	if !slices.Equal(got, sets) {
		t.Errorf("the dispatch's features options are %q; the releases' feature sets and all are %q", inputs["features"].Options, sets)
	}

	if got := w.Env["DEFAULT_RELEASE"]; got != release.Default {
		t.Errorf("a pull request's release (env DEFAULT_RELEASE) is %q; release.Default is %q", got, release.Default)
	}

	// The releases built offline are e2e/matrix's (Offline: the rows kind
	// publishes no image of), never named here: the node-image job is one
	// job per release of the matrix job's offline list, and a cell
	// restores its release's image where its release is in that list.
	const offline = "needs.matrix.outputs.offline"
	nodeImage := w.Jobs["node-image"]
	if got := w.Jobs["matrix"].Outputs["offline"]; got != "${{ steps.matrix.outputs.offline }}" {
		t.Errorf("the matrix job's offline output is %q", got)
	}
	byRelease, _ := nodeImage.Strategy.Matrix.(map[string]any)
	if got := byRelease["release"]; got != "${{ fromJSON("+offline+") }}" || !strings.Contains(nodeImage.If, offline+" != '[]'") {
		t.Errorf("the node-image job's matrix is %v, its if %q: want one job per release of %s", got, nodeImage.If, offline)
	}
	// The node image's cache key is its tag, as make node-image gives it
	// (a hash of its recipe), which a step of each job computes for the
	// job's release before the cache: an edit that leaves the image as it
	// was (a spec, a defect's row, go.sum) keeps the cache.
	const tagKey = "nodeimage-${{ steps.nodeimage.outputs.tag }}"
	for _, job := range []string{"node-image", "e2e"} {
		tagged, keys := false, 0
		for _, s := range w.Jobs[job].Steps {
			if s.ID == "nodeimage" {
				tagged = strings.Contains(s.Run, `make -s node-image-tag K8S_VERSION="$RELEASE"`) && s.Env["RELEASE"] == "${{ matrix.release }}"
				if !tagged {
					t.Errorf("job %s, step %q: want make -s node-image-tag of the job's release", job, s.Name)
				}
			}
			key, _ := s.With["key"].(string)
			if strings.HasPrefix(s.Uses, "actions/cache") && strings.HasPrefix(key, "nodeimage-") {
				keys++
				if key != tagKey || !tagged {
					t.Errorf("job %s, step %q: the node image's cache key is %q (after the tag's step: %v); want %s", job, s.Name, key, tagged, tagKey)
				}
			}
			if job == "e2e" && (s.ID == "nodeimage" || strings.HasPrefix(s.Uses, "actions/cache/restore") || strings.HasPrefix(s.Name, "Load the node image")) &&
				s.If != "contains(fromJSON("+offline+"), matrix.release)" {
				t.Errorf("job e2e, step %q: if %q, want the cell's release in %s", s.Name, s.If, offline)
			}
		}
		if keys != 1 {
			t.Errorf("job %s has %d caches of the node image; want 1", job, keys)
		}
	}
	// What the sign-off reads of the jobs before it: each cell's folder
	// is named by e2e/matrix (Cell.Artifact), and the unit job's result is
	// there only where the signoff job needs unit.
	if got := w.Jobs["e2e"].Env["CELL"]; got != "${{ matrix.artifact }}" {
		t.Errorf("the e2e job's CELL is %q; want ${{ matrix.artifact }}, as e2e/matrix names the cell's artifact", got)
	}
	needs, _ := w.Jobs["signoff"].Needs.([]any)
	if !slices.Contains(needs, any("unit")) || !slices.Contains(needs, any("e2e")) {
		t.Errorf("the signoff job needs %q: want unit and e2e, whose results it is given", needs)
	}
	raw, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	if named := regexp.MustCompile(`'[0-9]+\.[0-9]+'`).FindAllString(string(raw), -1); len(named) > 0 {
		t.Errorf("the workflow names releases in its expressions (%q): they come from e2e/matrix", named)
	}

	unit := w.Jobs["unit"].Env
	if got, want := strings.Fields(unit["GOFLAGS"]), gobuild.Flags; !slices.Equal(got, want) {
		t.Errorf("unit's GOFLAGS are %q; clusters/gobuild's flags are %q", got, want)
	}
	if got := "CGO_ENABLED=" + unit["CGO_ENABLED"]; got != gobuild.CgoOff {
		t.Errorf("unit sets %s; clusters/gobuild sets %s", got, gobuild.CgoOff)
	}
}

// writeOptions puts line in place of the workflow's release options line.
func writeOptions(t *testing.T, line string) {
	t.Helper()
	raw, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(optionsLine.FindAllIndex(raw, -1)); n != 1 {
		t.Fatalf("%s has %d lines of release options; want 1: edit it by hand to\n\t%s", workflowPath, n, line)
	}
	raw = optionsLine.ReplaceAll(raw, []byte("${1}"+line))
	if err := os.WriteFile(workflowPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: the release options now read %s", workflowPath, line)
}

// The line the test asks for (and writes) is the workflow's own spelling:
// a new release's line is the one to paste, and -update-workflow finds
// the line it replaces.
func TestReleaseOptionsAreTheWorkflowsLine(t *testing.T) {
	raw, err := os.ReadFile(workflowPath)
	if err != nil {
		t.Fatal(err)
	}
	found := optionsLine.FindAll(raw, -1)
	if len(found) != 1 || strings.TrimSpace(string(found[0])) != releaseOptions(release.Minors()) {
		t.Errorf("the workflow's release options lines are %q; want one, %q", found, releaseOptions(release.Minors()))
	}
	if got, want := releaseOptions([]string{"1.33", "1.37", "1.38"}), `options: ["all", "1.33", "1.37", "1.38"]`; got != want {
		t.Errorf("with 1.38 in the table the line would read %s; want %s", got, want)
	}
}

// setup-go installs exactly the version a go.mod's go line names (1.26.0,
// never patched), so the workflow reads .github/go-version, a range of
// go.mod's minor that check-latest resolves to its newest patch; a go line
// moved to the next minor must move that file too.
func TestWorkflowGoVersionIsGoModsMinor(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^go (\d+\.\d+)(\.\d+)?$`).FindSubmatch(mod)
	if line == nil {
		t.Fatal("go.mod has no go line")
	}
	version, err := os.ReadFile(filepath.Join("..", "..", ".github", "go-version"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(version)), string(line[1])+".x"; got != want {
		t.Errorf(".github/go-version says %q; go.mod's go line is %s, so it should say %q", got, line[0], want)
	}
}

// What the pinned actions do by default that the workflow must not leave
// them to: checkout writes the job's token into .git/config unless
// persist-credentials is false (actions/checkout v7.0.1, action.yml), and
// upload-artifact refuses a name the run has, so that a re-run job's upload
// fails, unless overwrite is true (v7.0.0, action.yml:37-42).
func TestWorkflowActionInputs(t *testing.T) {
	w := readWorkflow(t)
	checkouts, uploads := 0, 0
	for name, j := range w.Jobs {
		for _, s := range j.Steps {
			switch {
			case strings.HasPrefix(s.Uses, "actions/checkout@"):
				checkouts++
				if v, ok := s.With["persist-credentials"].(bool); !ok || v {
					t.Errorf("job %s: its checkout has persist-credentials %v; want false", name, s.With["persist-credentials"])
				}
			case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
				uploads++
				if v, ok := s.With["overwrite"].(bool); !ok || !v {
					t.Errorf("job %s, step %q: overwrite %v; want true, or a re-run of the job cannot upload", name, s.Name, s.With["overwrite"])
				}
			}
		}
	}
	if uploads < 2 {
		t.Errorf("%d uploads: the test no longer finds them", uploads)
	}
	// The sign-off says how long it is kept, and a tag's lasts in its
	// release: only the job that attaches it may write to the repository.
	for _, s := range w.Jobs["signoff"].Steps {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && (s.With["retention-days"] != "${{ env.RETENTION_DAYS }}" || w.Jobs["signoff"].Env["RETENTION_DAYS"] != "90") {
			t.Errorf("the sign-off's upload keeps it %v days (RETENTION_DAYS %q); want the job's RETENTION_DAYS, 90", s.With["retention-days"], w.Jobs["signoff"].Env["RETENTION_DAYS"])
		}
	}
	if w.Permissions["contents"] != "read" {
		t.Errorf("the workflow's permissions are %v; want contents: read", w.Permissions)
	}
	if got := w.Jobs["release"].Permissions; got["contents"] != "write" {
		t.Errorf("the release job's permissions are %v; want contents: write", got)
	}
	for name, j := range w.Jobs {
		for scope, p := range j.Permissions {
			if p == "write" && (name != "release" || scope != "contents") {
				t.Errorf("job %s may write %s", name, scope)
			}
		}
	}
	if checkouts < len(w.Jobs)-1 {
		t.Errorf("%d checkouts in %d jobs: the test no longer finds them", checkouts, len(w.Jobs))
	}
}
