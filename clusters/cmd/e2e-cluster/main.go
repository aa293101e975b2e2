// SPDX-License-Identifier: Apache-2.0

// Command e2e-cluster builds node images and creates, switches and deletes the
// suite's kind clusters. The runner (e2e/run, behind make) and people call
// it; the Ginkgo suites use the same packages from Go. Its commands are one
// table (commands): each registers only its own flags, and the usage text
// is written from the table.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kep5018/adminaccess-conformance/clusters/registryhost"
)

// usageError marks bad input: one line, exit 2.
type usageError struct{ error }

// command is one subcommand: flags registers its flags, and only its, on
// a flag set of its own, and returns what runs it once they are parsed; a
// flag of another command is then refused as any unknown flag is.
type command struct {
	name     string
	synopsis string // its flags, as the usage text shows them
	about    string // what it does, in one line ("" where the flags say it)
	flags    func(fs *flag.FlagSet) func(ctx context.Context) error
}

// commands are e2e-cluster's commands, in the order the usage text lists
// them.
var commands = []command{
	{"node-image", "--release 1.35 [--source auto|pull|build|present|IMAGE] [--ref-file FILE]",
		"get or build the release's node image (its reference also into --ref-file)", nodeImageCmd},
	{"upgrade-bits", "--release 1.35 [--source auto|pull|build|present|IMAGE] [--status FILE] [--ref-file FILE]",
		"the next release's kubelet and control-plane images for the upgrade spec", upgradeBitsCmd},
	{"up", "--release 1.35 --profile default --name NAME [--features SET] [--kubeconfig FILE] [--registry localhost:5001]", "", upCmd},
	{"down", "--name NAME", "", downCmd},
	{"toggle", "--name NAME --release 1.35 --component kube-controller-manager --admin-access=false", "", toggleCmd},
	{"switch-release", "--name NAME --release 1.35 --to 1.36", "", switchReleaseCmd},
	{"export-logs", "--name NAME --dir DIR", "", exportLogsCmd},
	{"load", "--name NAME --archive FILE", "an image archive into every node", loadCmd},
	{"profiles", "--release 1.36", "the gate profiles the release can run", profilesCmd},
	{"features", "--release 1.36", "the DRA feature sets the release lists", featuresCmd},
}

// usage is the usage text, from the table.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: e2e-cluster COMMAND [flags]\n\nBuilds node images and creates, switches and deletes the suite's kind clusters.\n\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-15s %s\n", c.name, c.synopsis)
		if c.about != "" {
			fmt.Fprintf(&b, "  %-15s %s\n", "", c.about)
		}
	}
	b.WriteString("\n\"e2e-cluster COMMAND -h\" lists a command's flags.\n")
	return b.String()
}

func names() string {
	var n []string
	for _, c := range commands {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "e2e-cluster:", err)
	var u usageError
	if errors.As(err, &u) {
		os.Exit(2)
	}
	os.Exit(1)
}

// run runs the command args name with its flags; help goes to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("missing command: %s (e2e-cluster --help says more)", names())}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage())
		return nil
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		// The flag package's own words about a bad flag are dropped: the
		// refusal is one line, and -h lists the flags.
		var help bytes.Buffer
		fs.SetOutput(&help)
		fs.Usage = func() {
			fmt.Fprintf(&help, "usage: e2e-cluster %s %s\n", c.name, c.synopsis)
			if c.about != "" {
				fmt.Fprintf(&help, "%s\n", c.about)
			}
			fmt.Fprintf(&help, "\nflags:\n")
			fs.PrintDefaults()
		}
		runCommand := c.flags(fs)
		if err := fs.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				_, err := stdout.Write(help.Bytes())
				return err
			}
			return usageError{fmt.Errorf("%s: %w (\"e2e-cluster %s -h\" lists its flags)", c.name, err, c.name)}
		}
		return runCommand(ctx)
	}
	return usageError{fmt.Errorf("unknown command %q: use %s", args[0], names())}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// plainHTTPRegistry is the host of up's --registry (a host, or a host and
// the path REGISTRY gives the pusher: "localhost:5001", "10.0.0.5:5000/dra"),
// read as the pusher reads REGISTRY, when the nodes are to reach it over
// plain HTTP; any other registry they reach over HTTPS as they are, and
// needs no flag.
func plainHTTPRegistry(registry string) (string, error) {
	host := registryhost.OfPrefix(registry)
	switch {
	case host == "":
		return "", fmt.Errorf("--registry %s: not a registry host (such as localhost:5001), with or without a path", registry)
	case !registryhost.PlainHTTP(host):
		return "", fmt.Errorf("--registry %s: only a registry on a loopback or private address is reached over plain HTTP; the nodes pull from any other over HTTPS as they are", registry)
	}
	return host, nil
}
