// SPDX-License-Identifier: Apache-2.0

package main

// A runner of the CI workflow's jobs as written, for workflow_test.go: each
// run: step goes to bash as GitHub's hosted runner starts it (bash -e, in
// a workspace that reads as this repository's checkout, with the
// workflow's, the job's and the step's env and the GITHUB_* files), and the
// actions the jobs use are stood in for by what their source at the pinned
// commit does with the same inputs (the artifacts' layout, not their
// transport). ${{ }} expressions are read by
// a small evaluator of the operators the workflow uses; one it cannot read
// fails the test, so that a new expression is taught to it rather than
// skipped.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// workflowFile is the CI workflow, read from the repository.
const workflowFile = "../../../.github/workflows/ci.yaml"

type workflow struct {
	Env  map[string]string `json:"env"`
	Jobs map[string]job    `json:"jobs"`
}

type job struct {
	Needs   any               `json:"needs"`
	If      string            `json:"if"`
	Env     map[string]string `json:"env"`
	Outputs map[string]string `json:"outputs"`
	Steps   []step            `json:"steps"`
}

type step struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	If              string            `json:"if"`
	Uses            string            `json:"uses"`
	Run             string            `json:"run"`
	Env             map[string]string `json:"env"`
	With            map[string]any    `json:"with"`
	ContinueOnError bool              `json:"continue-on-error"`
}

// needs are the jobs the job needs, by name.
func (j job) needs() []string {
	switch n := j.Needs.(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, v := range n {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	return nil
}

func (s step) title() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Uses != "":
		return s.Uses
	}
	return s.ID
}

func readWorkflow(t *testing.T) workflow {
	t.Helper()
	data, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
	return w
}

// artifactStore holds a run's artifacts as folders of their files, by name.
type artifactStore map[string]string

// jobRun is one job of a run on a runner of its own.
type jobRun struct {
	t         *testing.T
	name      string
	job       job
	workspace string
	temp      string
	// baseEnv is the runner's environment: PATH (with the stand-ins first),
	// HOME, the Go caches.
	baseEnv []string
	// contexts are the expression contexts' values ("github.event_name",
	// "inputs.release", "needs.matrix.outputs.cells", "matrix.release").
	contexts map[string]string
	// workflowEnv is the workflow's env, read already.
	workflowEnv map[string]string
	artifacts   artifactStore
	// previous are the artifacts of another run, which download-artifact
	// reaches with run-id and github-token.
	previous    artifactStore
	previousRun string

	// What the run did.
	outputs map[string]map[string]string // step id -> outputs
	exits   map[string]int               // step title -> exit code of a run: step
	ran     []string                     // step titles, in order
	failed  bool
	// cacheKeys are the keys the job's cache steps looked up, in order.
	cacheKeys  []string
	summary    strings.Builder
	jobOutputs map[string]string // the job's outputs
}

// run runs the job's steps in order, as the runner would.
func (r *jobRun) run() {
	r.outputs, r.exits = map[string]map[string]string{}, map[string]int{}
	for _, s := range r.job.Steps {
		env := r.env(s)
		ok, err := r.condition(s.If, env)
		if err != nil {
			r.t.Fatalf("job %s, step %q: if %q: %v", r.name, s.title(), s.If, err)
		}
		if !ok {
			continue
		}
		r.ran = append(r.ran, s.title())
		var stepErr error
		switch {
		case s.Run != "":
			stepErr = r.runScript(s, env)
		case s.Uses != "":
			stepErr = r.uses(s, env)
		}
		if stepErr != nil && !s.ContinueOnError {
			r.failed = true
		}
	}
	r.jobOutputs = map[string]string{}
	for k, v := range r.job.Outputs {
		out, err := r.interpolate(v, nil)
		if err != nil {
			r.t.Fatalf("job %s, output %s: %v", r.name, k, err)
		}
		r.jobOutputs[k] = out
	}
}

// env is the step's environment: the workflow's, the job's, the step's,
// each read as expressions in that order (a later one sees the earlier).
func (r *jobRun) env(s step) map[string]string {
	env := map[string]string{}
	for _, layer := range []map[string]string{r.workflowEnv, r.job.Env, s.Env} {
		for k, v := range layer {
			out, err := r.interpolate(v, env)
			if err != nil {
				r.t.Fatalf("job %s, step %q, env %s: %v", r.name, s.title(), k, err)
			}
			env[k] = out
		}
	}
	return env
}

