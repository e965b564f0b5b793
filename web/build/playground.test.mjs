// Unit tests of the playground's own modules, run by `node --test` (the Go
// test TestPlaygroundModules runs them when node is installed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { scrubStored, strippingStorage, withoutHeaders } from './storage.mjs';
import { authFor, explainUnauthenticated, headersAuthorization, unauthenticatedHelp } from './auth.mjs';

// fakeStorage is the part of the Web Storage API the modules use.
function fakeStorage(entries = {}) {
  const m = new Map(Object.entries(entries));
  return {
    map: m,
    get length() { return m.size; },
    key(i) { return [...m.keys()][i] ?? null; },
    getItem(k) { return m.has(k) ? m.get(k) : null; },
    setItem(k, v) { m.set(k, String(v)); },
    removeItem(k) { m.delete(k); },
  };
}

const secret = 'Bearer acme-operator';

test('history, tabs and favourites reach localStorage without headers', () => {
  const ls = fakeStorage();
  const s = strippingStorage(ls);
  const queries = JSON.stringify({ queries: [{ query: '{ vms { total } }', headers: JSON.stringify({ Authorization: secret }) }] });
  const tabs = JSON.stringify({ activeTabIndex: 0, tabs: [{ id: 't', query: '{a}', headers: `{"Authorization":"${secret}"}`, nested: { headers: 'x' } }] });
  s.setItem('graphiql:queries', queries);
  s.setItem('graphiql:tabState', tabs);
  s.setItem('graphiql:headers', `{"Authorization":"${secret}"}`);
  s.setItem('graphiql:theme', 'dark');

  assert.equal(ls.getItem('graphiql:headers'), null);
  assert.deepEqual(JSON.parse(ls.getItem('graphiql:queries')), { queries: [{ query: '{ vms { total } }' }] });
  assert.deepEqual(JSON.parse(ls.getItem('graphiql:tabState')), { activeTabIndex: 0, tabs: [{ id: 't', query: '{a}', nested: {} }] });
  assert.equal(ls.getItem('graphiql:theme'), 'dark');
  for (const v of ls.map.values()) assert.ok(!v.includes('acme-operator'), v);

  // The page itself reads back what it wrote, headers included.
  assert.equal(s.getItem('graphiql:queries'), queries);
  assert.equal(s.getItem('graphiql:headers'), `{"Authorization":"${secret}"}`);
  assert.equal(s.length, 4);
  s.clear();
  assert.equal(s.length, 0);
  assert.equal(ls.map.size, 0);
});

test('a fresh page reads what an earlier one kept', () => {
  const ls = fakeStorage({ 'graphiql:queries': '{"queries":[{"query":"{a}"}]}', other: 'x' });
  const s = strippingStorage(ls);
  assert.equal(s.getItem('graphiql:queries'), '{"queries":[{"query":"{a}"}]}');
  assert.equal(s.length, 1);
});

test('entries an older page left are scrubbed', () => {
  const ls = fakeStorage({
    'graphiql:queries': JSON.stringify({ queries: [{ query: '{a}', headers: secret }] }),
    'graphiql:headers': secret,
    'graphiql:weird': `not json ${secret}`,
    'graphiql:plain': 'not json',
    unrelated: secret,
  });
  scrubStored(ls);
  assert.deepEqual(Object.fromEntries(ls.map), {
    'graphiql:queries': '{"queries":[{"query":"{a}"}]}',
    'graphiql:plain': 'not json',
    unrelated: secret,
  });
});

test('withoutHeaders keeps everything but headers', () => {
  assert.equal(withoutHeaders('[1,{"a":{"headers":1,"b":[{"headers":2}]}}]'), '[1,{"a":{"b":[{}]}}]');
  assert.equal(withoutHeaders('42'), '42');
});

test('the Authorization sent: headers editor first, then the key field', () => {
  assert.equal(authFor('', '{}'), '');
  assert.equal(authFor('acme-reader', '{}'), 'Bearer acme-reader');
  assert.equal(authFor(' Bearer acme-reader ', ''), 'Bearer acme-reader');
  assert.equal(authFor('acme-reader', '{"authorization":"Bearer acme-operator"}'), 'Bearer acme-operator');
  assert.equal(authFor('acme-reader', '{"Authorization":"Bearer "}'), 'Bearer acme-reader');
  assert.equal(authFor('acme-reader', '{not json'), 'Bearer acme-reader');
  assert.equal(headersAuthorization({ AUTHORIZATION: 'Bearer k' }), 'Bearer k');
  assert.equal(headersAuthorization(null), '');
});

test('a 401 becomes a sentence that says what to do', () => {
  let said = '';
  const refused = { data: null, errors: [{ message: 'missing API key', extensions: { code: 'UNAUTHENTICATED', status: 401 } }] };
  const got = explainUnauthenticated(refused, (m) => { said = m; });
  assert.equal(got.errors[0].message, unauthenticatedHelp);
  assert.equal(got.errors[0].extensions.code, 'UNAUTHENTICATED');
  assert.equal(said, unauthenticatedHelp);
  assert.match(unauthenticatedHelp, /API key.*field above.*acme-reader/);

  const forbidden = { errors: [{ message: 'no', extensions: { code: 'FORBIDDEN' } }] };
  assert.equal(explainUnauthenticated(forbidden, () => assert.fail()), forbidden);
  const ok = { data: { a: 1 } };
  assert.equal(explainUnauthenticated(ok), ok);
});

test('the precompressed assets decode to the assets', () => {
  for (const name of ['graphiql.js', 'graphiql.css']) {
    const body = readFileSync(new URL(`../dist/${name}`, import.meta.url));
    assert.ok(brotliDecompressSync(readFileSync(new URL(`../dist/${name}.br`, import.meta.url))).equals(body), `${name}.br`);
    assert.ok(gunzipSync(readFileSync(new URL(`../dist/${name}.gz`, import.meta.url))).equals(body), `${name}.gz`);
  }
});
