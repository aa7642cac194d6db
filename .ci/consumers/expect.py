"""What a junit.xml must say about the runs it reports, read from what cn-run wrote: each
result.json, or a summary.json (every job of a call: those that ran, then those that did
not start). One suite per job: the agent run, and one case per declared check carrying its
final verdict (the last attempt it ran in); a check that failed and then passed is a pass
with its failed attempts kept as flaky; a job that did not start is one failed case."""
import json


def from_result(r):
    last = {}
    failed_before = set()
    for c in r["checks"]:
        if not c["passed"]:
            failed_before.add(c["name"])
        last[c["name"]] = c
    skipped = [n for n in r["checks_declared"] if n not in last]
    failures = (0 if r["agent_finished"] else 1) + sum(1 for c in last.values() if not c["passed"])
    flaky = sum(1 for n, c in last.items() if c["passed"] and n in failed_before)
    return {
        "name": r["job"],
        "tests": 1 + len(last) + len(skipped),
        "failures": failures,
        "skipped": len(skipped),
        "flaky": flaky,
        "failed_run": r["exit_code"] != 0,
    }


def not_started(item):
    return {"name": item["job"], "tests": 1, "failures": 1, "skipped": 0, "flaky": 0, "failed_run": True}


def expected(paths):
    """One {name, tests, failures, skipped, flaky, failed_run} per job, in the report's order."""
    suites = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("type") == "summary":
            suites += [from_result(r) for r in doc["results"]]
            suites += [not_started(n) for n in doc["not_started"]]
        else:
            suites.append(from_result(doc))
    return suites
