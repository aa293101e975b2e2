// Command suite-image builds the image that runs the suite from inside the
// cluster it tests (its entrypoint is e2e/cmd/incluster), and writes what
// runs it there: a Job with the ServiceAccount and RBAC it needs, and the
// same container as a Sonobuoy plugin definition. It prints the image's tag
// and archive path.
package main

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/imagearchive"
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

// build compiles the suite (go test -c) and its entrypoint, static, and
// writes an image of the two with no base. The tag is their hash.
func build(root, outDir string) (tag, archive string, err error) {
	if outDir, err = filepath.Abs(outDir); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", "", err
	}
	steps := []struct{ name, path string }{{"e2e.test", "./e2e"}, {"incluster", "./e2e/cmd/incluster"}}
	h := sha256.New()
	var files []imagearchive.File
	for _, s := range steps {
		bin := filepath.Join(outDir, s.name)
		args := []string{"build", "-trimpath", "-o", bin, s.path}
		if s.name == "e2e.test" {
			args = []string{"test", "-c", "-trimpath", "-o", bin, s.path}
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		f, err := os.Open(bin)
		if err != nil {
			return "", "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", "", err
		}
		files = append(files, imagearchive.File{Path: "/" + s.name, Mode: 0o755, Source: bin})
	}
	tag = Repository + ":" + hex.EncodeToString(h.Sum(nil))[:12]
	archive = filepath.Join(outDir, "suite-image.tar")
	env := []string{"PATH=/", "E2E_SUITE_COMMIT=" + commit(root)}
	img := imagearchive.Image{Tags: []string{tag}, Files: files, Entrypoint: []string{"/incluster"}, Env: env, WorkingDir: "/"}
	return tag, archive, img.WriteFile(archive)
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

// quote is a YAML double-quoted scalar (JSON's string syntax is one).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