func (r *jobRun) runScript(s step, env map[string]string) error {
	dir := r.t.TempDir()
	script := filepath.Join(dir, "step.sh")
	if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
		r.t.Fatal(err)
	}
	output, summary := filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	for _, f := range []string{output, summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	// GitHub's hosted runners start a run: step without a shell of its
	// own as bash -e {0}.
	cmd := exec.Command("bash", "-e", script)
	cmd.Dir = r.workspace
	cmd.Env = append([]string{}, r.baseEnv...)
	for k, v := range map[string]string{
		"GITHUB_WORKSPACE": r.workspace, "RUNNER_TEMP": r.temp, "GITHUB_OUTPUT": output, "GITHUB_STEP_SUMMARY": summary,
		"GITHUB_EVENT_NAME": r.contexts["github.event_name"], "GITHUB_REPOSITORY": "kep5018/adminaccess-conformance",
		"GITHUB_WORKFLOW_REF": "kep5018/adminaccess-conformance/.github/workflows/ci.yaml@refs/heads/main",
		"GITHUB_SERVER_URL":   "https://github.com", "GITHUB_RUN_ID": r.contexts["github.run_id"], "GITHUB_RUN_ATTEMPT": r.contexts["github.run_attempt"],
	} {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		r.t.Fatalf("job %s, step %q: %v", r.name, s.title(), err)
	}
	r.exits[s.title()] = code
	r.t.Logf("job %s, step %q: exit %d\n%s", r.name, s.title(), code, out)
	outputs := map[string]string{}
	data, _ := os.ReadFile(output)
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			outputs[k] = v
		}
	}
	if s.ID != "" {
		r.outputs[s.ID] = outputs
	}
	data, _ = os.ReadFile(summary)
	r.summary.Write(data)
	if code != 0 {
		return fmt.Errorf("exit %d", code)
	}
	return nil
}

// uses stands in for an action: the artifact actions by what their source
// does with these inputs; checkout and setup-go by nothing (the workspace
// and the go command are there already); the caches by a hit of the key
// they look up, which the job records (no job here builds a node image).
func (r *jobRun) uses(s step, env map[string]string) error {
	name, _, _ := strings.Cut(s.Uses, "@")
	// The inputs, read.
	inputs := func() map[string]string {
		with := map[string]string{}
		for k, v := range s.With {
			out, err := r.interpolate(fmt.Sprint(v), env)
			if err != nil {
				r.t.Fatalf("job %s, step %q, with %s: %v", r.name, s.title(), k, err)
			}
			with[k] = out
		}
		return with
	}
	switch name {
	case "actions/upload-artifact":
		return r.upload(inputs())
	case "actions/download-artifact":
		return r.download(inputs())
	case "actions/cache", "actions/cache/restore":
		r.cacheKeys = append(r.cacheKeys, inputs()["key"])
		if s.ID != "" {
			r.outputs[s.ID] = map[string]string{"cache-hit": "true"}
		}
		return nil
	case "actions/checkout", "actions/setup-go":
		return nil
	}
	r.t.Fatalf("job %s, step %q: no stand-in for %s", r.name, s.title(), s.Uses)
	return nil
}

// upload is upload-artifact v7.0.0 for one folder (src/shared/search.ts:
// 154-157, a single search path's files rooted at the path itself): the
// artifact holds the folder's files. No files uploads nothing and deletes
// nothing (src/upload/upload-artifact.ts:31-52): a warning
// (if-no-files-found: warn), or the step fails (error). The artifacts are
// the run's, of every attempt: a name the run has is deleted first with
// overwrite: true (68-70, and action.yml:37-42), and without it the
// service refuses the name (@actions/artifact 6.2.0's
// src/internal/upload/upload-artifact.ts:92-96, CreateArtifact not ok,
// with the 409 below). So a re-run of a job that uploads fails without
// overwrite, as it does on GitHub.
func (r *jobRun) upload(with map[string]string) error {
	src := filepath.Join(r.workspace, with["path"])
	if !hasFiles(src) {
		if with["if-no-files-found"] == "error" {
			return fmt.Errorf("No files were found with the provided path: %s. No artifacts will be uploaded.", with["path"])
		}
		return nil
	}
	name := with["name"]
	if with["overwrite"] == "true" {
		delete(r.artifacts, name)
	}
	if _, taken := r.artifacts[name]; taken {
		return errors.New("Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run")
	}
	dest := filepath.Join(r.t.TempDir(), "artifact")
	copyTree(r.t, src, dest)
	r.artifacts[name] = dest
	return nil
}

