// SPDX-License-Identifier: Apache-2.0

package nodeimage

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const kindContainerdConfig = `version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler]
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.test-handler.options]
    SystemdCgroup = true
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = false
`

func TestContainerdConfigRoutesRuncThroughTheShim(t *testing.T) {
	got, err := ContainerdConfig(kindContainerdConfig)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, `BinaryName = "/usr/local/bin/runc-capshim"`); n != 2 {
		t.Errorf("want the shim on both runtimes, got %d:\n%s", n, got)
	}
	for _, want := range []string{"restrict_oom_score_adj = true", "enable_cdi = true", `sandbox_image = "registry.k8s.io/pause:3.10"`} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "restrict_oom_score_adj = false") {
		t.Error("restrict_oom_score_adj still false")
	}
}

func TestContainerdConfigRefusesAnUnknownShape(t *testing.T) {
	for name, cfg := range map[string]string{
		"no CRI plugin": "version = 3\n",
		"no runtime options": `version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = false
`,
		"no restrict_oom_score_adj": `version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = true
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
`,
		"not TOML": "[plugins\n",
	} {
		if _, err := ContainerdConfig(cfg); err == nil {
			t.Errorf("%s: a config without the expected sections must be an error, not a silent no-op", name)
		}
	}
}

// kindBaseConfig is the containerd config of kind's base image at the
// version go.mod pins, the input stage() gives ContainerdConfig.
func kindBaseConfig(t *testing.T) string {
	t.Helper()
	dir, err := (&Builder{RepoRoot: "."}).moduleDir("sigs.k8s.io/kind")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "images/base/files/etc/containerd/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The node image's tag does not hash this package's code, so the typed edit
// must give containerd the very config the line edit gave it (same tag, same
// node): the two outputs decode to the same TOML document.
func TestContainerdConfigDecodesAsTheLineEdit(t *testing.T) {
	for name, in := range map[string]string{"kind's base image": kindBaseConfig(t), "the small fixture": kindContainerdConfig} {
		typed, err := ContainerdConfig(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines, err := lineEditReference(in)
		if err != nil {
			t.Fatalf("%s: reference: %v", name, err)
		}
		var a, b map[string]any
		if _, err := toml.Decode(typed, &a); err != nil {
			t.Fatalf("%s: typed edit's output: %v\n%s", name, err, typed)
		}
		if _, err := toml.Decode(lines, &b); err != nil {
			t.Fatalf("%s: line edit's output: %v\n%s", name, err, lines)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the typed edit decodes to\n%#v\nthe line edit to\n%#v", name, a, b)
		}
		t.Logf("%s: same document; bytes equal: %t", name, typed == lines)
	}
}

// kind's entrypoint edits the written config with sed (the snapshotter, and
// restrict_oom_score_adj under rootless): those lines must keep kind's spelling.
func TestContainerdConfigKeepsTheLinesKindsEntrypointEdits(t *testing.T) {
	got, err := ContainerdConfig(kindBaseConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`snapshotter = "overlayfs"`, "restrict_oom_score_adj = true"} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
}

// lineEditReference is the line-by-line edit ContainerdConfig replaced, kept
// as the reference its output must equal.
func lineEditReference(kindConfig string) (string, error) {
	lines := strings.Split(kindConfig, "\n")
	var out []string
	runtimes, oom, cri := 0, false, false
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "restrict_oom_score_adj") {
			out = append(out, strings.Replace(line, "false", "true", 1))
			oom = true
			continue
		}
		out = append(out, line)
		switch {
		case strings.HasPrefix(trimmed, `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.`) && strings.HasSuffix(trimmed, `.options]`):
			out = append(out, fmt.Sprintf("    BinaryName = %q", ShimPath))
			runtimes++
		case trimmed == `[plugins."io.containerd.grpc.v1.cri"]`:
			out = append(out, "  enable_cdi = true", `  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]`)
			cri = true
		}
	}
	if runtimes == 0 || !oom || !cri {
		return "", fmt.Errorf("kind's containerd config changed shape (runtimes options: %d, restrict_oom_score_adj: %t, cri section: %t)", runtimes, oom, cri)
	}
	return strings.Join(out, "\n"), nil
}
