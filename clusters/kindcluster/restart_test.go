// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTakenBeforeReleasesOnlyAnOlderProcesssLease(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 5, 0, time.UTC)
	at := func(d time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{AcquireTime: &metav1.MicroTime{Time: start.Add(d)}}}
	}
	for name, tc := range map[string]struct {
		lease *coordinationv1.Lease
		want  bool
	}{
		"taken by the killed process":             {at(-40 * time.Second), true},
		"taken a moment before the new start":     {at(-time.Millisecond), true},
		"taken by the new process":                {at(2 * time.Second), false},
		"taken in the new process's first second": {at(0), false},
		"never acquired":                          {&coordinationv1.Lease{}, false},
	} {
		if got := takenBefore(tc.lease, start); got != tc.want {
			t.Errorf("%s: takenBefore = %t, want %t", name, got, tc.want)
		}
	}
}

// The node scripts of a restart, run here by sh on temporary paths: staging
// writes each manifest byte for byte beside the folder, parking takes the
// running one out, starting moves the staged one in and drops the parked.
func TestStageParkAndStartMoveEachManifestWhereItBelongs(t *testing.T) {
	dir := t.TempDir()
	sh := func(script string, args ...string) string {
		t.Helper()
		out, err := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", script, err, out)
		}
		return string(out)
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	manifests := map[string]string{"a": "kind: Pod\nname: a\n", "b": "kind: Pod\nname: 'b b'\n\n"}
	var staged, park, start []string
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(path(name+".yaml"), []byte("old "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		staged = append(staged, path(name+".new"), base64.StdEncoding.EncodeToString([]byte(manifests[name])))
		park = append(park, path(name+".yaml"), path(name+".parked"))
		start = append(start, path(name+".new"), path(name+".yaml"), path(name+".parked"))
	}
	sh(stageScript, staged...)
	sh(parkScript, park...)
	for _, name := range []string{"a", "b"} {
		if _, err := os.Stat(path(name + ".yaml")); !os.IsNotExist(err) {
			t.Errorf("%s.yaml is still in the folder after parking (%v)", name, err)
		}
	}
	sh(moveInScript, start...)
	for name, want := range manifests {
		got, err := os.ReadFile(path(name + ".yaml"))
		if err != nil || string(got) != want {
			t.Errorf("%s.yaml = %q (%v), want %q", name, got, err, want)
		}
		for _, gone := range []string{".new", ".parked"} {
			if _, err := os.Stat(path(name + gone)); !os.IsNotExist(err) {
				t.Errorf("%s%s is left behind (%v)", name, gone, err)
			}
		}
	}
	// Parking a component without a manifest (one that crashed out) is no error.
	sh(parkScript, path("none.yaml"), path("none.parked"))

	// Stamping again is staging and moving in once more: the new manifest
	// replaces the one in the folder, and no staged file stays.
	sh(stageScript, path("a.new"), base64.StdEncoding.EncodeToString([]byte("kind: Pod\nname: a, again\n")))
	sh(moveInScript, path("a.new"), path("a.yaml"), path("a.parked"))
	if got, err := os.ReadFile(path("a.yaml")); err != nil || string(got) != "kind: Pod\nname: a, again\n" {
		t.Errorf("a.yaml after stamping again = %q (%v)", got, err)
	}
	if _, err := os.Stat(path("a.new")); !os.IsNotExist(err) {
		t.Errorf("a.new is left behind (%v)", err)
	}
}

// notBegunScript asks containerd (ctr, faked here) for containers labelled
// with each pod's UID and names the pods that have none; without ctr it
// names none, so that no pod is stamped again for want of a way to look.
func TestNotBegunScriptNamesThePodsWithoutContainers(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\ncase \"$*\" in *'labels.\"io.kubernetes.pod.uid\"==0a1b'*) echo sandbox-id;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "ctr"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	shell, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	notBegun := func(path string, uids ...string) string {
		t.Helper()
		cmd := exec.Command(shell, append([]string{"-c", notBegunScript, "sh"}, uids...)...)
		cmd.Env = []string{"PATH=" + path}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out)
	}
	if got := notBegun(bin, "0a1b", "2c3d", "4e5f"); got != "2c3d\n4e5f\n" {
		t.Errorf("with ctr: %q, want the two pods without containers", got)
	}
	if got := notBegun(t.TempDir(), "0a1b", "2c3d"); got != "" {
		t.Errorf("without ctr: %q, want none", got)
	}
}

func TestAbsentListsWhatTheNodeLacksInOrder(t *testing.T) {
	have := []string{"registry.k8s.io/kube-apiserver:v1.35.4", "registry.k8s.io/pause:3.10", "registry.k8s.io/kube-scheduler:v1.35.4"}
	want := []string{"registry.k8s.io/kube-apiserver:v1.35.4", "registry.k8s.io/kube-controller-manager:v1.35.4", "registry.k8s.io/kube-scheduler:v1.35.4", "registry.k8s.io/kube-proxy:v1.35.4"}
	got := absent(want, have)
	if !slices.Equal(got, []string{"registry.k8s.io/kube-controller-manager:v1.35.4", "registry.k8s.io/kube-proxy:v1.35.4"}) {
		t.Errorf("absent = %v", got)
	}
	if got := absent(want[:1], have); len(got) != 0 {
		t.Errorf("an image the node has is reported absent: %v", got)
	}
}

func TestBriefSaysWhetherTheProcessServesAndItsFirstFailedCheck(t *testing.T) {
	for _, tc := range []struct {
		p    process
		want string
	}{
		{process{}, "no process"},
		{process{PID: "7", Health: "ok"}, "pid 7, serving"},
		{process{PID: "7"}, "pid 7, no answer"},
		{process{PID: "7", Health: "[+]ping ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[-]etcd failed"},
			"pid 7, not ready: [-]poststarthook/rbac/bootstrap-roles failed: reason withheld"},
		{process{PID: "7", Health: "Unauthorized"}, "pid 7, not ready"},
	} {
		if got := tc.p.brief(); got != tc.want {
			t.Errorf("brief(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// A wait the run stopped (Ctrl-C) must not read as a component that did
// not come back in time.
func TestInTimeTellsAnInterruptFromATimeout(t *testing.T) {
	if got := inTime(context.Background(), 3*time.Minute); got != "within 3m0s" {
		t.Errorf("running context: %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := inTime(ctx, 3*time.Minute); got != "before the run stopped waiting (context canceled)" {
		t.Errorf("cancelled context: %q", got)
	}
}