// hasFiles says whether the folder holds a file, at any depth.
func hasFiles(dir string) bool {
	found := errors.New("found")
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			return found
		}
		return err
	})
	return err == found
}

// download is download-artifact v8.0.1 (src/download-artifact.ts): a name
// is one artifact (85-101; not found is an error), a pattern filters the
// run's artifacts (157-163; none is no error), and each is extracted into
// path itself where a name was given, merge-multiple is true or only one
// artifact matched, else into path/<artifact name> (185-194). With a
// github-token, run-id names the run (66-80). Of several artifacts of a
// name, each of an attempt, it takes the newest (149-153 list them with
// latest: true; @actions/artifact 6.2.1's find/list-artifacts.ts:113-115,
// 176-186 and get-artifact.ts:107-116 keep the highest ID): the store
// holds one artifact a name, the one uploaded last.
func (r *jobRun) download(with map[string]string) error {
	store := r.artifacts
	if with["github-token"] != "" && with["run-id"] != "" && with["run-id"] != r.contexts["github.run_id"] {
		if with["run-id"] != r.previousRun {
			return fmt.Errorf("no run %s", with["run-id"])
		}
		store = r.previous
	}
	var names []string
	switch {
	case with["name"] != "":
		if _, ok := store[with["name"]]; !ok {
			return fmt.Errorf("Artifact '%s' not found", with["name"])
		}
		names = []string{with["name"]}
	default:
		for n := range store {
			if ok, _ := path.Match(with["pattern"], n); ok || with["pattern"] == "" {
				names = append(names, n)
			}
		}
	}
	dest := filepath.Join(r.workspace, with["path"])
	for _, n := range names {
		to := dest
		if with["name"] == "" && with["merge-multiple"] != "true" && len(names) != 1 {
			to = filepath.Join(dest, n)
		}
		copyTree(r.t, store[n], to)
	}
	return nil
}

func copyTree(t *testing.T, src, dest string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dest, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The expressions.

var expression = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// interpolate replaces each ${{ }} in s with its value as a string.
func (r *jobRun) interpolate(s string, env map[string]string) (string, error) {
	var firstErr error
	out := expression.ReplaceAllStringFunc(s, func(m string) string {
		v, err := r.eval(expression.FindStringSubmatch(m)[1], env)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return str(v)
	})
	return out, firstErr
}

// condition is a job's or step's if: an expression with or without ${{ }},
// under success() unless it calls a status function itself.
func (r *jobRun) condition(cond string, env map[string]string) (bool, error) {
	cond = strings.TrimSpace(cond)
	if cond == "" {
		return !r.failed, nil
	}
	if m := expression.FindStringSubmatch(cond); m != nil && strings.TrimSpace(m[0]) == cond {
		cond = m[1]
	}
	if !regexp.MustCompile(`\b(always|cancelled|success|failure)\(`).MatchString(cond) {
		cond = "success() && (" + cond + ")"
	}
	v, err := r.eval(cond, env)
	return truthy(v), err
}

func (r *jobRun) eval(src string, env map[string]string) (any, error) {
	p := &exprParser{tokens: tokenize(src), lookup: func(name string) (any, error) { return r.lookup(name, env) }, failed: r.failed}
	v, err := p.or()
	if err == nil && p.pos < len(p.tokens) {
		err = fmt.Errorf("unexpected %q", p.tokens[p.pos])
	}
	if err != nil {
		return nil, fmt.Errorf("%q: %w", src, err)
	}
	return v, nil
}

// lookup is a context's value. inputs and steps of a step that did not
// run are null, as on GitHub; job.status is the job's so far; needs.X is
// there only where the job needs X, as on GitHub; any other name the test
// was not given fails.
func (r *jobRun) lookup(name string, env map[string]string) (any, error) {
	if rest, ok := strings.CutPrefix(name, "needs."); ok {
		job, _, _ := strings.Cut(rest, ".")
		if !slices.Contains(r.job.needs(), job) {
			return nil, fmt.Errorf("%s: job %s does not need %s (needs %v)", name, r.name, job, r.job.needs())
		}
	}
	if name == "job.status" {
		if r.failed {
			return "failure", nil
		}
		return "success", nil
	}
	if v, ok := r.contexts[name]; ok {
		return v, nil
	}
	if k, ok := strings.CutPrefix(name, "env."); ok && env != nil {
		if v, ok := env[k]; ok {
			return v, nil
		}
	}
	parts := strings.Split(name, ".")
	if len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs" {
		return r.outputs[parts[1]][parts[3]], nil
	}
	if parts[0] == "inputs" {
		return nil, nil
	}
	return nil, fmt.Errorf("the test gives no value for %s", name)
}

