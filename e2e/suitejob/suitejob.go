// SPDX-License-Identifier: Apache-2.0

// Package suitejob is what runs the suite from inside the cluster it tests:
// the suite's image (the compiled suite and its entrypoint,
// e2e/cmd/incluster), the Job that runs it there and the same container as
// a Sonobuoy plugin, and the variables of make e2e that the Job carries.
// e2e/cmd/suite-image writes them for kubectl or Sonobuoy; make
// incluster-e2e (e2e/cmd/incluster-e2e) pushes, applies, waits, fetches and
// cleans up with them.
package suitejob

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
	"github.com/kep5018/adminaccess-conformance/e2e/variables"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// Repository is the suite image's name without tag.
const Repository = "kind-e2e/adminaccess-suite"

// The names the rendered Job uses, which the runner looks its pod up by.
const (
	DefaultNamespace = "adminaccess-conformance"
	JobName          = "adminaccess-suite"
	// SuiteContainer runs the suite; OutputContainer holds its results
	// until they were fetched.
	SuiteContainer  = "suite"
	OutputContainer = "output"
	// ResultsDir is where both containers mount the results.
	ResultsDir = "/results"
)

//go:embed job.yaml.tmpl
var jobTemplate string

//go:embed sonobuoy-plugin.yaml.tmpl
var pluginTemplate string

// Variables are make e2e's variables that change what the suite checks or
// how it judges it (those e2e/variables' table marks Job); each one set is
// carried into the container, under its own name (the entrypoint reads
// them as make e2e's suite would). Leaving one out would judge the cluster
// as something it is not: a cluster with alpha DRA gates as the defaults,
// say.
var Variables = variables.JobVariables()

// Environment is the Variables that getenv sets, in their order.
func Environment(getenv func(string) string) [][2]string {
	var env [][2]string
	for _, k := range Variables {
		if v := getenv(k); v != "" {
			env = append(env, [2]string{k, v})
		}
	}
	return env
}

// Values fill the manifests.
type Values struct {
	Image     string
	Namespace string
	// DeadlineSeconds bounds the Job (activeDeadlineSeconds): the suite,
	// then the output container's wait for the results to be fetched.
	DeadlineSeconds int
	Env             [][2]string
}

// Job is the Job's name, which the runner looks its pod up by: the
// constant, for the template.
func (Values) Job() string { return JobName }

// WithDefaults fills what was left empty: the namespace and
// a deadline of two hours.
func (v Values) WithDefaults() Values {
	if v.Namespace == "" {
		v.Namespace = DefaultNamespace
	}
	if v.DeadlineSeconds == 0 {
		v.DeadlineSeconds = 7200
	}
	return v
}

// Job is the Namespace, ServiceAccount, ClusterRoleBinding and Job, as one
// YAML stream.
func Job(v Values) ([]byte, error) { return render("job", jobTemplate, v.WithDefaults()) }

// SonobuoyPlugin is the suite as a Sonobuoy plugin definition.
func SonobuoyPlugin(v Values) ([]byte, error) {
	return render("sonobuoy-plugin", pluginTemplate, v.WithDefaults())
}

func render(name, text string, v Values) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{"quote": quote}).Parse(text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// quote is a YAML scalar of s: a JSON string is one, escapes and all.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Signoff is the sign-off of a results folder as the entrypoint writes it
// (<release>/report.json, and with several device classes
// classes/<class>/<release>/report.json), each column linked to its run's
// folder: what the Job writes beside them and what make incluster-e2e
// reads back. No report is an error: the suite ended before writing one.
func Signoff(results string) (signoff.Matrix, error) {
	one, _ := filepath.Glob(filepath.Join(results, "*", "report.json"))
	per, _ := filepath.Glob(filepath.Join(results, "classes", "*", "*", "report.json"))
	paths := append(one, per...)
	if len(paths) == 0 {
		return signoff.Matrix{}, fmt.Errorf("%s holds no report.json: the suite ended before writing its report (see its log)", results)
	}
	var runs []report.Report
	dirs := map[string]string{} // a run's folder by its column
	for _, p := range paths {
		r, err := report.Read(p)
		if err != nil {
			return signoff.Matrix{}, err
		}
		runs = append(runs, r)
		dirs[r.Column()], _ = filepath.Rel(results, filepath.Dir(p))
	}
	return signoff.Build(runs, func(r report.Report) string { return dirs[r.Column()] }), nil
}

// Image is the suite's image from the repository at root: the suite
// compiled (go test -c) and its entrypoint, static, with no base, and the
// commit they were built from.
func Image(root string) image.GoImage {
	return image.GoImage{
		Repository: Repository, Archive: "suite-image.tar", Entrypoint: "/incluster",
		Env:      []string{"PATH=/", "E2E_SUITE_COMMIT=" + commit(root)},
		Binaries: []image.Binary{{Name: "e2e.test", Package: "./e2e", Test: true, Tags: []string{"e2e"}}, {Name: "incluster", Package: "./e2e/cmd/incluster"}},
	}
}

// BuildImage builds Image for platform p (the zero value: this machine's
// architecture on Linux) and returns its tag and archive.
func BuildImage(root, outDir string, p image.Platform) (image.Built, error) {
	g := Image(root)
	g.Platform = p
	return g.Build(root, outDir)
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
