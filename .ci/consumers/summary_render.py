"""Renders a step summary cn-run wrote with GitHub's Markdown (cmark-gfm with GitHub's
extensions) and checks a reader sees how each run ended: a heading per job with its
status, one row per check with the verdict the run ended with, a job that did not start
said so, the final answer inside its code block (no text of the model's outside it).

usage: summary_render.py SUMMARY.md RESULT.json|SUMMARY.json [...]"""
import json
import re
import subprocess
import sys

from lxml import html


def jobs(paths):
    """(name, status, {check: passed at the end}, answer or None) per job."""
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        results = doc["results"] if doc.get("type") == "summary" else [doc]
        for r in results:
            last = {c["name"]: c["passed"] for c in r["checks"]}
            out.append((r["job"], r["status"], last, r["result"].strip() or None))
        for n in doc.get("not_started", []):
            out.append((n["job"], n["status"], {}, None))
    return out


def check(md_path, paths):
    rendered = subprocess.run(
        ["cmark-gfm", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter", md_path],
        check=True, capture_output=True, text=True,
    ).stdout
    page = html.fromstring(f"<div>{rendered}</div>")
    headings = [h.text_content() for h in page.iter("h3")]
    want = jobs(paths)
    if len(headings) != len(want):
        sys.exit(f"{md_path}: {len(headings)} job headings for {len(want)} jobs: {headings}")
    rows = {}
    for tr in page.iter("tr"):
        cells = [td.text_content() for td in tr.findall("td")]
        if len(cells) == 4 and cells[2][:1] in "✅❌":
            rows.setdefault(cells[0], []).append(cells[2])
    codes = [c.text_content() for c in page.iter("code")]
    for name, status, checks, answer in want:
        icon = "✅" if status == "success" else "❌"
        if f"{icon} cn-run {name}: {status}" not in headings:
            sys.exit(f"{md_path}: no heading `{icon} cn-run {name}: {status}` in {headings}")
        for check_name, passed in checks.items():
            verdicts = rows.get(check_name, [])
            if not verdicts or any(v.startswith("✅") != passed for v in verdicts):
                sys.exit(f"{md_path}: {name}'s check {check_name} ended {'passed' if passed else 'failed'}, the table says {verdicts}")
        # The answer's words are in a code block (the summary shows it cleaned of terminal
        # codes: words inside an escape sequence are gone from the page altogether).
        words = [w for w in re.findall(r"[A-Za-z0-9-]{4,}", answer or "") if w in rendered]
        if answer and not words:
            sys.exit(f"{md_path}: {name}'s answer is not on the page")
        for word in words:
            if not any(word in c for c in codes):
                sys.exit(f"{md_path}: {name}'s answer ({word}) is not inside a code block")
    print(f"ok {md_path}: cmark-gfm shows {len(want)} job(s) as they ended")


if __name__ == "__main__":
    check(sys.argv[1], sys.argv[2:])
