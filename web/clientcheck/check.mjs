// Usage: node check.mjs <graphql URL> <API key>
//
// Reads the schema as a front-end toolchain does (graphql-js's
// introspection query, buildClientSchema), generates a TypeScript client
// for operations.graphql with @graphql-codegen, and compiles it and
// usage.ts with tsc --strict. Exits non-zero naming the step that failed.
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { buildClientSchema, getIntrospectionQuery, parse, printSchema, validate, validateSchema } from 'graphql';
import { codegen } from '@graphql-codegen/core';
import * as typescriptPlugin from '@graphql-codegen/typescript';
import * as operationsPlugin from '@graphql-codegen/typescript-operations';

const [url, key] = process.argv.slice(2);
const fail = (step, err) => {
  console.error(`clientcheck: ${step}: ${err}`);
  process.exit(1);
};

const res = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
  body: JSON.stringify({
    query: getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }),
  }),
});
const body = await res.json();
if (res.status !== 200 || body.errors) fail('introspection', `${res.status} ${JSON.stringify(body.errors)}`);

let schema;
try {
  schema = buildClientSchema(body.data);
} catch (e) {
  fail('buildClientSchema', e);
}
const schemaErrors = validateSchema(schema);
if (schemaErrors.length) fail('validateSchema', schemaErrors.join('; '));

const source = readFileSync('operations.graphql', 'utf8');
const document = parse(source);
const opErrors = validate(schema, document);
if (opErrors.length) fail('operations against the schema', opErrors.join('; '));

mkdirSync('generated', { recursive: true });
writeFileSync('generated/schema.graphql', printSchema(schema));
// Two files, as a console would keep them: the schema's types, and the
// operations' types (which typescript-operations writes self-contained).
const generate = async (filename, name, plugin) => {
  try {
    const out = await codegen({
      schema: parse(printSchema(schema)),
      documents: [{ location: 'operations.graphql', document }],
      filename,
      config: { enumsAsTypes: true, defaultScalarType: 'unknown', scalars: { Time: 'string', StringMap: 'Record<string, string>' } },
      plugins: [{ [name]: {} }],
      pluginMap: { [name]: plugin },
    });
    writeFileSync(filename, out);
    return out;
  } catch (e) {
    fail(`@graphql-codegen ${name}`, e);
  }
};
const schemaTypes = await generate('generated/schema-types.ts', 'typescript', typescriptPlugin);
const output = await generate('generated/types.ts', 'typescriptOperations', operationsPlugin);

try {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '--strict', '--noEmit', '--target', 'es2020', '--module', 'es2020', '--moduleResolution', 'bundler', 'generated/schema-types.ts', 'generated/types.ts', 'usage.ts'], { stdio: 'pipe' });
} catch (e) {
  fail('tsc', `${e.stdout}${e.stderr}`);
}
console.log(`clientcheck: ok: ${Object.keys(schema.getTypeMap()).length} types, ${schemaTypes.split('\n').length + output.split('\n').length} lines of TypeScript compiled`);
