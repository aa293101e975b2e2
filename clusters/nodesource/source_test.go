// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCheckSpecTakesTheWordsAndImageReferences(t *testing.T) {
	for _, ok := range []string{"auto", "pull", "build", "present", "kindest/node:v1.35.0", "kind-e2e/node:v1.34.2-6b048f9a23c9",
		"registry.local:5000/kindest/node:v1.36.4@sha256:" + strings.Repeat("a", 64)} {
		if err := CheckSpec(ok); err != nil {
			t.Errorf("CheckSpec(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "latest", "Auto", "kindest/node", "kindest/node:", "KINDEST/node:v1"} {
		if err := CheckSpec(bad); err == nil || !strings.Contains(err.Error(), "neither a source") {
			t.Errorf("CheckSpec(%q) = %v, want a refusal that names the words", bad, err)
		}
	}
	if _, err := New("latest", t.TempDir(), ".", nil); err == nil {
		t.Error("New took an unknown source")
	}
}

// The shapes where pkg/name and Docker could part ways: a host with a
// port, localhost, a digest with or without a tag, no registry.
func TestCheckSpecEdgeCases(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("a", 64)
	for _, ok := range []string{
		"localhost:5001/kindest/node:v1.35.0", "localhost/kindest/node:v1.35.0", "127.0.0.1:5001/node:v1",
		"[::1]:5001/kindest/node:v1", "kindest/node" + digest, "kindest/node:v1.35.8" + digest, "node:v1",
		"registry.example.com/a__b/c--d:v1_2",
	} {
		if err := CheckSpec(ok); err != nil {
			t.Errorf("CheckSpec(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{
		"kindest//node:v1", "-kindest/node:v1", "kindest/node-:v1", "kindest/node:.v1", "kindest/node:-v1",
		"kindest/node@sha256:1", "http://localhost:5001/kindest/node:v1", "a b:v1", "localhost:port/node:v1",
		"localhost:5001/kindest/node",
	} {
		if err := CheckSpec(bad); err == nil || !strings.Contains(err.Error(), "neither a source") {
			t.Errorf("CheckSpec(%q) = %v, want a refusal", bad, err)
		}
	}
}

// The seam: whether an image was pulled or built is nodesource's business
// alone. Go keeps internal/ to this folder; this keeps every other package
// under it (a sibling of internal/ would be importable) out of reach too, so
// the only way in is nodesource's own API.
func TestOnlyNodesourceIsImportedFromOutside(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const self = "github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	var seen int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "_output" || n == "_artifacts" || n == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		seen++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, self+"/") && !strings.HasPrefix(rel, filepath.Join("clusters", "nodesource")+string(os.PathSeparator)) {
				t.Errorf("%s imports %s: go through nodesource", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("walked only %d Go files from %s: the module root is not where this test looks", seen, root)
	}
}
