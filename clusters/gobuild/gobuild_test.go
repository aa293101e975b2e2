// SPDX-License-Identifier: Apache-2.0

package gobuild

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The Makefile and CI set the same settings in shell and make syntax; a
// line that drifted from Flags would split the build cache again, silently.
func TestMakefileAndCIUseTheseSettings(t *testing.T) {
	flags := strings.Join(Flags, " ")
	for file, want := range map[string][]string{
		"Makefile": {"export CGO_ENABLED := 0", " " + flags + ")"},
		".ci/run":  {"export CGO_ENABLED=0", " " + flags + `"`},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s does not set %q (gobuild: CGO off, flags %q)", file, w, flags)
			}
		}
	}
}

func TestEnvironAddsTheFlagsToTheUsersOwn(t *testing.T) {
	got := Environ([]string{"HOME=/root", "GOFLAGS=-buildvcs=false -trimpath"})
	want := []string{"HOME=/root", "GOFLAGS=-buildvcs=false -trimpath", CgoOff,
		"GOFLAGS=-buildvcs=false -trimpath -gcflags=all=-dwarf=false"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
	// Without GOFLAGS in the environment, what go env says is kept.
	t.Setenv("GOFLAGS", "-mod=readonly")
	got = Environ([]string{"HOME=/root"})
	if last := got[len(got)-1]; last != "GOFLAGS=-mod=readonly -trimpath -gcflags=all=-dwarf=false" {
		t.Errorf("Environ without GOFLAGS ends with %q, want go env's GOFLAGS and the flags", last)
	}
}
