// SPDX-License-Identifier: Apache-2.0

// Command incluster is the entrypoint of the suite's image (make
// suite-image): it runs the suite from inside the cluster it tests, in
// existing-cluster mode, as a Job or a Sonobuoy plugin. It writes a
// kubeconfig from the pod's ServiceAccount (the suite reaches an existing
// cluster only through a kubeconfig), resolves the run from the variables
// make e2e would read and writes it beside the reports (run.json), runs the
// compiled suite with it, writes the sign-off beside the reports, and
// tells Sonobuoy where the results are (its done file).
//
// Its variables are make e2e's that the Job carries (e2e/variables' table): K8S_VERSION
// (default: the server's minor), FEATURES, PROFILE, LABELS, FOCUS, SKIP,
// TIMEOUT, TESTDRIVER_IMAGE (the bundled driver's image, which the nodes
// must be able to pull or hold), or DRIVER, DEVICE_CLASS, DRIVER_NAMESPACE,
// WORKLOAD_IMAGE and ADMIN_CHECK for a driver of the user's own;
// CLUSTER_NAME (the name the provenance gives the cluster); RESULTS_DIR
// (default /tmp/sonobuoy/results, where Sonobuoy collects).
//
// The same binary is the Job's output container (e2e/suitejob): "hold DIR"
// keeps the results until "release DIR" says they were fetched, and "pack
// DIR" writes them to standard output as a gzipped tar, for a kubectl exec
// (or make incluster-e2e) that reaches the pod only through the API.
package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
	"github.com/kep5018/adminaccess-conformance/e2e/suitejob"
	"github.com/kep5018/adminaccess-conformance/e2e/variables"
)

// The suite's files inside the image (suite-image puts them there).
const (
	suiteBinary = "/e2e.test"
	tokenDir    = "/var/run/secrets/kubernetes.io/serviceaccount"
)

func main() {
	if len(os.Args) == 3 {
		if err := results(os.Args[1], os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "incluster:", err)
			os.Exit(1)
		}
		return
	}
	code, err := runAll(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "incluster:", err)
		if code == 0 {
			code = 2
		}
	}
	os.Exit(code)
}

// runAll runs the suite once, or once per class of DEVICE_CLASS=a,b, then
// writes the sign-off and tells Sonobuoy; the int is the exit code.
func runAll(ctx context.Context) (int, error) {
	// The image has no base, so no /tmp until it is made; the suite and
	// its framework write there too.
	if err := os.MkdirAll(os.TempDir(), 0o1777); err != nil {
		return 2, err
	}
	results := envOr("RESULTS_DIR", "/tmp/sonobuoy/results")
	if os.Getenv("TESTDRIVER_IMAGE") == "" && os.Getenv("DRIVER") == "" {
		return 2, errors.New("give TESTDRIVER_IMAGE (the bundled driver's image, which the nodes can pull or hold) or DRIVER and DEVICE_CLASS (a driver of your own): inside the cluster nothing can be built")
	}
	if os.Getenv("DRIVER") != "" && os.Getenv("WORKLOAD_IMAGE") == "" && os.Getenv("TESTDRIVER_IMAGE") == "" {
		return 2, errors.New("DRIVER: give WORKLOAD_IMAGE (or TESTDRIVER_IMAGE, whose workload the pods then run): inside the cluster nothing can be built")
	}
	kubeconfig := filepath.Join(os.TempDir(), "incluster-kubeconfig")
	cfg, err := writeKubeconfig(kubeconfig)
	if err != nil {
		return 2, err
	}
	release := os.Getenv("K8S_VERSION")
	if release == "" {
		if release, err = serverMinor(cfg); err != nil {
			return 2, err
		}
	}
	code := 0
	for _, cr := range classRuns(results, release, os.Getenv("DEVICE_CLASS")) {
		file, err := writeRun(release, kubeconfig, cr)
		if err != nil {
			// Refused as the suite refused it before run.json: said in the
			// class's e2e.log, and the sign-off and Sonobuoy's done file are
			// still written, so that Sonobuoy does not wait out its timeout.
			fmt.Fprintln(os.Stderr, "incluster:", err)
			if werr := errors.Join(os.MkdirAll(cr.artifacts, 0o755), os.WriteFile(filepath.Join(cr.artifacts, "e2e.log"), []byte("incluster: "+err.Error()+"\n"), 0o644)); werr != nil {
				return 2, errors.Join(err, werr)
			}
			code = max(code, 2)
			continue
		}
		c, err := runSuite(ctx, suiteArgs(file, cr.artifacts), cr.artifacts)
		if err != nil {
			return 2, err
		}
		code = max(code, c)
	}
	if err := writeSignoff(results); err != nil {
		fmt.Fprintln(os.Stderr, "incluster: sign-off:", err)
		code = max(code, 1)
	}
	if err := tellSonobuoy(results); err != nil {
		return max(code, 1), err
	}
	return code, nil
}

// writeRun resolves one class's run and writes its run.json, whose path
// the suite is given.
func writeRun(release, kubeconfig string, cr classRun) (string, error) {
	r, err := resolveRun(release, kubeconfig, cr.artifacts, cr.class)
	if err != nil {
		return "", err
	}
	return resolved.Write(cr.artifacts, r)
}

// classRun is one run of the suite: DEVICE_CLASS=a,b runs it once per
// class, each its own sign-off column, as make e2e does.
type classRun struct{ class, artifacts string }

