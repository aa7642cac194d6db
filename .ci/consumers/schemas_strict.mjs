// Compiles each JSON Schema with ajv (draft 2020-12) in its default strict mode, with the
// standard formats of ajv-formats and no others: a non-standard `format` (uint32, double…)
// or an unknown keyword fails. usage: node schemas_strict.mjs SCHEMA.json...
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

let failed = false;
for (const path of process.argv.slice(2)) {
  const ajv = new Ajv2020();
  addFormats(ajv);
  try {
    ajv.compile(JSON.parse(readFileSync(path, "utf8")));
    console.log(`ok ${path}: ajv strict compiles it`);
  } catch (e) {
    console.error(`${path}: ajv strict refuses it: ${e.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
