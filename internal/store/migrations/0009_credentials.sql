-- Credentials an administrator manages without fixture files (credentials/):
-- API keys gain an id to name them by, a name, expiry, revocation and when
-- they were last used; applications are Run:ai's client credentials, traded
-- at POST /api/v1/token for a short-lived signed access token. Secrets are
-- 32 random bytes, stored as SHA-256 hashes as API keys are.

ALTER TABLE api_keys ADD COLUMN key_id {{text}};
ALTER TABLE api_keys ADD COLUMN name {{text}} NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at {{time}};
ALTER TABLE api_keys ADD COLUMN expires_at {{time}};
ALTER TABLE api_keys ADD COLUMN revoked_at {{time}};
-- A key's id is the first 12 hex digits of its hash: what the event log
-- already names it by ("user key:<id>").
UPDATE api_keys SET key_id = substr(token_hash, 1, 12) WHERE key_id IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_key_id ON api_keys (key_id);
CREATE INDEX IF NOT EXISTS api_keys_organization ON api_keys (organization_id);

CREATE TABLE IF NOT EXISTS applications (
  client_id        {{text}} PRIMARY KEY,
  secret_hash      {{text}} NOT NULL UNIQUE,
  organization_id  {{text}} NOT NULL REFERENCES organizations(id),
  name             {{text}} NOT NULL DEFAULT '',
  permissions      {{text}} NOT NULL,
  created_at       {{time}} NOT NULL,
  last_used_at     {{time}},
  expires_at       {{time}},
  revoked_at       {{time}}
);
CREATE INDEX IF NOT EXISTS applications_organization ON applications (organization_id);

-- The key access tokens are signed with when --token-signing-key is not
-- given: the first replica to start inserts one, every other reads it.
CREATE TABLE IF NOT EXISTS signing_keys (
  id          {{text}} PRIMARY KEY,
  secret      {{text}} NOT NULL,
  created_at  {{time}} NOT NULL
);