func classRuns(results, release, classes string) []classRun {
	split := variables.SplitClasses(classes)
	if len(split) < 2 {
		return []classRun{{strings.Join(split, ""), filepath.Join(results, release)}}
	}
	var out []classRun
	for _, c := range split {
		out = append(out, classRun{c, filepath.Join(results, "classes", c, release)})
	}
	return out
}

// runSuite runs the compiled suite with args, its output also in
// artifacts/e2e.log, and returns its exit code.
func runSuite(ctx context.Context, args []string, artifacts string) (int, error) {
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		return 0, err
	}
	fmt.Printf("incluster: %s %s\n", suiteBinary, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, suiteBinary, args...)
	log, err := os.Create(filepath.Join(artifacts, "e2e.log"))
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stdout, log), io.MultiWriter(os.Stderr, log)
	// A suite ended by a signal (an OOM kill) is a failure, not the -1
	// ExitError reports, which max() would drop.
	var startErr error
	code := signoff.ExitCode(cmd.Run(), func(err error) { startErr = err })
	return code, startErr
}

// resolveRun is the class's run as make e2e would resolve it against an
// existing cluster, from the same variables (the Job's, e2e/variables' table).
// The release is the server's unless K8S_VERSION says, and the cluster is
// named as the kubeconfig names it.
func resolveRun(release, kubeconfig, artifacts, class string) (resolved.Run, error) {
	// The Job's variables only: the pod's environment may hold others'
	// names (KUBECONFIG, KEEP_CLUSTER) that make e2e would not have given
	// the suite here.
	get := func(name string) string {
		switch name {
		case "K8S_VERSION":
			return release
		case "KUBECONFIG":
			return kubeconfig
		case "DEVICE_CLASS":
			return class
		case "CLUSTER_NAME":
			return envOr("CLUSTER_NAME", inClusterName)
		case "UPGRADE":
			return "0"
		}
		if v, _ := variables.Lookup(name); v.Job {
			return v.From(os.Getenv)
		}
		return ""
	}
	return resolved.New(resolved.Inputs{Get: get, Root: "/", Output: os.TempDir(), Artifacts: artifacts})
}

// suiteArgs are the flags make e2e gives the suite: its resolved run
// (runFile), and Ginkgo's flags of the Job's variables, spelt for the
// compiled suite. One process: the Ginkgo CLI, which runs specs in
// parallel, is not in the image; so a run takes longer than make e2e's,
// and TIMEOUT's default here is 90m.
func suiteArgs(runFile, artifacts string) []string {
	get := func(name string) string {
		v, _ := variables.Lookup(name)
		if name == "TIMEOUT" {
			v.Default = "90m"
		}
		return v.From(os.Getenv)
	}
	job := func(v variables.Variable) bool { return v.Job }
	args := []string{
		"--run=" + runFile,
		"-ginkgo.junit-report=" + filepath.Join(artifacts, "junit.xml"),
		"-ginkgo.json-report=" + filepath.Join(artifacts, "ginkgo-report.json"),
		"-ginkgo.fail-on-empty", "-ginkgo.no-color",
	}
	return append(args, variables.GinkgoFlags(get, "-ginkgo.", job)...)
}

// inClusterName names the cluster in the kubeconfig and the provenance
// where CLUSTER_NAME does not (make incluster-e2e passes the user's
// kubeconfig's cluster).
const inClusterName = "in-cluster"

// writeKubeconfig writes the pod's in-cluster identity as a kubeconfig
// (its token file, so a refreshed token is read anew); its cluster is
// named as the provenance names it.
func writeKubeconfig(path string) (*rest.Config, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("not running in a pod with a ServiceAccount: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	name := envOr("CLUSTER_NAME", inClusterName)
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthority: filepath.Join(tokenDir, "ca.crt")}
	kc.AuthInfos["suite"] = &clientcmdapi.AuthInfo{TokenFile: filepath.Join(tokenDir, "token")}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: "suite"}
	kc.CurrentContext = name
	return cfg, clientcmd.WriteToFile(*kc, path)
}

// serverMinor is the release the cluster runs, "1.35" of "v1.35.4".
func serverMinor(cfg *rest.Config) (string, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("reading the cluster's version (give K8S_VERSION): %w", err)
	}
	return v.Major + "." + strings.TrimSuffix(v.Minor, "+"), nil
}

// writeSignoff writes signoff.md, signoff.html and signoff.json beside the
// runs' folders, from every report.json of the results (one per release
// and, with several classes, per class).
func writeSignoff(results string) error {
	m, err := suitejob.Signoff(results)
	if err != nil {
		return err
	}
	fmt.Printf("incluster: signoff: %s\n", m.Verdict())
	return m.Write(results)
}

// tellSonobuoy packs the results into results.tar.gz beside them (leaving
// out the archive itself) and writes its path into the done file
// Sonobuoy's worker waits for. Run as a plain Job, the same files are there
// for whoever collects them.
func tellSonobuoy(results string) error {
	final := filepath.Join(results, "results.tar.gz")
	f, err := os.Create(final)
	if err != nil {
		return err
	}
	if err := errors.Join(pack(results, f, func(rel string) bool { return rel == "results.tar.gz" }), f.Close()); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(results, "done"), []byte(final), 0o644)
}

// pack writes dir's regular files to w as a gzipped tar, paths relative to
// dir, leaving out those skip names (nil: none).
func pack(dir string, w io.Writer, skip func(rel string) bool) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if skip != nil && skip(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = rel
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	return errors.Join(err, tw.Close(), gz.Close())
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
