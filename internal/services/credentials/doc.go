// Package credentials holds the rules of credential administration: API
// keys and applications (Run:ai's client credentials) of an organization,
// created with a secret shown once, listed without it, revoked; new
// organizations; and the exchange of an application's credentials for an
// access token (POST /api/v1/token).
//
// Who may do what: a caller holding auth.Admin administers its own
// organization's credentials (another organization's do not exist for it)
// and grants only permissions it holds itself. A caller holding
// auth.NodesAdmin as well (the platform operator) reaches every
// organization and creates organizations. The command line
// (gpugraph keys|apps|orgs) acts as auth.SystemCaller: whoever reaches the
// database administers it.
//
// Secrets are 32 random bytes; like API keys and node credentials they are
// stored as SHA-256 hashes. A slow hash (bcrypt, argon2) guards guessable
// passwords; a 256-bit random secret cannot be guessed, and a fast hash
// keeps the lookup per request cheap.
package credentials
