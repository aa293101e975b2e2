// SPDX-License-Identifier: Apache-2.0

// Command deps-check (make deps-check) lists each direct requirement of
// go.mod, and the module of each of its tools, that is behind the newest
// version the module proxy serves (its newest release, or the newest
// pseudo-version of a module that has none), one "module current ->
// newest" line each, and exits 1 when one is behind, 0 when none is, 2
// when it cannot tell (no go.mod, the proxy does not answer).
//
// k8s.io/kubernetes, the modules go.mod's replace lines pin (its staging
// twins, at its patch) and kind move with the release table by hand
// (ARCHITECTURE.md, "Dependencies are current"; .github/dependabot.yml
// ignores the same modules, and the test keeps the two equal): they are
// listed apart, as pinned on purpose, and never fail the check.
//
// The newest version is the greater of two answers: go list -m -u's update
// (the proxy's version list, retracted versions left out) and the module's
// @latest query, which asks the proxy's latest where the list names no
// release. A version the proxy serves but neither answer names stays
// unseen. It asks the network, so make test never runs it; its test runs
// the filter and the lines without one.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// The exit codes.
const (
	exitCurrent = 0
	exitBehind  = 1
	exitUnknown = 2
)

// The modules that move with the release table (clusters/release) by hand,
// besides those go.mod replaces.
var byHand = map[string]string{
	"k8s.io/kubernetes": "the release table's Kubernetes",
	"sigs.k8s.io/kind":  "the release table's KindVersion",
}

// module is one direct requirement (or a tool's module) at the version the
// build uses: a replace line's where go.mod has one.
type module struct {
	Path, Version string
	// Pinned says why the module is pinned on purpose; "" where go.mod
	// takes its current release.
	Pinned string
	// Replaced: its version is a replace line's, which asking the proxy
	// about the required path says nothing about.
	Replaced bool
}

func main() {
	root := flag.String("root", ".", "the folder whose go.mod is checked")
	flag.Parse()
	os.Exit(run(*root, os.Stdout, os.Stderr))
}

func run(root string, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		fmt.Fprintf(stderr, "deps-check: %v\n", err)
		return exitUnknown
	}
	mods, err := direct(data)
	if err != nil {
		fmt.Fprintf(stderr, "deps-check: %v\n", err)
		return exitUnknown
	}
	var ask []string
	for _, m := range mods {
		if !m.Replaced {
			ask = append(ask, m.Path)
		}
	}
	answers, err := query(root, ask)
	if err != nil {
		fmt.Fprintf(stderr, "deps-check: asking the module proxy: %v\n", err)
		return exitUnknown
	}
	if behind := report(stdout, mods, answers); behind > 0 {
		return exitBehind
	}
	return exitCurrent
}

// pinned lists every module go.mod pins on purpose, required or not, with
// why: the replaced ones and those of byHand.
func pinned(f *modfile.File) map[string]string {
	why := map[string]string{}
	for path, reason := range byHand {
		why[path] = reason
	}
	for _, r := range f.Replace {
		if r.New.Version == "" {
			why[r.Old.Path] = "replaced by the folder " + r.New.Path
		} else if strings.HasPrefix(r.Old.Path, "k8s.io/") {
			why[r.Old.Path] = "a replace line, with k8s.io/kubernetes"
		} else {
			why[r.Old.Path] = "a replace line: " + r.New.Path + " " + r.New.Version
		}
	}
	return why
}

// direct reads go.mod's direct requirements and the modules its tool lines
// name a package of (a tool's module may be an indirect requirement), in
// go.mod's order.
func direct(data []byte) ([]module, error) {
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	why := pinned(f)
	tool := map[string]bool{}
	for _, t := range f.Tool {
		var best string
		for _, r := range f.Require {
			if (t.Path == r.Mod.Path || strings.HasPrefix(t.Path, r.Mod.Path+"/")) && len(r.Mod.Path) > len(best) {
				best = r.Mod.Path
			}
		}
		tool[best] = true
	}
	var mods []module
	for _, r := range f.Require {
		if r.Indirect && !tool[r.Mod.Path] {
			continue
		}
		m := module{Path: r.Mod.Path, Version: r.Mod.Version, Pinned: why[r.Mod.Path]}
		for _, rep := range f.Replace {
			if rep.Old.Path == m.Path && (rep.Old.Version == "" || rep.Old.Version == m.Version) {
				m.Version, m.Replaced = rep.New.Version, true
				if rep.New.Version == "" {
					m.Version = rep.New.Path
				}
			}
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, errors.New("go.mod requires no module directly")
	}
	return mods, nil
}

// answer is what go list says of one module.
type answer struct {
	Path, Version string
	Update        *struct{ Version string }
	Error         *struct{ Err string }
}

// query asks go list, in root, for each module's update and its @latest:
// both versions, by module.
func query(root string, paths []string) (map[string][]string, error) {
	got := map[string][]string{}
	if len(paths) == 0 {
		return got, nil
	}
	updates, err := goList(root, append([]string{"-u"}, paths...))
	if err != nil {
		return nil, err
	}
	for _, a := range updates {
		if a.Update != nil {
			got[a.Path] = append(got[a.Path], a.Update.Version)
		}
	}
	latest := make([]string, len(paths))
	for i, p := range paths {
		latest[i] = p + "@latest"
	}
	latests, err := goList(root, latest)
	if err != nil {
		return nil, err
	}
	for _, a := range latests {
		got[a.Path] = append(got[a.Path], a.Version)
	}
	return got, nil
}

// goList runs go list -m -e -json with args in root; a module's error is
// the command's.
func goList(root string, args []string) ([]answer, error) {
	cmd := exec.Command("go", append([]string{"list", "-m", "-e", "-json"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	var answers []answer
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var a answer
		if err := dec.Decode(&a); err == io.EOF {
			return answers, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list -m %s: %v", args[0], err)
		}
		if a.Error != nil {
			return nil, fmt.Errorf("%s: %s", a.Path, a.Error.Err)
		}
		answers = append(answers, a)
	}
}

// newest is the greatest of the versions given that is newer than
// current; "" where none is.
func newest(current string, versions ...string) string {
	var best string
	for _, v := range versions {
		if semver.IsValid(v) && semver.Compare(v, current) > 0 && (best == "" || semver.Compare(v, best) > 0) {
			best = v
		}
	}
	return best
}

// report writes a line for each module behind its newest version, then
// those pinned on purpose, then the verdict, and says how many that are not
// pinned are behind.
func report(w io.Writer, mods []module, answers map[string][]string) (behind int) {
	line := func(m module) string {
		if n := newest(m.Version, answers[m.Path]...); n != "" {
			return m.Path + " " + m.Version + " -> " + n
		}
		return m.Path + " " + m.Version
	}
	var held []module
	for _, m := range mods {
		if m.Pinned != "" {
			held = append(held, m)
		} else if newest(m.Version, answers[m.Path]...) != "" {
			behind++
			fmt.Fprintln(w, line(m))
		}
	}
	if len(held) > 0 {
		fmt.Fprintln(w, "pinned on purpose, moved by hand with the release table (ARCHITECTURE.md):")
		for _, m := range held {
			fmt.Fprintf(w, "  %s (%s)\n", line(m), m.Pinned)
		}
	}
	checked := len(mods) - len(held)
	if behind == 0 {
		fmt.Fprintf(w, "deps-check: at their newest version: all %d direct requirements not pinned on purpose\n", checked)
	} else {
		fmt.Fprintf(w, "deps-check: behind their newest version: %d of the %d direct requirements not pinned on purpose (go get module@version, then go mod tidy)\n", behind, checked)
	}
	return behind
}
