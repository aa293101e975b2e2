package matrix

import (
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
				Options []string `json:"options"`
			} `json:"inputs"`
		} `json:"workflow_dispatch"`
	} `json:"true"`
	Env  map[string]string `json:"env"`
	Jobs map[string]struct {
		If  string            `json:"if"`
		Env map[string]string `json:"env"`
	} `json:"jobs"`
}

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
		t.Errorf("the dispatch's release options are %q; the release table's minors are %q", inputs["release"].Options, want)
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

	// The node-image job builds the one release kind publishes no image
	// of; a release table with another such release needs that job (and
	// its cells' restore step) for it too.
	var unpublished []string
	for _, m := range release.Minors() {
		if r, _ := release.Get(m); r.Published == "" {
			unpublished = append(unpublished, m)
		}
	}
	built := regexp.MustCompile(`contains\(needs\.matrix\.outputs\.releases, '([0-9.]+)'\)`).FindAllStringSubmatch(w.Jobs["node-image"].If, -1)
	var builds []string
	for _, b := range built {
		builds = append(builds, b[1])
	}
	if !slices.Equal(builds, unpublished) {
		t.Errorf("the node-image job builds %q (its if: %q); the releases kind publishes no node image of are %q", builds, w.Jobs["node-image"].If, unpublished)
	}

	unit := w.Jobs["unit"].Env
	if got, want := strings.Fields(unit["GOFLAGS"]), gobuild.Flags; !slices.Equal(got, want) {
		t.Errorf("unit's GOFLAGS are %q; clusters/gobuild's flags are %q", got, want)
	}
	if got := "CGO_ENABLED=" + unit["CGO_ENABLED"]; got != gobuild.CgoOff {
		t.Errorf("unit sets %s; clusters/gobuild sets %s", got, gobuild.CgoOff)
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
