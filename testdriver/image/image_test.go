// SPDX-License-Identifier: Apache-2.0

package image

import (
	"context"
	"debug/elf"
	"encoding/json"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// A GoImage is compiled for the platform it is given, and says so: read
// back from its archive as a runtime reads it, its config names the
// platform and its binary's ELF header that platform's machine, whatever
// this machine is. The sandbox's pause binary stands in for the driver
// and the suite (the same build, a compile of seconds);
// e2e/cmd/incluster-e2e's TestImagesForThePlatform builds those.
func TestGoImageIsCompiledForItsPlatform(t *testing.T) {
	for _, tc := range []struct {
		platform Platform
		machine  elf.Machine
	}{{Platform{"linux", "arm64"}, elf.EM_AARCH64}, {Platform{"linux", "amd64"}, elf.EM_X86_64}} {
		g := GoImage{Repository: "kind-e2e/pause", Archive: "pause.tar", Entrypoint: "/pause",
			Binaries: []Binary{{Name: "pause", Package: "./clusters/cmd/pause"}}, Platform: tc.platform}
		built, err := g.BuildContext(context.Background(), "../..", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c, err := Inspect(built.Archive, built.Tag)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %s: config %s; binaries %v", tc.platform, built.Tag, configLine(t, c.Config), c.Machines)
		if c.Config.OS != tc.platform.OS || c.Config.Architecture != tc.platform.Arch || built.Platform != tc.platform {
			t.Errorf("%s: config os %q architecture %q, built for %s", tc.platform, c.Config.OS, c.Config.Architecture, built.Platform)
		}
		if m := c.Machines["/pause"]; m != tc.machine {
			t.Errorf("%s: /pause is an ELF for %s, want %s", tc.platform, m, tc.machine)
		}
	}
}

// configLine is an image config's platform and command as JSON, on one line.
func configLine(t *testing.T, cfg v1.ConfigFile) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"os": cfg.OS, "architecture": cfg.Architecture, "entrypoint": cfg.Config.Entrypoint, "env": cfg.Config.Env})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A config that names one platform over binaries of another is what a pod
// dies of with "exec format error"; Matches says which file is wrong.
func TestMatchesRefusesAMislabelledImage(t *testing.T) {
	c := Contents{Config: v1.ConfigFile{OS: "linux", Architecture: "amd64"},
		Machines: map[string]elf.Machine{"/testdriver": elf.EM_AARCH64, "/workload": elf.EM_X86_64}}
	if err := c.Matches(Platform{"linux", "arm64"}); err == nil || !strings.Contains(err.Error(), "its config says linux/amd64") {
		t.Errorf("config amd64, platform arm64: %v", err)
	}
	err := c.Matches(Platform{"linux", "amd64"})
	if err == nil || !strings.Contains(err.Error(), "/testdriver is an ELF for EM_AARCH64, not EM_X86_64") || strings.Contains(err.Error(), "/workload") {
		t.Errorf("an aarch64 binary under an amd64 config: %v", err)
	}
}

// The platforms an image cannot be built for are refused in one line each:
// another OS, 32-bit ARM, and an architecture Go does not compile for.
func TestCheckPlatform(t *testing.T) {
	for p, want := range map[string]string{
		"windows/amd64": "which a windows node cannot run",
		"linux/arm":     "which 32-bit ARM version",
		"linux/sparc64": "Go cannot compile for it",
		"linux/arm64":   "",
		"linux/s390x":   "",
	} {
		platform, err := ParsePlatform(p)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckPlatform(context.Background(), platform)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", p, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
	for _, bad := range []string{"linux", "/arm64", "linux/", "linux/arm/v7"} {
		if _, err := ParsePlatform(bad); err == nil {
			t.Errorf("ParsePlatform(%q) took it", bad)
		}
	}
}

// Images of several platforms share a tag that changes with any of them.
func TestIndexTag(t *testing.T) {
	amd := Built{Tag: "kind-e2e/testdriver:aaa", Platform: Platform{"linux", "amd64"}}
	arm := Built{Tag: "kind-e2e/testdriver:bbb", Platform: Platform{"linux", "arm64"}}
	if got := IndexTag([]Built{amd}); got != amd.Tag {
		t.Errorf("one image: %s", got)
	}
	both := IndexTag([]Built{amd, arm})
	arm.Tag = "kind-e2e/testdriver:ccc"
	if !strings.HasPrefix(both, "kind-e2e/testdriver:") || both == IndexTag([]Built{amd, arm}) || both == amd.Tag {
		t.Errorf("index tag %s", both)
	}
}
