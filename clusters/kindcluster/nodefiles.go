// SPDX-License-Identifier: Apache-2.0

package kindcluster

// Node primitives: read, stage and write files and run scripts inside a
// node container, one `docker exec` each.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
)

func manifestPath(comp profile.Component) string {
	return "/etc/kubernetes/manifests/" + string(comp) + ".yaml"
}

func readFile(n nodes.Node, path string) ([]byte, error) {
	var out bytes.Buffer
	if err := n.Command("cat", path).SetStdout(&out).Run(); err != nil {
		return nil, fmt.Errorf("reading %s on %s: %w", path, n, err)
	}
	return out.Bytes(), nil
}

// readManifests reads the control-plane components' manifests, in one
// command on the node.
func readManifests(cp nodes.Node) (map[profile.Component][]byte, error) {
	var paths []string
	for _, comp := range profile.ControlPlane {
		paths = append(paths, manifestPath(comp))
	}
	out, err := run(cp, `for f; do base64 -w0 "$f" || exit 1; echo; done`, paths...)
	if err != nil {
		return nil, fmt.Errorf("reading %v on %s: %w: %s", paths, cp, err, out)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != len(paths) {
		return nil, fmt.Errorf("reading %v on %s: %d files in the answer", paths, cp, len(lines))
	}
	manifests := map[profile.Component][]byte{}
	for i, comp := range profile.ControlPlane {
		if manifests[comp], err = base64.StdEncoding.DecodeString(lines[i]); err != nil {
			return nil, fmt.Errorf("reading %s on %s: %w", paths[i], cp, err)
		}
	}
	return manifests, nil
}

// writeFile replaces a file atomically: staged, then moved over it.
func writeFile(n nodes.Node, path string, data []byte) error {
	if err := stageFile(n, path, data); err != nil {
		return err
	}
	if _, err := run(n, `mv "$1" "$2"`, stagingPath(path), path); err != nil {
		return fmt.Errorf("writing %s on %s: %w", path, n, err)
	}
	return nil
}

// stageFile writes the next contents of path beside it, at stagingPath,
// outside the kubelet's manifest folder so it never sees a half-written pod.
func stageFile(n nodes.Node, path string, data []byte) error {
	if err := n.Command("sh", "-c", `cat > "$0"`, stagingPath(path)).SetStdin(bytes.NewReader(data)).Run(); err != nil {
		return fmt.Errorf("staging %s on %s: %w", path, n, err)
	}
	return nil
}

func stagingPath(path string) string {
	return "/etc/kubernetes/." + strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", "_") + ".new"
}

// run runs a shell script on the node and returns its trimmed output.
func run(n nodes.Node, script string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := append([]string{"-c", script, "sh"}, args...)
	err := n.Command("sh", cmd...).SetStdout(&out).SetStderr(&out).Run()
	return strings.TrimSpace(out.String()), err
}

// StandIns is what the node image's Kubernetes was built against in place
// of modules the module proxy did not serve (its /kind/stand-ins, one line
// each), or "" for an image built without any, or kind's own.
func (c *Cluster) StandIns() string {
	cp, err := c.ControlPlane()
	if err != nil {
		return ""
	}
	var out bytes.Buffer
	if err := cp.Command("sh", "-c", "cat /kind/stand-ins 2>/dev/null || true").SetStdout(&out).Run(); err != nil {
		return ""
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(out.String()), "\n", "; ")), " ")
}
