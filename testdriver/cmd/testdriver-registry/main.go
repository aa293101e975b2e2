// SPDX-License-Identifier: Apache-2.0

// Command testdriver-registry serves the OCI registry that make registry-up
// starts for the test driver's image: the CNCF distribution registry's
// handler (a Go module, so nothing is pulled), unauthenticated and over plain
// HTTP. Because it has no authentication it listens only where it must: on
// this machine's loopback, where make testdriver-push sends the image, and on
// the kind network's gateway, where the nodes of a kind cluster pull it
// (their containerd maps the loopback name there). That network exists only
// once a cluster was made, so the second address is added when it appears.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem" // the storage it uses
	gorillahandlers "github.com/gorilla/handlers"
)

func main() {
	port := flag.Int("port", 5001, "port on every address it listens on")
	root := flag.String("root", "_output/registry/data", "folder of the registry's data")
	network := flag.String("network", "kind", "Docker network whose gateway the nodes reach this machine at")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	handler := registryHandler(ctx, *root)
	errs := make(chan error, 2)
	serve := func(addr string) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "testdriver-registry: listening on %s\n", ln.Addr())
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second}
		go func() { <-ctx.Done(); _ = srv.Close() }()
		go func() {
			if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
				errs <- err
			}
		}()
		return nil
	}
	if err := serve(net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))); err != nil {
		fmt.Fprintf(os.Stderr, "testdriver-registry: %v\n", err)
		os.Exit(1)
	}
	go func() {
		gw := waitForGateway(ctx, *network)
		if gw == "" {
			return
		}
		if err := serve(net.JoinHostPort(gw, strconv.Itoa(*port))); err != nil {
			errs <- fmt.Errorf("on the %s network's gateway: %w", *network, err)
		}
	}()
	select {
	case <-ctx.Done():
	case err := <-errs:
		fmt.Fprintf(os.Stderr, "testdriver-registry: %v\n", err)
		os.Exit(1)
	}
}

// registryHandler is distribution's registry on a filesystem folder, with
// an access log on stdout (hack/registry-e2e.sh counts the nodes' pulls in
// it).
func registryHandler(ctx context.Context, root string) http.Handler {
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{
			"filesystem": configuration.Parameters{"rootdirectory": root},
			"delete":     configuration.Parameters{"enabled": true},
		},
	}
	return gorillahandlers.CombinedLoggingHandler(os.Stdout, handlers.NewApp(ctx, cfg))
}

// waitForGateway polls Docker until the network exists and returns its IPv4
// gateway; "" when ctx ends first.
func waitForGateway(ctx context.Context, network string) string {
	for {
		out, err := exec.CommandContext(ctx, "docker", "network", "inspect", network, "-f", "{{range .IPAM.Config}}{{.Gateway}} {{end}}").Output()
		if err == nil {
			if gw := ipv4Gateway(string(out)); gw != "" {
				return gw
			}
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(2 * time.Second):
		}
	}
}

// ipv4Gateway picks the IPv4 address from docker network inspect's list of
// gateways (kind's network has an IPv6 one too).
func ipv4Gateway(list string) string {
	for _, f := range strings.Fields(list) {
		if ip := net.ParseIP(f); ip != nil && ip.To4() != nil {
			return f
		}
	}
	return ""
}
