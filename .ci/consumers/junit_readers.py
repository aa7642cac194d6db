"""Reads each junit.xml with the readers CI systems use and checks each reads what the
run did (the counts from result.json): lxml against Jenkins' xunit junit-10.xsd, the
standard library's ElementTree, and junitparser.

usage: junit_readers.py XSD JUNIT RESULT.json [RESULT.json ...]"""
import sys
import xml.etree.ElementTree as ET

import junitparser
from lxml import etree

from expect import expected


def check(xsd_path, junit, results):
    want = expected(results)
    schema = etree.XMLSchema(etree.parse(xsd_path))
    doc = etree.parse(junit)
    if not schema.validate(doc):
        sys.exit(f"{junit}: not valid against junit-10.xsd: {schema.error_log}")

    root = ET.parse(junit).getroot()
    got = [
        {
            "name": s.get("name"),
            "tests": len(s.findall("testcase")),
            "failures": len(s.findall("testcase/failure")),
            "skipped": len(s.findall("testcase/skipped")),
        }
        for s in root.findall("testsuite")
    ]
    if got != want:
        sys.exit(f"{junit}: ElementTree read {got}, the runs say {want}")

    xml = junitparser.JUnitXml.fromfile(junit)
    got = []
    for suite in xml:
        cases = list(suite)
        got.append({
            "name": suite.name,
            "tests": len(cases),
            "failures": sum(1 for c in cases if any(isinstance(x, junitparser.Failure) for x in c.result)),
            "skipped": sum(1 for c in cases if any(isinstance(x, junitparser.Skipped) for x in c.result)),
        })
        if int(suite.tests) != len(cases) or int(suite.failures) != got[-1]["failures"]:
            sys.exit(f"{junit}: suite {suite.name} counts {suite.tests}/{suite.failures} disagree with its cases")
    if got != want:
        sys.exit(f"{junit}: junitparser read {got}, the runs say {want}")
    print(f"ok {junit}: {len(want)} suite(s), {sum(s['tests'] for s in want)} testcases")


if __name__ == "__main__":
    check(sys.argv[1], sys.argv[2], sys.argv[3:])
