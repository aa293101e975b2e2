// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestIPv4Gateway(t *testing.T) {
	for in, want := range map[string]string{
		"172.18.0.1 fc00:f853:ccd:e793::1 \n": "172.18.0.1",
		"fc00:f853:ccd:e793::1 172.19.0.1 ":   "172.19.0.1",
		"fc00:f853:ccd:e793::1 ":              "",
		"":                                    "",
	} {
		if got := ipv4Gateway(in); got != want {
			t.Errorf("ipv4Gateway(%q) = %q, want %q", in, got, want)
		}
	}
}

// The handler answers the registry API's version check, which is what
// make registry-up waits for.
func TestRegistryAnswersV2(t *testing.T) {
	srv := httptest.NewServer(registryHandler(context.Background(), t.TempDir()))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/: %s, want 200", resp.Status)
	}
}
