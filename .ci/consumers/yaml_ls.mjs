// Validates YAML (and JSON) files against a JSON Schema with yaml-language-server's own
// validator, the one editors run with the schema mapped. Files after --invalid must get problems
// (the negative control: a validator that saw no schema would report none).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { getLanguageService } from 'yaml-language-server';
import { TextDocument } from 'vscode-languageserver-textdocument';

const [schemaPath, ...args] = process.argv.slice(2);
const cut = args.indexOf("--invalid");
const valid = cut < 0 ? args : args.slice(0, cut);
const invalid = cut < 0 ? [] : args.slice(cut + 1);
const schemaUri = pathToFileURL(schemaPath).href;
const service = getLanguageService({
  schemaRequestService: async (uri) => readFileSync(new URL(uri), 'utf8'),
  workspaceContext: { resolveRelativePath: (rel, res) => new URL(rel, res).href },
});
service.configure({
  validate: true,
  completion: false,
  hover: false,
});
// The schema is bound by the modeline on a line put before each file (a `fileMatch` glob
// does not match paths with a dot folder such as `.ci/`), so lines are shifted back by one.
let bad = 0;
for (const file of [...valid, ...invalid]) {
  const expectInvalid = invalid.includes(file);
  const text = `# yaml-language-server: $schema=${schemaUri}\n${readFileSync(file, 'utf8')}`;
  const doc = TextDocument.create(pathToFileURL(file).href, 'yaml', 1, text);
  const problems = await service.doValidation(doc, false);
  const shown = problems.map((p) => `${file}:${p.range.start.line}: ${p.message}`);
  if (expectInvalid ? problems.length === 0 : problems.length > 0) {
    bad += 1;
    console.error(`yaml-language-server: ${file}: expected ${expectInvalid ? 'problems' : 'none'}, got ${shown.join('; ') || 'none'}`);
  } else {
    console.log(`yaml-language-server: ${file}: ${problems.length} problem(s) as expected${expectInvalid ? ": " + problems.map((p) => p.message).join("; ") : ""}`);
  }
}
process.exit(bad ? 1 : 0);
