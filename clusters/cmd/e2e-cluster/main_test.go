package main

import "testing"

// The upgrade spec's image is built only when the filter runs that spec, and
// filters match labels as Ginkgo does (without regard to case).
func TestUpgradeSelected(t *testing.T) {
	for filter, want := range map[string]bool{
		"": true, "upgrade": true, "disruptive": true, "Disruptive && upgrade": true, "serial": true,
		"authz": false, "!disruptive": false, "!Serial": false, "metrics && !disruptive": false, "upgrade && !serial": false,
	} {
		got, err := upgradeSelected(filter)
		if err != nil || got != want {
			t.Errorf("upgradeSelected(%q) = %t, %v; want %t", filter, got, err, want)
		}
	}
	if _, err := upgradeSelected("authz &&"); err == nil {
		t.Error("a filter that does not parse was taken")
	}
}
