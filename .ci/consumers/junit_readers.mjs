// Reads each junit.xml with the JavaScript parsers GitHub actions use, counted as those
// actions count: xml2js as dorny/test-reporter's java-junit reader (a case with <failure>
// or <error> failed, else with <skipped> skipped, else passed), xml-js (compact) as
// mikepenz/action-junit-report (failure/error failed, skipped skipped, <flakyFailure> a
// retry of a passing case), and fast-xml-parser with its strict validator; each must read
// what the runs' result.json or summary.json say.
// usage: node junit_readers.mjs JUNIT RESULT.json|SUMMARY.json [...]
import { readFileSync } from "node:fs";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import xml2js from "xml2js";
import convert from "xml-js";

const [junit, ...results] = process.argv.slice(2);
const xml = readFileSync(junit, "utf8");

function fromResult(r) {
  const last = new Map();
  const failedBefore = new Set();
  for (const c of r.checks) {
    if (!c.passed) failedBefore.add(c.name);
    last.set(c.name, c);
  }
  const skipped = r.checks_declared.filter((n) => !last.has(n)).length;
  const finals = [...last.values()];
  return {
    name: r.job,
    tests: 1 + finals.length + skipped,
    failures: (r.agent_finished ? 0 : 1) + finals.filter((c) => !c.passed).length,
    skipped,
    flaky: [...last.entries()].filter(([n, c]) => c.passed && failedBefore.has(n)).length,
  };
}
const want = results.flatMap((p) => {
  const doc = JSON.parse(readFileSync(p, "utf8"));
  if (doc.type !== "summary") return [fromResult(doc)];
  return [
    ...doc.results.map(fromResult),
    ...doc.not_started.map((n) => ({ name: n.job, tests: 1, failures: 1, skipped: 0, flaky: 0 })),
  ];
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
  const failed = (c) => c.failure !== undefined || c.error !== undefined;
  return {
    name: String(s.name),
    tests: cases.length,
    failures: cases.filter(failed).length,
    skipped: cases.filter((c) => c.skipped !== undefined).length,
    flaky: cases.filter((c) => !failed(c) && c.flakyFailure !== undefined).length,
  };
}));

// dorny/test-reporter (java-junit): failure || error → failed; skipped → skipped.
const x2 = await xml2js.parseStringPromise(xml);
same("xml2js (dorny/test-reporter)", list(x2.testsuites.testsuite).map((s) => {
  const cases = list(s.testcase);
  const result = (c) => (c.failure || c.error ? "failed" : c.skipped ? "skipped" : "success");
  return {
    name: s.$.name.trim(),
    tests: cases.length,
    failures: cases.filter((c) => result(c) === "failed").length,
    skipped: cases.filter((c) => result(c) === "skipped").length,
    flaky: cases.filter((c) => result(c) === "success" && c.flakyFailure).length,
  };
}));

// mikepenz/action-junit-report: xml2json compact; failure/error → failed, skipped.
const mp = JSON.parse(convert.xml2json(xml, { compact: true }));
same("xml-js (mikepenz/action-junit-report)", list(mp.testsuites.testsuite).map((s) => {
  const cases = list(s.testcase);
  const failed = (c) => list(c.failure).length + list(c.error).length > 0;
  return {
    name: s._attributes.name,
    tests: cases.length,
    failures: cases.filter(failed).length,
    skipped: cases.filter((c) => c.skipped !== undefined).length,
    flaky: cases.filter((c) => !failed(c) && list(c.flakyFailure).length > 0).length,
  };
}));
console.log(`ok ${junit}: fast-xml-parser, xml2js and xml-js read ${want.length} suite(s)`);
