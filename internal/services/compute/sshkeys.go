package compute

import (
	"crypto/rsa"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"gpugraph/internal/lib/apierr"
)

// The bounds of a create's sshPublicKeys (docs/decisions/0044-vm-access-and-console.md).
const (
	// MaxSSHKeys is how many keys one VM takes.
	MaxSSHKeys = 16
	// MaxSSHKeyLen bounds one entry in bytes: an ssh-rsa key of 16,384
	// bits (OpenSSH's largest) is about 2,800 bytes with its type, the
	// rest is room for a comment.
	MaxSSHKeyLen = 8192
	// minRSABits is the smallest RSA modulus taken, as OpenSSH since 9.x
	// refuses smaller ones (RequiredRSASize).
	minRSABits = 2048
)

// sshKeyTypes are the key types an entry may be: what cloud-init writes
// into authorized_keys and current OpenSSH accepts by default. ssh-dss
// (off by default since OpenSSH 7.0) and certificates (which authorize
// through a cert-authority line, not a key of their own) are not.
var sshKeyTypes = []string{
	ssh.KeyAlgoED25519,
	ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521,
	ssh.KeyAlgoRSA,
	ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256,
}

// checkSSHKeys checks a create's sshPublicKeys: at most MaxSSHKeys
// entries, each one OpenSSH public key as authorized_keys writes it
// ("type base64 [comment]"), of a type of sshKeyTypes, an RSA key of at
// least minRSABits, no options, one line, no key twice. A refusal is a
// 400 naming the entry by its index and what is wrong, never echoing the
// entry: it is what the caller sent, and a log or proxy keeping the error
// need not keep it. The keys are answered as given.
func checkSSHKeys(keys []string) ([]string, error) {
	if len(keys) > MaxSSHKeys {
		return nil, apierr.BadRequest("sshPublicKeys holds %d keys; a VM takes at most %d", len(keys), MaxSSHKeys)
	}
	seen := make(map[string]int, len(keys))
	for i, k := range keys {
		fp, err := checkSSHKey(k)
		if err != nil {
			return nil, apierr.BadRequest("sshPublicKeys[%d] %s", i, err.Error())
		}
		if j, dup := seen[fp]; dup {
			return nil, apierr.BadRequest("sshPublicKeys[%d] is the same key as sshPublicKeys[%d]", i, j)
		}
		seen[fp] = i
	}
	return slices.Clone(keys), nil
}

// keyProblem is why one entry is refused, worded to follow its name.
type keyProblem string

func (p keyProblem) Error() string { return string(p) }

// checkSSHKey checks one entry and answers its SHA256 fingerprint.
func checkSSHKey(k string) (string, error) {
	switch {
	case k == "":
		return "", keyProblem("is empty: give an OpenSSH public key, such as the line of ~/.ssh/id_ed25519.pub")
	case len(k) > MaxSSHKeyLen:
		return "", keyProblem("is longer than " + strconv.Itoa(MaxSSHKeyLen) + " bytes")
	case !utf8.ValidString(k):
		return "", keyProblem("is not valid UTF-8")
	case strings.ContainsAny(k, "\r\n"):
		return "", keyProblem("holds a line break: one key per entry, one line each")
	case strings.TrimSpace(k) != k:
		return "", keyProblem("starts or ends with spaces")
	}
	for _, r := range k {
		if unicode.IsControl(r) && r != '\t' {
			return "", keyProblem("holds a control character")
		}
	}
	typ, _, _ := strings.Cut(strings.ReplaceAll(k, "\t", " "), " ")
	if !slices.Contains(sshKeyTypes, typ) {
		// Options before the key (from="…", command="…") would land here
		// too: they are the node's to decide, never the tenant's.
		return "", keyProblem("does not start with a key type this platform takes (" + strings.Join(sshKeyTypes, ", ") +
			"): an OpenSSH public key is \"type base64 [comment]\", with no options before it")
	}
	pub, _, options, rest, err := ssh.ParseAuthorizedKey([]byte(k))
	switch {
	case err != nil:
		return "", keyProblem("is not a valid " + typ + " public key: its base64 part does not decode to one")
	case len(options) > 0:
		return "", keyProblem("carries options; give the key alone")
	case len(rest) > 0:
		return "", keyProblem("holds more than one key")
	case pub.Type() != typ:
		return "", keyProblem("names type " + typ + " but holds a " + pub.Type() + " key")
	}
	if typ == ssh.KeyAlgoRSA {
		ck, ok := pub.(ssh.CryptoPublicKey)
		rk, isRSA := (*rsa.PublicKey)(nil), false
		if ok {
			rk, isRSA = ck.CryptoPublicKey().(*rsa.PublicKey)
		}
		if !isRSA {
			return "", keyProblem("is not a valid ssh-rsa public key")
		}
		if bits := rk.N.BitLen(); bits < minRSABits {
			return "", keyProblem("is an ssh-rsa key of " + strconv.Itoa(bits) + " bits; at least " + strconv.Itoa(minRSABits) + " are needed")
		}
	}
	return ssh.FingerprintSHA256(pub), nil
}
