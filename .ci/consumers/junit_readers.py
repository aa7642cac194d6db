"""Reads each junit.xml with the readers CI systems use and checks each reads what the runs
did (from their result.json or summary.json): lxml against Jenkins' xunit junit-10.xsd; the
standard library's ElementTree; junitparser (EnricoMi/publish-unit-test-result-action's
parser), counted as that action counts: a case's most severe final result (failure, error,
skipped; reruns and flaky runs are not results), the step failing on the suites' `failures`
and `errors` attributes; and no case showing one output twice (that action's annotation
joins a failure's message, its text, system-out and system-err).

usage: junit_readers.py XSD JUNIT RESULT.json|SUMMARY.json [...]"""
import sys
import xml.etree.ElementTree as ET

import junitparser
from lxml import etree

from expect import expected

COUNTS = ("name", "tests", "failures", "skipped")


def counts(suites):
    return [{k: s[k] for k in COUNTS} for s in suites]


def by_element_tree(junit):
    root = ET.parse(junit).getroot()
    got = []
    for s in root.findall("testsuite"):
        cases = s.findall("testcase")
        got.append({
            "name": s.get("name"),
            "tests": len(cases),
            "failures": len(s.findall("testcase/failure")),
            "skipped": len(s.findall("testcase/skipped")),
            "flaky": sum(1 for c in cases if c.find("failure") is None and c.find("flakyFailure") is not None),
        })
        for c in cases:
            failure = c.find("failure")
            out = c.find("system-out")
            if failure is not None and out is not None and (failure.text or "").strip() and \
                    (failure.text or "").strip() in (out.text or ""):
                sys.exit(f"{junit}: {c.get('name')} carries its output twice")
    return got


def by_junitparser(junit):
    """As EnricoMi's action reads it: per case the most severe final result."""
    xml = junitparser.JUnitXml.fromfile(junit)
    got, failed_attr = [], 0
    for suite in xml:
        cases = list(suite)
        kinds = [{type(r).__name__ for r in c.result} for c in cases]
        got.append({
            "name": suite.name,
            "tests": len(cases),
            "failures": sum(1 for k in kinds if "Failure" in k or "Error" in k),
            "skipped": sum(1 for k in kinds if k == {"Skipped"}),
        })
        failed_attr += int(suite.failures or 0) + int(suite.errors or 0)
        if int(suite.tests) != len(cases) or int(suite.failures) != got[-1]["failures"]:
            sys.exit(f"{junit}: suite {suite.name} counts {suite.tests}/{suite.failures} disagree with its cases")
    return got, failed_attr


def check(xsd_path, junit, results):
    want = expected(results)
    schema = etree.XMLSchema(etree.parse(xsd_path))
    if not schema.validate(etree.parse(junit)):
        sys.exit(f"{junit}: not valid against junit-10.xsd: {schema.error_log}")
    got = by_element_tree(junit)
    if counts(got) != counts(want) or [s["flaky"] for s in got] != [s["flaky"] for s in want]:
        sys.exit(f"{junit}: ElementTree read {got}, the runs say {want}")
    got, failed_attr = by_junitparser(junit)
    if counts(got) != counts(want):
        sys.exit(f"{junit}: junitparser read {got}, the runs say {want}")
    if (failed_attr > 0) != any(s["failed_run"] for s in want):
        sys.exit(f"{junit}: the suites' failures say {failed_attr}, the runs' exit codes say otherwise")
    print(f"ok {junit}: {len(want)} suite(s), {sum(s['tests'] for s in want)} testcases")


if __name__ == "__main__":
    check(sys.argv[1], sys.argv[2], sys.argv[3:])
