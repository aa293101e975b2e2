// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A tag push's sign-off goes to the tag's GitHub Release: the release job
// makes the release with the sign-off's pages and an archive of the whole
// folder, and its second attempt (a re-run) finds the release and replaces
// the assets, as gh does with --clobber. It runs after a sign-off that
// ran, whatever its verdict, and on no other event.
func TestWorkflowReleaseJobAttachesTheSignOff(t *testing.T) {
	w := readWorkflow(t)
	wr := newWorkflowRun(t, w, standInTools(t), "push", nil)
	for k, v := range map[string]string{"github.ref_type": "tag", "github.ref_name": "v1.2.3", "github.server_url": "https://github.com",
		"github.repository": "kep5018/adminaccess-conformance", "needs.signoff.result": "failure"} {
		wr.contexts[k] = v
	}
	// The signoff artifact as the signoff job uploads it.
	art := t.TempDir()
	for _, f := range []string{"signoff.md", "signoff.html", "signoff.json", "prerelease/signoff.md", "prerelease/signoff.html", "prerelease/signoff.json", "1.35-defaults/report.json", "attempt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(art, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(art, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gh := t.TempDir()
	for attempt := range 2 {
		j := wr.job("release", "SIGNOFF_TEST_GH="+gh)
		if !wr.allowed(j) {
			t.Fatalf("the release job does not run on a tag push (if %q)", j.job.If)
		}
		j.artifacts = artifactStore{"signoff": art}
		j.run()
		if j.failed {
			t.Fatalf("attempt %d of the release job failed; steps %v, exits %v", attempt+1, j.ran, j.exits)
		}
	}
	log, err := os.ReadFile(filepath.Join(gh, "log"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		f := strings.Fields(l)
		calls = append(calls, strings.Join(f[:3], " "))
		if f[1] == "create" && !slices.Contains(f, "--verify-tag") || f[1] == "upload" && !slices.Contains(f, "--clobber") {
			t.Errorf("gh %s", l)
		}
	}
	if want := []string{"release view v1.2.3", "release create v1.2.3", "release view v1.2.3", "release upload v1.2.3"}; !slices.Equal(calls, want) {
		t.Errorf("the two attempts called gh %q; want %q", calls, want)
	}
	entries, err := os.ReadDir(filepath.Join(gh, "assets"))
	if err != nil {
		t.Fatal(err)
	}
	var assets []string
	for _, e := range entries {
		assets = append(assets, e.Name())
	}
	if want := []string{"prerelease-signoff.html", "prerelease-signoff.json", "prerelease-signoff.md", "signoff-v1.2.3.tar.gz", "signoff.html", "signoff.json", "signoff.md"}; !slices.Equal(assets, want) {
		t.Errorf("the release's assets are %q; want %q", assets, want)
	}

	for k, v := range map[string]string{"github.ref_type": "branch", "needs.signoff.result": "skipped"} {
		old := wr.contexts[k]
		wr.contexts[k] = v
		if j := wr.job("release"); wr.allowed(j) {
			t.Errorf("the release job runs with %s %s (if %q)", k, v, j.job.If)
		}
		wr.contexts[k] = old
	}
}
