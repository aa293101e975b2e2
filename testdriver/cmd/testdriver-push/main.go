// SPDX-License-Identifier: Apache-2.0

// Command testdriver-push builds the test driver's image and pushes it to a
// registry; its last line is the pushed reference, pinned by digest, for
// make e2e TESTDRIVER_IMAGE=.
//
//	go run ./testdriver/cmd/testdriver-push --registry localhost:5001/dra
//
// Bad input exits 2 and a failed build or push exits 1, each with one line
// on stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kep5018/adminaccess-conformance/testdriver/image"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

func main() {
	fs := flag.NewFlagSet("testdriver-push", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	registry := fs.String("registry", "", "registry and path to push to, such as localhost:5001/dra (REGISTRY)")
	out := fs.String("out", "_output/testdriver", "output folder")
	switch err := fs.Parse(os.Args[1:]); {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(os.Stdout)
		fmt.Println("usage: testdriver-push --registry host[:port]/path [--out folder]")
		fs.PrintDefaults()
		return
	case err != nil:
		fail(2, err)
	case fs.NArg() > 0:
		fail(2, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case *registry == "":
		fail(2, errors.New("give --registry host[:port]/path, such as localhost:5001/dra (make testdriver-push REGISTRY=...)"))
	}
	// Refuse a bad REGISTRY before spending a build on it.
	if _, err := push.Reference(*registry, image.Repository+":0"); err != nil {
		fail(2, err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	built, err := image.Build(".", *out)
	if err != nil {
		fail(1, err)
	}
	ref, err := push.Reference(*registry, built.Tag)
	if err != nil {
		fail(2, err)
	}
	pinned, err := push.Push(ctx, built.Archive, built.Tag, ref)
	if err != nil {
		fail(1, err)
	}
	fmt.Println(pinned)
}

// fail prints err on one line of stderr and exits with code.
func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "testdriver-push:", err)
	os.Exit(code)
}
