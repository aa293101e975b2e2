// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/yaml"
)

const repoRoot = "../.."

const sample = `module example.com/suite

go 1.26.0

require (
	example.com/current v1.2.0
	example.com/behind v0.3.0
	example.com/pseudo v0.0.0-20260210185600-b8788abfbbc2
	example.com/incompatible v29.7.2+incompatible
	example.com/indirect v1.0.0 // indirect
	example.com/tool v1.7.12 // indirect
	example.com/forked v1.0.0
	example.com/local v0.1.0
	k8s.io/api v0.35.4
	k8s.io/dynamic-resource-allocation v0.0.0
	k8s.io/kubernetes v1.35.4
	sigs.k8s.io/kind v0.33.0
)

replace (
	example.com/forked v1.0.0 => example.com/fork v1.1.0
	example.com/local => ../local
	k8s.io/api => k8s.io/api v0.35.4
	k8s.io/apiserver => k8s.io/apiserver v0.35.4
	k8s.io/dynamic-resource-allocation => k8s.io/dynamic-resource-allocation v0.35.4
)

tool (
	example.com/tool/cmd/tool
	k8s.io/kubernetes/test/e2e/dra/test-driver
)
`

// The direct requirements and a tool's module are checked, an indirect
// requirement is not; kubernetes, kind and the replaced modules are pinned
// on purpose, each at the version the build uses.
func TestDirectFiltersGoMod(t *testing.T) {
	mods, err := direct([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []module{
		{Path: "example.com/current", Version: "v1.2.0"},
		{Path: "example.com/behind", Version: "v0.3.0"},
		{Path: "example.com/pseudo", Version: "v0.0.0-20260210185600-b8788abfbbc2"},
		{Path: "example.com/incompatible", Version: "v29.7.2+incompatible"},
		{Path: "example.com/tool", Version: "v1.7.12"},
		{Path: "example.com/forked", Version: "v1.1.0", Pinned: "a replace line: example.com/fork v1.1.0", Replaced: true},
		{Path: "example.com/local", Version: "../local", Pinned: "replaced by the folder ../local", Replaced: true},
		{Path: "k8s.io/api", Version: "v0.35.4", Pinned: "a replace line, with k8s.io/kubernetes", Replaced: true},
		{Path: "k8s.io/dynamic-resource-allocation", Version: "v0.35.4", Pinned: "a replace line, with k8s.io/kubernetes", Replaced: true},
		{Path: "k8s.io/kubernetes", Version: "v1.35.4", Pinned: byHand["k8s.io/kubernetes"]},
		{Path: "sigs.k8s.io/kind", Version: "v0.33.0", Pinned: byHand["sigs.k8s.io/kind"]},
	}
	if !reflect.DeepEqual(mods, want) {
		t.Errorf("direct(sample):\n got %+v\nwant %+v", mods, want)
	}
	if _, err := direct([]byte("module example.com/empty\n\ngo 1.26.0\n")); err == nil {
		t.Error("a go.mod without direct requirements passed")
	}
}

func TestNewest(t *testing.T) {
	for _, c := range []struct {
		current  string
		versions []string
		want     string
	}{
		{"v1.2.0", nil, ""},
		{"v1.2.0", []string{"v1.2.0", "v1.2.0"}, ""},
		{"v1.2.0", []string{"v1.1.9"}, ""},
		// The list's update and the @latest query disagree: the greater wins.
		{"v0.3.0", []string{"v0.4.0", "v0.4.1"}, "v0.4.1"},
		{"v0.3.0", []string{"v0.4.1", "v0.4.0"}, "v0.4.1"},
		{"v0.0.0-20260210185600-b8788abfbbc2", []string{"v0.0.0-20261023123148-ca04ba58ecab"}, "v0.0.0-20261023123148-ca04ba58ecab"},
		{"v29.7.2+incompatible", []string{"v29.8.0+incompatible"}, "v29.8.0+incompatible"},
		{"v1.0.0", []string{"not-a-version"}, ""},
		// A pre-release the build uses is behind its release.
		{"v4.0.0-rc.3", []string{"v4.0.0"}, "v4.0.0"},
	} {
		if got := newest(c.current, c.versions...); got != c.want {
			t.Errorf("newest(%s, %v) = %q, want %q", c.current, c.versions, got, c.want)
		}
	}
}

// A module behind is a "module current -> newest" line and counts; one
// pinned on purpose is listed apart, behind or not, and never counts.
func TestReport(t *testing.T) {
	mods, err := direct([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string][]string{
		"example.com/current":      {"v1.2.0"},
		"example.com/behind":       {"v0.4.0", "v0.4.1"},
		"example.com/pseudo":       {"v0.0.0-20261023123148-ca04ba58ecab", "v0.0.0-20261023123148-ca04ba58ecab"},
		"example.com/incompatible": {"v29.7.2+incompatible"},
		"example.com/tool":         {"v1.7.13"},
		"k8s.io/kubernetes":        {"v1.37.2", "v1.37.2"},
		"sigs.k8s.io/kind":         {"v0.33.0"},
	}
	var out strings.Builder
	if behind := report(&out, mods, answers); behind != 3 {
		t.Errorf("report counted %d behind, want 3", behind)
	}
	want := `example.com/behind v0.3.0 -> v0.4.1
example.com/pseudo v0.0.0-20260210185600-b8788abfbbc2 -> v0.0.0-20261023123148-ca04ba58ecab
example.com/tool v1.7.12 -> v1.7.13
pinned on purpose, moved by hand with the release table (ARCHITECTURE.md):
  example.com/forked v1.1.0 (a replace line: example.com/fork v1.1.0)
  example.com/local ../local (replaced by the folder ../local)
  k8s.io/api v0.35.4 (a replace line, with k8s.io/kubernetes)
  k8s.io/dynamic-resource-allocation v0.35.4 (a replace line, with k8s.io/kubernetes)
  k8s.io/kubernetes v1.35.4 -> v1.37.2 (the release table's Kubernetes)
  sigs.k8s.io/kind v0.33.0 (the release table's KindVersion)
deps-check: behind their newest version: 3 of the 5 direct requirements not pinned on purpose (go get module@version, then go mod tidy)
`
	if out.String() != want {
		t.Errorf("report wrote:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	current := map[string][]string{"example.com/behind": {"v0.3.0"}, "k8s.io/kubernetes": {"v1.37.2"}}
	if behind := report(&out, mods, current); behind != 0 {
		t.Errorf("report counted %d behind where only a pinned module is, want 0", behind)
	}
	if !strings.HasSuffix(out.String(), "deps-check: at their newest version: all 5 direct requirements not pinned on purpose\n") {
		t.Errorf("report's verdict with nothing behind:\n%s", out.String())
	}
}

// Dependabot ignores exactly the modules deps-check takes as pinned on
// purpose in this repository's go.mod: kubernetes, kind and every
// replaced module (ARCHITECTURE.md's exception to "current releases").
func TestDependabotIgnoresWhatIsPinned(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for path := range pinned(f) {
		want = append(want, path)
	}
	sort.Strings(want)

	raw, err := os.ReadFile(filepath.Join(repoRoot, ".github", "dependabot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Updates []struct {
			Ecosystem string `json:"package-ecosystem"`
			Ignore    []struct {
				Name string `json:"dependency-name"`
			} `json:"ignore"`
		} `json:"updates"`
	}
	if err := yaml.Unmarshal(raw, &config); err != nil {
		t.Fatal(err)
	}
	var ignored []string
	for _, u := range config.Updates {
		if u.Ecosystem == "gomod" {
			for _, i := range u.Ignore {
				ignored = append(ignored, i.Name)
			}
		}
	}
	sort.Strings(ignored)
	if len(want) < 3 {
		t.Fatalf("go.mod pins only %v: the test no longer reads it", want)
	}
	if !reflect.DeepEqual(ignored, want) {
		t.Errorf("dependabot.yml's gomod ignore list is\n%v\ngo.mod pins on purpose (make deps-check)\n%v", ignored, want)
	}
}
