// SPDX-License-Identifier: Apache-2.0

package kindcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestSourcesState(t *testing.T) {
	for out, want := range map[string]string{
		"ready\n":    sourcesReady,
		"waiting":    sourcesWaiting,
		"unanswered": sourcesUnanswered,
		// A node that does not answer gives docker's error, not the
		// script's word: no reason to wait.
		"Error response from daemon: container is not running": sourcesUnanswered,
		"": sourcesUnanswered,
	} {
		if got := sourcesState(out); got != want {
			t.Errorf("sourcesState(%q) = %q, want %q", out, got, want)
		}
	}
}

// TestSourcesScript runs the script with a curl that answers as a kubelet
// before and after its first housekeeping, and as one that does not answer.
func TestSourcesScript(t *testing.T) {
	for name, tc := range map[string]struct {
		curl string
		want string
	}{
		"after housekeeping": {curl: "printf '# HELP kubelet_desired_pods x\\n# TYPE kubelet_desired_pods gauge\\nkubelet_desired_pods{static=\"\"} 3\\nkubelet_desired_pods{static=\"true\"} 4\\n'", want: sourcesReady},
		"before":             {curl: "printf '# HELP kubelet_working_pods x\\nkubelet_working_pods{config=\"desired\",lifecycle=\"sync\",static=\"\"} 0\\nkubelet_mirror_pods 4\\n'", want: sourcesWaiting},
		// The gauge named in a comment only is no sample.
		"help only": {curl: "printf '# HELP kubelet_desired_pods x\\n'", want: sourcesWaiting},
		"forbidden": {curl: "exit 22", want: sourcesUnanswered},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "curl"), []byte("#!/bin/sh\n"+tc.curl+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", sourcesScript, "sh", kubeletClientCert, kubeletClientKey)
			cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin"}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got := sourcesState(string(out)); got != tc.want {
				t.Errorf("got %q (%s), want %q", got, out, tc.want)
			}
		})
	}
}
