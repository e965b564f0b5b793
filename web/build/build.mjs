// Bundles the playground into ../dist and writes a gzip and a brotli copy of
// each asset beside it, which package web serves by Accept-Encoding.
import * as esbuild from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

// GraphiQL's stylesheet embeds 34 fonts (Roboto and Fira Code in every
// script subset and style). The page is English and the editor shows code,
// so only the Latin subsets of the faces GraphiQL draws with are kept;
// another script falls back to the system's sans-serif or monospace.
const keptFaces = new Set(['Roboto/400/normal', 'Roboto/500/normal', 'Roboto/400/italic', 'Fira Code/400/normal']);
const latin = 'U+0000-00FF';

function face(rule, prop) {
  const m = rule.match(new RegExp(`${prop}\\s*:\\s*([^;}]*)`));
  return m ? m[1].trim().replace(/["']/g, '') : '';
}

export function dropUnusedFonts(css) {
  let kept = 0;
  let dropped = 0;
  const out = css.replace(/@font-face\s*\{[^}]*\}/g, (rule) => {
    const id = `${face(rule, 'font-family')}/${face(rule, 'font-weight') || '400'}/${face(rule, 'font-style') || 'normal'}`;
    if (keptFaces.has(id) && face(rule, 'unicode-range').startsWith(latin)) {
      kept++;
      return rule;
    }
    dropped++;
    return '';
  });
  if (kept !== keptFaces.size) {
    throw new Error(`kept ${kept} font faces, want ${keptFaces.size}: GraphiQL's stylesheet changed`);
  }
  console.log(`fonts: kept ${kept}, dropped ${dropped}`);
  return out;
}

const fontPlugin = {
  name: 'drop-unused-fonts',
  setup(build) {
    build.onLoad({ filter: /graphiql[\\/]dist[\\/]style\.css$/ }, (args) => ({
      contents: dropUnusedFonts(readFileSync(args.path, 'utf8')),
      loader: 'css',
    }));
  },
};

// graphql-js takes its production path only when it sees a Node-style
// process object, so globalThis.process is defined to drop its development
// checks.
await esbuild.build({
  entryPoints: ['main.jsx'],
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"', 'globalThis.process': 'true' },
  legalComments: 'none',
  outfile: '../dist/graphiql.js',
  plugins: [fontPlugin],
  logLevel: 'warning',
});

for (const name of ['graphiql.js', 'graphiql.css']) {
  const body = readFileSync(`../dist/${name}`);
  const gz = gzipSync(body, { level: 9 });
  const br = brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
  writeFileSync(`../dist/${name}.gz`, gz);
  writeFileSync(`../dist/${name}.br`, br);
  console.log(`${name}: ${body.length} bytes, gzip ${gz.length}, brotli ${br.length}`);
}
