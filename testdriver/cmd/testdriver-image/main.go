// SPDX-License-Identifier: Apache-2.0

// Command testdriver-image writes the test driver's image archive and prints
// "<tag> <archive>" for the Makefile.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

func main() {
	out := flag.String("out", "_output/testdriver", "output folder")
	flag.Parse()
	built, err := image.Build(".", *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdriver-image:", err)
		os.Exit(1)
	}
	fmt.Println(built.Tag, built.Archive)
}
