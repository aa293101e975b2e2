// SPDX-License-Identifier: Apache-2.0

package headers

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const repoRoot = "../.."

// Every tracked Go file starts with the SPDX line and a blank line (so
// that the line is no package's doc comment), every script has it right
// after its shebang: a new file without it fails here, with the command
// that adds it.
func TestEveryFileCarriesTheSPDXLine(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH: the tracked files cannot be listed")
	}
	cmd := exec.Command("git", "ls-files", "-z", "--", "*.go", "*.sh", ".ci/run")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && strings.Contains(string(exit.Stderr), "not a git repository") {
		t.Skip("not a git checkout (a source archive): the tracked files cannot be listed")
	} else if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d Go files and scripts: the pattern no longer matches the repository", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		} else if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 3)
		for len(lines) < 3 {
			lines = append(lines, "")
		}
		var ok bool
		if strings.HasSuffix(f, ".go") {
			ok = lines[0] == "// "+Line && lines[1] == ""
		} else {
			ok = strings.HasPrefix(lines[0], "#!") && lines[1] == "# "+Line
		}
		if !ok {
			t.Errorf("%s does not start with the SPDX line (run hack/spdx-headers.sh)", f)
		}
	}
}
