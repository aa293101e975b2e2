package registryhost

import "testing"

func TestOfLoopbackAndPlainHTTP(t *testing.T) {
	for ref, want := range map[string]struct {
		host            string
		loopback, plain bool
	}{
		"localhost:5001/dra/td:1":    {"localhost:5001", true, true},
		"localhost/td:1":             {"localhost", true, true},
		"127.1.2.3:5001/td:1":        {"127.1.2.3:5001", true, true},
		"[::1]:5001/td:1":            {"[::1]:5001", true, true},
		"10.1.2.3:5000/td:1":         {"10.1.2.3:5000", false, true},
		"192.168.1.10:5000/td:1":     {"192.168.1.10:5000", false, true},
		"[fd00::1]:5000/td:1":        {"[fd00::1]:5000", false, true},
		"172.32.0.1:5000/td:1":       {"172.32.0.1:5000", false, false},
		"registry.example.com/td:1":  {"registry.example.com", false, false},
		"localhost.example.com/td:1": {"localhost.example.com", false, false},
		"dra/td:1":                   {"", false, false},
		"kind-e2e/testdriver:abc":    {"", false, false},
	} {
		host := Of(ref)
		if host != want.host || Loopback(host) != want.loopback || PlainHTTP(host) != want.plain {
			t.Errorf("%s: host %q loopback %t plain HTTP %t, want %+v", ref, host, Loopback(host), PlainHTTP(host), want)
		}
	}
}
