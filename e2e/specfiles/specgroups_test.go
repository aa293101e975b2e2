// SPDX-License-Identifier: Apache-2.0

package specfiles

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestSpecGroupFilesKeepTheirHelpers keeps specs apart from fixtures: what a
// spec-group file (one that registers a group with Describe) declares is
// its own, and no other file of the package uses it. A helper that more
// than one file uses lives in a fixture file named for what it is
// (claims.go, pods.go, nodes.go, devices.go, promises.go, ...), so that no
// spec group reaches into another's file for it.
//
// The one exception is a group's spec table (a []allocationPromise or
// []featurePromise: spec bodies with their sentences and KEP requirements),
// which the allocators group registers again under each other allocator
// implementation: those are specs, not helpers.
//
// The package is type-checked from its source with its imports stubbed, so
// that the test compiles none of the Kubernetes modules it imports: every
// use of a name the package declares resolves all the same (a local name
// that shadows it is told apart), and the errors about the stubs are
// ignored.
func TestSpecGroupFilesKeepTheirHelpers(t *testing.T) {
	sources, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range sources {
		if !strings.HasSuffix(p, "_test.go") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	fset := token.NewFileSet()
	var files []*ast.File
	specGroup := map[string]bool{}
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, sources[p], parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		if registersGroup(f) {
			specGroup[filepath.Base(p)] = true
		}
	}
	if len(specGroup) == 0 {
		t.Fatal("no file of e2e/adminaccess registers a spec group (var _ = framework.Describe(...))")
	}

	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: stubImporter{}, Error: func(error) {}}
	pkg, _ := conf.Check("adminaccess", fset, files, info) // the stubs' errors are expected

	file := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	wrong := map[string][]int{} // "user uses name of owner": the lines
	tables := 0
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() || !declaredAtTop(pkg, obj) {
			continue
		}
		user, owner := file(id.Pos()), file(obj.Pos())
		if user == owner || !specGroup[owner] {
			continue
		}
		if isSpecTable(obj) {
			tables++
			continue
		}
		what := "file"
		if specGroup[user] {
			what = "spec-group file"
		}
		key := fmt.Sprintf("%s %s uses %s, declared in spec-group file %s", what, user, obj.Name(), owner)
		wrong[key] = append(wrong[key], fset.Position(id.Pos()).Line)
	}
	// The allocators group registers the other groups' tables: seeing it
	// proves that uses across files were resolved at all.
	if tables == 0 {
		t.Fatal("no file uses another spec group's table: the package's names were not resolved")
	}
	var keys []string
	for k := range wrong {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sort.Ints(wrong[k])
		t.Errorf("%s (lines %v): a helper more than one file uses belongs in a fixture file of its own", k, wrong[k])
	}
}

// registersGroup says whether the file registers a spec group at its top
// level: var _ = framework.Describe(...) or ginkgo.Describe(...).
func registersGroup(f *ast.File) bool {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				if call, ok := v.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Describe" {
						return true
					}
				}
			}
		}
	}
	return false
}

// declaredAtTop: a name of the package's block, or a method of one of its
// types.
func declaredAtTop(pkg *types.Package, obj types.Object) bool {
	if obj.Parent() == pkg.Scope() {
		return true
	}
	fn, ok := obj.(*types.Func)
	return ok && fn.Signature().Recv() != nil
}

// isSpecTable: a package-level var whose type is a slice of a type named
// *Promise (a spec body with its sentence and KEP requirement).
func isSpecTable(obj types.Object) bool {
	v, ok := obj.(*types.Var)
	if !ok {
		return false
	}
	s, ok := v.Type().(*types.Slice)
	if !ok {
		return false
	}
	n, ok := s.Elem().(*types.Named)
	return ok && strings.HasSuffix(n.Obj().Name(), "Promise")
}

// stubImporter gives every import an empty package under the name an
// unaliased import of it takes: its path's last element, or the one before
// a module's major version (github.com/onsi/ginkgo/v2); a wrong guess
// would only add to the ignored errors.
type stubImporter struct{}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

func (stubImporter) Import(importPath string) (*types.Package, error) {
	name := path.Base(importPath)
	if dir := path.Dir(importPath); majorVersion.MatchString(name) && dir != "." && strings.HasPrefix(importPath, "github.com/") {
		name = path.Base(dir)
	}
	name = strings.NewReplacer("-", "", ".", "").Replace(name)
	p := types.NewPackage(importPath, name)
	p.MarkComplete()
	return p, nil
}
