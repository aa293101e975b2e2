// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// The status file the runner's getter leaves for the suite: nothing yet,
// then the bits at the patch they run (or the getter's error as it said
// it), and bits whose files are not whole are refused.
func TestBitsStatusSaysWhatTheGetterGot(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "upgrade-bits.json")
	r, _ := release.Get("1.36")
	if _, done, err := ReadBitsStatus(file, r); done || !errors.Is(err, ErrNoBitsStatus) {
		t.Fatalf("no file yet: done %t, %v", done, err)
	}
	// A getter that runs (this test's process), then one that is gone.
	if err := WriteBitsPending(file, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, done, err := ReadBitsStatus(file, r); done || err != nil {
		t.Fatalf("a getter at work: done %t, %v", done, err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	WriteBitsPending(file, gone.Process.Pid)
	if _, done, err := ReadBitsStatus(file, r); !done || err == nil || !strings.Contains(err.Error(), "ended without saying what it got") {
		t.Fatalf("a getter gone without a word: done %t, %v", done, err)
	}
	if err := WriteBitsStatus(file, nil, errors.New("release bits of 1.36.3: go build: exit status 1")); err != nil {
		t.Fatal(err)
	}
	if _, done, err := ReadBitsStatus(file, r); !done || err == nil || err.Error() != "release bits of 1.36.3: go build: exit status 1" {
		t.Fatalf("a failed getter: done %t, %v", done, err)
	}
	at, _ := r.AtPatch("v1.36.4")
	b, archive := wholeBits(t, at, dir)
	b.Image = "kindest/node:v1.36.4"
	if err := WriteBitsStatus(file, b, nil); err != nil {
		t.Fatal(err)
	}
	got, done, err := ReadBitsStatus(file, r)
	if !done || err != nil || got.Release.Version != "1.36.4" || got.Images[profile.Scheduler] != "s" || got.Image != b.Image || got.Dir != dir {
		t.Fatalf("bits: done %t, %v, %+v", done, err, got)
	}
	os.WriteFile(b.Archive(), archive[:513], 0o644)
	if _, done, err := ReadBitsStatus(file, r); !done || err == nil {
		t.Fatalf("a cut archive: done %t, %v", done, err)
	}
	delete(b.Images, profile.Scheduler)
	WriteBitsStatus(file, b, nil)
	if _, _, err := ReadBitsStatus(file, r); err == nil || !strings.Contains(err.Error(), "no image of kube-scheduler") {
		t.Fatalf("an image missing: %v", err)
	}
}

// What the runner writes once the getter has ended: its reason where the
// getter left nothing or only "at work" (its pid may be another process's
// by then), nothing over the getter's own last word.
func TestEndBitsStatusKeepsTheGettersLastWord(t *testing.T) {
	dir := t.TempDir()
	r, _ := release.Get("1.36")
	reason := errors.New("e2e-cluster upgrade-bits ended (signal: killed) without saying what it got")
	for name, before := range map[string]func(string){
		"no file":   func(string) {},
		"at work":   func(f string) { WriteBitsPending(f, os.Getpid()) },
		"its error": func(f string) { WriteBitsStatus(f, nil, errors.New("go build: exit status 1")) },
		"cut short": func(f string) { os.WriteFile(f, []byte(`{"getter":`), 0o644) },
	} {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		before(file)
		if err := EndBitsStatus(file, reason); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, done, err := ReadBitsStatus(file, r)
		want := reason.Error()
		if name == "its error" {
			want = "go build: exit status 1"
		}
		if !done || err == nil || err.Error() != want {
			t.Errorf("%s: done %t, %v; want %q", name, done, err, want)
		}
	}
}
