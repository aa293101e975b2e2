// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The output container's side of the Job (e2e/suitejob): on a cluster
// reached only through its API, results in an emptyDir leave the pod by an
// exec into a container that still runs, which the suite's is not once it
// has ended. This one holds them until they were fetched.

// released is the file "release" writes in the results folder: the results
// were fetched, the output container may end (and with it the Job).
const released = ".released"

// results runs one of the output container's commands on the folder dir.
func results(command, dir string) error {
	switch command {
	case "hold":
		return hold(dir)
	case "pack":
		// results.tar.gz is the same files again, for Sonobuoy.
		return pack(dir, os.Stdout, func(rel string) bool { return rel == released || rel == "results.tar.gz" })
	case "release":
		return os.WriteFile(filepath.Join(dir, released), nil, 0o644)
	}
	return fmt.Errorf("unknown command %q: hold, pack or release, each with the results folder", command)
}

// hold waits until the results were released, or until the pod is told to
// stop (a deleted namespace, the Job's deadline). A look every two seconds
// costs nothing, and the Job ends within two seconds of the fetch.
func hold(dir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Printf("incluster: holding the results in %s until they are fetched (kubectl exec … -c output -- /incluster pack %s > results.tar.gz, then … /incluster release %s)\n", dir, dir, dir)
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(filepath.Join(dir, released))
		return err == nil, nil
	})
	if errors.Is(err, context.Canceled) {
		fmt.Println("incluster: told to stop before the results were released")
		return nil
	}
	fmt.Println("incluster: the results were fetched")
	return err
}
