// Bundles the console into ../dist/console and writes a gzip and a brotli
// copy of each asset beside it, which package web serves by
// Accept-Encoding. Its output is the same bytes on every run.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const out = process.argv[2] ?? '../dist/console';
mkdirSync(out, { recursive: true });

const result = await esbuild.build({
  entryPoints: { console: 'src/main.tsx' },
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  outdir: out,
  metafile: true,
  logLevel: 'warning',
});

// graphql-js is codegen's: urql parses with its own small parser, and the
// generated documents import only graphql's types. One import of it by
// mistake would add some 40 KB compressed, so it fails the build.
const fromGraphQL = Object.keys(result.metafile.inputs).filter((p) => /(^|\/)node_modules\/graphql\//.test(p));
if (fromGraphQL.length) throw new Error(`graphql-js is in the bundle: ${fromGraphQL.join(', ')}`);

copyFileSync('index.html', `${out}/index.html`);
for (const name of ['console.js', 'console.css']) {
  const body = readFileSync(`${out}/${name}`);
  const gz = gzipSync(body, { level: 9 });
  const br = brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
  writeFileSync(`${out}/${name}.gz`, gz);
  writeFileSync(`${out}/${name}.br`, br);
  console.log(`${name}: ${body.length} bytes, gzip ${gz.length}, brotli ${br.length}`);
}
