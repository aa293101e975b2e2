// SPDX-License-Identifier: Apache-2.0

// Command workload is the container the suite's pods run (no base image can be
// pulled here). By default it prints its DRA_ variables, one per line, and then
// waits to be stopped; `workload probe` checks cluster DNS and the API Service.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "probe" {
		if err := probe(); err != nil {
			fmt.Println("probe failed:", err)
			os.Exit(1)
		}
		return
	}
	for _, line := range contract.WorkloadOutput(os.Environ()) {
		fmt.Println(line)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}

// probe resolves kubernetes.default through cluster DNS and reads /version
// through the Service, with the pod's ServiceAccount credentials.
func probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, "kubernetes.default.svc.cluster.local")
	if err != nil {
		return fmt.Errorf("resolving kubernetes.default: %w", err)
	}
	fmt.Println("resolved kubernetes.default to", strings.Join(addrs, ","))
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
	ca, err := os.ReadFile(sa + "ca.crt")
	if err != nil {
		return err
	}
	token, err := os.ReadFile(sa + "token")
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://kubernetes.default.svc.cluster.local/version", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /version: %s: %s", resp.Status, body)
	}
	fmt.Printf("version: %s\n", strings.Join(strings.Fields(string(body)), " "))
	return nil
}
