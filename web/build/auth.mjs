// How the playground turns what the user typed into the Authorization
// header, and a refused request into a sentence that says what to do.

// headersAuthorization is the Authorization value in a headers object
// (any letter case), or '' when there is none worth sending.
export function headersAuthorization(headers) {
  if (!headers || typeof headers !== 'object') return '';
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === 'authorization' && typeof v === 'string' && v.replace(/^\s*bearer\s*/i, '') !== '') {
      return v;
    }
  }
  return '';
}

// authFor is the Authorization a request goes out with: the headers
// editor's, when it has one (the power user's way), else the key field's.
export function authFor(key, headersText) {
  let headers = null;
  try {
    headers = JSON.parse(headersText || '{}');
  } catch {
    // GraphiQL itself reports invalid headers JSON.
  }
  const fromHeaders = headersAuthorization(headers);
  if (fromHeaders) return fromHeaders;
  const k = (key || '').trim().replace(/^bearer\s+/i, '');
  return k ? `Bearer ${k}` : '';
}

export const unauthenticatedHelp =
  'No API key, or one the server does not know (401): type a key in the “API key” field above. ' +
  'With the demo data set use acme-reader (read-only) or acme-operator; the server prints the ' +
  'demo keys at every start and the gpugraph README lists them.';

// explainUnauthenticated replaces the message of an UNAUTHENTICATED error
// with unauthenticatedHelp and reports it through onAuthError; any other
// result passes through untouched (streams included).
export function explainUnauthenticated(result, onAuthError) {
  if (!result || typeof result !== 'object' || !Array.isArray(result.errors)) return result;
  let refused = false;
  const errors = result.errors.map((e) => {
    if (e && e.extensions && e.extensions.code === 'UNAUTHENTICATED') {
      refused = true;
      return { ...e, message: unauthenticatedHelp };
    }
    return e;
  });
  if (!refused) return result;
  if (onAuthError) onAuthError(unauthenticatedHelp);
  return { ...result, errors };
}
