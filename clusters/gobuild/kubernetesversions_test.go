package gobuild

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// The build cache keys a package by its module's version and by its
// imports': client-go at v0.35.4 beside x/net v0.59 is another package than
// client-go at v0.35.4 beside x/net v0.47. The default release's node image
// compiles Kubernetes with the versions of k8s.io/kubernetes' own go.mod;
// when this module's build list has every module they share at the same
// version, the runner's, the suite's and the driver's compiles and the
// node image's share some 400 packages on a fresh machine (docs/benchmarks.md:
// about 40 s of its 15 minutes). A `go get` that moves one of them still
// builds and passes every test; this is what notices.
func TestModuleSharesTheDefaultReleasesVersions(t *testing.T) {
	rel, err := release.Get(release.Default)
	if err != nil {
		t.Fatal(err)
	}
	ours := buildList(t)
	k8s, ok := ours["k8s.io/kubernetes"]
	if !ok || k8s.Version != rel.GitVersion() {
		t.Fatalf("go.mod requires k8s.io/kubernetes %s; want the default release's, %s", k8s.Version, rel.GitVersion())
	}
	theirs := requirements(t, k8s.GoMod)
	staging := "v0" + strings.TrimPrefix(rel.Version, "1") // 1.35.4 -> v0.35.4, as the node image builds them
	var drifted []string
	for path, want := range theirs {
		if want == "v0.0.0" { // a staging module, replaced by its folder
			want = staging
		}
		got, shared := ours[path]
		if !shared {
			continue
		}
		if v := got.version(); v != want {
			drifted = append(drifted, path+" "+v+" (Kubernetes "+want+")")
		}
	}
	sort.Strings(drifted)
	if len(drifted) > 0 {
		t.Errorf("modules this module shares with Kubernetes %s at other versions, so that a fresh machine compiles them twice (set them with go get module@version):\n  %s",
			rel.Version, strings.Join(drifted, "\n  "))
	}
}

type module struct {
	Path, Version, GoMod string
	Replace              *module
}

// version is the version the build uses: a replacement's, where there is one.
func (m module) version() string {
	if m.Replace != nil && m.Replace.Version != "" {
		return m.Replace.Version
	}
	return m.Version
}

// buildList is `go list -m all` of this module, by path.
func buildList(t *testing.T) map[string]module {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-json", "all")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	list := map[string]module{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m module
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		list[m.Path] = m
	}
	return list
}

// requirements are the require lines of a go.mod file, as go mod edit
// reads them.
func requirements(t *testing.T, goMod string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "mod", "edit", "-json", goMod).Output()
	if err != nil {
		t.Fatalf("go mod edit -json %s: %v", goMod, err)
	}
	var f struct{ Require []module }
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	reqs := map[string]string{}
	for _, r := range f.Require {
		reqs[r.Path] = r.Version
	}
	if len(reqs) == 0 {
		t.Fatalf("%s: no requirements read", goMod)
	}
	return reqs
}
