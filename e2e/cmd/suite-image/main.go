// Command suite-image builds the image that runs the suite from inside the
// cluster it tests (its entrypoint is e2e/cmd/incluster), and writes what
// runs it there: a Job with the ServiceAccount and RBAC it needs, and the
// same container as a Sonobuoy plugin definition. It prints the image's tag
// and archive path.
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// Repository is the suite image's name without tag.
const Repository = "kind-e2e/adminaccess-suite"

//go:embed incluster.yaml.tmpl
var jobTemplate string

//go:embed sonobuoy-plugin.yaml.tmpl
var pluginTemplate string

// Values fill the manifests: the image and make e2e's variables, as the
// container's environment.
type Values struct {
	Image     string
	Namespace string
	Env       [][2]string
}

func main() {
	out := flag.String("out", "_output/suite-image", "folder for the binaries, the archive and the manifests")
	root := flag.String("source-root", ".", "the repository root")
	ns := flag.String("namespace", "adminaccess-conformance", "namespace of the Job and its ServiceAccount")
	flag.Parse()
	tag, archive, err := build(*root, *out)
	if err == nil {
		v := Values{Image: tag, Namespace: *ns, Env: environment()}
		err = render(filepath.Join(*out, "incluster.yaml"), jobTemplate, v)
		if err == nil {
			err = render(filepath.Join(*out, "sonobuoy-plugin.yaml"), pluginTemplate, v)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite-image:", err)
		os.Exit(1)
	}
	fmt.Println(tag, archive)
}

// environment is make e2e's variables that are set here, for the container.
func environment() [][2]string {
	var env [][2]string
	for _, k := range []string{"K8S_VERSION", "LABELS", "FOCUS", "SKIP", "TESTDRIVER_IMAGE", "DRIVER", "DEVICE_CLASS", "WORKLOAD_IMAGE", "ADMIN_CHECK", "TIMEOUT"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, [2]string{k, v})
		}
	}
	return env
}

// build compiles the suite (go test -c) and its entrypoint, static, into an
// image of the two with no base.
func build(root, outDir string) (tag, archive string, err error) {
	built, err := image.GoImage{
		Repository: Repository, Archive: "suite-image.tar", Entrypoint: "/incluster",
		Env:      []string{"PATH=/", "E2E_SUITE_COMMIT=" + commit(root)},
		Binaries: []image.Binary{{Name: "e2e.test", Package: "./e2e", Test: true, Tags: []string{"e2e"}}, {Name: "incluster", Package: "./e2e/cmd/incluster"}},
	}.Build(root, outDir)
	return built.Tag, built.Archive, err
}

// commit is the repository's commit, "+changes" when the tree differs: the
// provenance a report from inside the cluster names.
func commit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if exec.Command("git", "-C", root, "diff", "--quiet", "HEAD").Run() != nil {
		c += "+changes"
	}
	return c
}

func render(path, text string, v Values) error {
	t, err := template.New(filepath.Base(path)).Option("missingkey=error").Funcs(template.FuncMap{"quote": quote}).Parse(text)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// quote is a YAML scalar of s: a JSON string is one, escapes and all.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