var token = regexp.MustCompile(`\s*('(?:[^']|'')*'|\|\||&&|==|!=|!|\(|\)|,|[A-Za-z_][A-Za-z0-9_.-]*|[0-9]+)`)

func tokenize(s string) []string {
	var out []string
	for _, m := range token.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// exprParser reads the expression operators the workflow uses: || and &&
// (which give an operand's value, as GitHub's do), == and != (strings
// compared without regard to case), !, parentheses, string literals,
// context names and the functions always, cancelled, success, failure,
// contains (of a string or an array) and fromJSON.
type exprParser struct {
	tokens []string
	pos    int
	lookup func(string) (any, error)
	failed bool
}

func (p *exprParser) peek() string {
	if p.pos < len(p.tokens) {
		return p.tokens[p.pos]
	}
	return ""
}

func (p *exprParser) or() (any, error) {
	v, err := p.and()
	for err == nil && p.peek() == "||" {
		p.pos++
		var right any
		right, err = p.and()
		if !truthy(v) {
			v = right
		}
	}
	return v, err
}

func (p *exprParser) and() (any, error) {
	v, err := p.compare()
	for err == nil && p.peek() == "&&" {
		p.pos++
		var right any
		right, err = p.compare()
		if truthy(v) {
			v = right
		}
	}
	return v, err
}

func (p *exprParser) compare() (any, error) {
	v, err := p.unary()
	for err == nil && (p.peek() == "==" || p.peek() == "!=") {
		op := p.peek()
		p.pos++
		var right any
		right, err = p.unary()
		v = strings.EqualFold(str(v), str(right)) == (op == "==")
	}
	return v, err
}

func (p *exprParser) unary() (any, error) {
	if p.peek() == "!" {
		p.pos++
		v, err := p.unary()
		return !truthy(v), err
	}
	return p.primary()
}

func (p *exprParser) primary() (any, error) {
	t := p.peek()
	p.pos++
	switch {
	case t == "":
		return nil, errors.New("unexpected end")
	case t == "(":
		v, err := p.or()
		if p.peek() != ")" {
			return nil, errors.New("no )")
		}
		p.pos++
		return v, err
	case strings.HasPrefix(t, "'"):
		return strings.ReplaceAll(t[1:len(t)-1], "''", "'"), nil
	case t == "true" || t == "false":
		return t == "true", nil
	case p.peek() == "(":
		p.pos++
		var args []any
		for p.peek() != ")" {
			v, err := p.or()
			if err != nil {
				return nil, err
			}
			args = append(args, v)
			if p.peek() == "," {
				p.pos++
			} else if p.peek() != ")" {
				return nil, fmt.Errorf("%s(: no )", t)
			}
		}
		p.pos++
		switch {
		case t == "always" && len(args) == 0:
			return true, nil
		case t == "cancelled" && len(args) == 0:
			return false, nil
		case t == "success" && len(args) == 0:
			return !p.failed, nil
		case t == "failure" && len(args) == 0:
			return p.failed, nil
		case t == "contains" && len(args) == 2:
			// Of an array, whether an item equals the value (strings
			// without regard to case); of a string, whether it holds it.
			if items, ok := args[0].([]any); ok {
				for _, item := range items {
					if strings.EqualFold(str(item), str(args[1])) {
						return true, nil
					}
				}
				return false, nil
			}
			return strings.Contains(strings.ToLower(str(args[0])), strings.ToLower(str(args[1]))), nil
		case t == "fromJSON" && len(args) == 1:
			var v any
			if err := json.Unmarshal([]byte(str(args[0])), &v); err != nil {
				return nil, fmt.Errorf("fromJSON(%q): %w", str(args[0]), err)
			}
			return v, nil
		}
		return nil, fmt.Errorf("no function %s with %d arguments here", t, len(args))
	}
	return p.lookup(t)
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	case []any, map[string]any:
		return true
	}
	return false
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
