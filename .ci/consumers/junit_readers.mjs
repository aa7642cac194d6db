// Reads each junit.xml with the JavaScript parsers GitHub actions use (fast-xml-parser with
// its strict validator, xml2js, xml-js) and checks each reads the counts the runs' result.json
// files say. usage: node junit_readers.mjs JUNIT RESULT.json [RESULT.json ...]
import { readFileSync } from "node:fs";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import xml2js from "xml2js";
import convert from "xml-js";

const [junit, ...results] = process.argv.slice(2);
const xml = readFileSync(junit, "utf8");
const want = results.map((p) => {
  const r = JSON.parse(readFileSync(p, "utf8"));
  const ran = new Set(r.checks.map((c) => c.name));
  const skipped = r.checks_declared.filter((n) => !ran.has(n)).length;
  return {
    name: r.job,
    tests: 1 + r.checks.length + skipped,
    failures: (r.agent_finished ? 0 : 1) + r.checks.filter((c) => !c.passed).length,
    skipped,
  };
});
const list = (x) => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
const same = (who, got) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    console.error(`${junit}: ${who} read ${JSON.stringify(got)}, the runs say ${JSON.stringify(want)}`);
    process.exit(1);
  }
};

const valid = XMLValidator.validate(xml);
if (valid !== true) {
  console.error(`${junit}: fast-xml-parser rejects it: ${JSON.stringify(valid)}`);
  process.exit(1);
}
const fx = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
same("fast-xml-parser", list(fx.testsuites.testsuite).map((s) => {
  const cases = list(s.testcase);
  return {
    name: String(s.name),
    tests: cases.length,
    failures: cases.filter((c) => c.failure !== undefined).length,
    skipped: cases.filter((c) => c.skipped !== undefined).length,
  };
}));

const x2 = await xml2js.parseStringPromise(xml, { strict: true });
same("xml2js", list(x2.testsuites.testsuite).map((s) => {
  const cases = list(s.testcase);
  return {
    name: s.$.name,
    tests: cases.length,
    failures: cases.filter((c) => c.failure).length,
    skipped: cases.filter((c) => c.skipped).length,
  };
}));

const xj = convert.xml2js(xml, { compact: false });
const root = xj.elements.find((e) => e.name === "testsuites");
same("xml-js", root.elements.filter((e) => e.name === "testsuite").map((s) => {
  const cases = (s.elements || []).filter((e) => e.name === "testcase");
  const has = (c, n) => (c.elements || []).some((e) => e.name === n);
  return {
    name: s.attributes.name,
    tests: cases.length,
    failures: cases.filter((c) => has(c, "failure")).length,
    skipped: cases.filter((c) => has(c, "skipped")).length,
  };
}));
console.log(`ok ${junit}: fast-xml-parser, xml2js and xml-js read ${want.length} suite(s)`);
