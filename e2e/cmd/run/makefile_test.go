// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/run"
)

// The documented commands no cluster run of CI reaches (make vendor-e2e,
// registry-e2e, bench, ...) still have their wiring checked here: every
// `make X` the README and docs/ name is a target, every runner command a
// target calls is one the runner has, and every script a target runs is
// there and parses. A renamed target or script fails this, not a user.

const repoRoot = "../../.."

var (
	targetLine  = regexp.MustCompile(`(?m)^([a-z0-9][a-z0-9-]*):`)
	runnerCall  = regexp.MustCompile(`\$\(RUN\) ([a-z0-9-]+)`)
	scriptCall  = regexp.MustCompile(`(?:bash )?(hack/[a-z0-9-]+\.sh)`)
	documented  = regexp.MustCompile("`make ([a-z][a-z0-9-]*)")
	codeCommand = regexp.MustCompile(`(?m)^\s*make ([a-z][a-z0-9-]*)`)
)

func makefile(t *testing.T) (targets map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets = map[string]string{}
	text := string(b)
	locs := targetLine.FindAllStringSubmatchIndex(text, -1)
	for i, l := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		targets[text[l[2]:l[3]]] = text[l[0]:end]
	}
	return targets
}

func TestEveryDocumentedMakeCommandIsATarget(t *testing.T) {
	targets := makefile(t)
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "ARCHITECTURE.md"))
	seen := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range []*regexp.Regexp{documented, codeCommand} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				seen++
				if _, ok := targets[m[1]]; !ok {
					t.Errorf("%s names make %s, which the Makefile has no target for", filepath.Base(page), m[1])
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found only %d make commands in the docs: the patterns no longer match how they are written", seen)
	}
}

func TestEveryTargetCallsWhatExists(t *testing.T) {
	targets := makefile(t)
	calls, scripts := 0, 0
	for target, recipe := range targets {
		for _, m := range runnerCall.FindAllStringSubmatch(recipe, -1) {
			calls++
			if !strings.Contains(usage, "  "+m[1]) && !strings.Contains(usage, ", "+m[1]) {
				t.Errorf("make %s calls the runner's %q, which its usage does not list", target, m[1])
			}
		}
		for _, m := range scriptCall.FindAllStringSubmatch(recipe, -1) {
			scripts++
			path := filepath.Join(repoRoot, m[1])
			if _, err := os.Stat(path); err != nil {
				t.Errorf("make %s runs %s: %v", target, m[1], err)
				continue
			}
			if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
				t.Errorf("make %s runs %s, which bash cannot parse: %s", target, m[1], out)
			}
		}
	}
	if calls < 10 || scripts < 4 {
		t.Fatalf("found %d runner calls and %d scripts in the Makefile: the patterns no longer match its recipes", calls, scripts)
	}
	// A command the runner does not have is refused as bad input, before
	// anything runs.
	c := run.Resolve(func(string) (string, bool) { return "", false }, nil, t.TempDir())
	if code := command(context.Background(), run.New(os.Stdout, os.Stderr), c, "no-such-command"); code != run.ExitRefused {
		t.Errorf("an unknown runner command exited %d, want %d", code, run.ExitRefused)
	}
}
