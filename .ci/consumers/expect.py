"""What a junit.xml must say about the runs whose result.json files are given: the counts
every reader has to find (one suite per run: the agent run and each check)."""
import json


def expected(result_paths):
    """One {name, tests, failures, skipped} per run, in order."""
    suites = []
    for path in result_paths:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        ran = {c["name"] for c in r["checks"]}
        skipped = [n for n in r["checks_declared"] if n not in ran]
        failures = (0 if r["agent_finished"] else 1) + sum(1 for c in r["checks"] if not c["passed"])
        suites.append({
            "name": r["job"],
            "tests": 1 + len(r["checks"]) + len(skipped),
            "failures": failures,
            "skipped": len(skipped),
        })
    return suites
