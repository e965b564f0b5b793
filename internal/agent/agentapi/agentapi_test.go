package agentapi

import "testing"

func TestSharesGPU(t *testing.T) {
	for _, c := range []struct {
		a, b []string
		want bool
	}{
		{[]string{"GPU-a", "GPU-b"}, []string{"GPU-c", "GPU-b"}, true},
		{[]string{"GPU-a"}, []string{"GPU-a"}, true},
		{[]string{"GPU-a", "GPU-b"}, []string{"GPU-c", "GPU-d"}, false},
		{nil, []string{"GPU-a"}, false},
		{[]string{"GPU-a"}, nil, false},
		{nil, nil, false},
		// UUIDs are compared as the agent reads them from NVML: exactly.
		{[]string{"GPU-A"}, []string{"GPU-a"}, false},
	} {
		if got := SharesGPU(c.a, c.b); got != c.want {
			t.Errorf("SharesGPU(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := SharesGPU(c.b, c.a); got != c.want {
			t.Errorf("SharesGPU(%q, %q) = %v, want %v (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

// The two secrets' prefixes tell them apart from each other and from API
// keys at a glance: neither is a prefix of the other.
func TestSecretPrefixesDiffer(t *testing.T) {
	if BootstrapTokenPrefix == CredentialPrefix || len(BootstrapTokenPrefix) < 4 || len(CredentialPrefix) < 4 {
		t.Errorf("prefixes %q and %q", BootstrapTokenPrefix, CredentialPrefix)
	}
}
