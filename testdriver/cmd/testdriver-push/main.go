// Command testdriver-push builds the test driver's image and pushes it to a
// registry; its last line is the pushed reference, pinned by digest, for
// make e2e TESTDRIVER_IMAGE=.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kep5018/adminaccess-conformance/testdriver/image"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

func main() {
	registry := flag.String("registry", "", "registry and path to push to, such as localhost:5001/dra (REGISTRY)")
	out := flag.String("out", "_output/testdriver", "output folder")
	flag.Parse()
	if *registry == "" {
		fmt.Fprintln(os.Stderr, "testdriver-push: give --registry (make testdriver-push REGISTRY=host/path)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	built, err := image.Build(".", *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdriver-push:", err)
		os.Exit(1)
	}
	ref, err := push.Reference(*registry, built.Tag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdriver-push:", err)
		os.Exit(2)
	}
	pinned, err := push.Push(ctx, built.Archive, built.Tag, ref)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdriver-push:", err)
		os.Exit(1)
	}
	fmt.Println(pinned)
}
