//! The markdown step summary of a run, written so a reviewer learns from the run's page
//! alone what happened: the outcome and its numbers, the checks with the tail of every
//! failed one's output, the files changed with per-file line counts, the denied calls and
//! the final answer. The caller redacts the whole text before it is written.

use std::fmt::Write as _;

use super::patch_files::{FileChange, Kind};
use crate::checks::CheckResult;
use crate::exit_code::Status;
use crate::report::RunResult;
use crate::report::clean::clean;

/// Changed files listed before "… and N more".
const MAX_FILES: usize = 30;
/// Lines of a failed check's output shown.
const TAIL_LINES: usize = 20;

/// GitHub drops a step summary over 1 MiB whole; all the jobs of a step share this much.
pub const STEP_SUMMARY_LIMIT: usize = 1000 * 1000;
/// Longest line of a failed check's output shown.
const MAX_LINE: usize = 500;

/// The markdown step summary of one run in at most `budget` bytes (the changed files are
/// the ones `changes.recorded` listed, folded into `r`).
pub fn summary(r: &RunResult, budget: usize) -> String {
    render(r, &r.changed_files, budget)
}

/// The summary, given the changed files (none listed when there are none). The
/// outcome and the checks table always stay; what does not fit in `budget` goes, in this
/// order: the final answer (cut first), the changed files, the denials, the check outputs.
pub(crate) fn render(r: &RunResult, files: &[FileChange], budget: usize) -> String {
    let mut md = outcome_and_checks(r);
    pending(&mut md, r);
    let mut tails = String::new();
    failed_outputs(&mut tails, &r.checks);
    let mut changed = String::new();
    changes(&mut changed, r, files);
    let mut denied = String::new();
    denials(&mut denied, r);
    for part in [tails, changed, denied] {
        if md.len() + part.len() <= budget {
            md.push_str(&part);
        }
    }
    let room = budget.saturating_sub(md.len());
    md.push_str(&answer(r.result.trim(), room));
    md
}

/// The heading, the reason, the numbers and the checks table.
fn outcome_and_checks(r: &RunResult) -> String {
    let icon = if r.status == Status::Success {
        "✅"
    } else {
        "❌"
    };
    let mut md = format!(
        "### {icon} cn-run `{}`: {}\n\n",
        r.job.replace('`', "'"),
        r.status.as_str()
    );
    md.push_str(&format!("{}\n\n", html_text(&r.reason)));
    if let Some(stop @ ("length" | "content_filter")) = r.stop_reason.as_deref() {
        md.push_str(&format!(
            "The model's last answer is incomplete (stop reason `{stop}`).\n\n"
        ));
    }
    md.push_str("| exit code | turns | attempts | tokens in / out | cost | duration |\n|---|---|---|---|---|---|\n");
    let cost = r
        .total_cost_usd
        .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"));
    md.push_str(&format!(
        "| {} | {} | {} | {} / {} | {cost} | {:.1} s |\n\n",
        r.exit_code,
        r.num_turns,
        r.attempts,
        r.usage.input_tokens,
        r.usage.output_tokens,
        r.duration_ms as f64 / 1000.0
    ));
    md.push_str(&super::containment::line(r));
    if let Some(trace) = r
        .trace_id
        .as_deref()
        .filter(|t| t.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        md.push_str(&format!("OpenTelemetry trace `{trace}`\n\n"));
    }
    checks_table(&mut md, r);
    if let Some(page) = &r.report_path {
        md.push_str(&format!(
            "Every turn and call, with its verdict, output and diff: `report.html` (`{}`).\n\n",
            page.replace('`', "'")
        ));
    }
    md
}

/// The final answer in a code fence longer than any backtick run in it (so no text of the
/// model's can end the fence or the `<details>`), cut to fit `room` bytes.
fn answer(text: &str, room: usize) -> String {
    if text.is_empty() {
        return String::new();
    }
    let text = clean(text);
    let fence = "`".repeat(longest_run(&text, '`').max(2) + 1);
    let frame = |body: &str, note: &str| {
        format!(
            "<details><summary>Final answer{note}</summary>\n\n{fence}text\n{body}\n{fence}\n\n</details>\n\n"
        )
    };
    let whole = frame(&text, "");
    if whole.len() <= room {
        return whole;
    }
    let note = format!(
        " (cut: the first part of {} bytes; the whole answer is in result.json)",
        text.len()
    );
    let keep = room.saturating_sub(frame("", &note).len() + 8);
    if keep == 0 {
        return String::new();
    }
    let mut end = keep.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    frame(&format!("{}\n…", &text[..end]), &note)
}

/// How a check ended, in words.
fn outcome(c: &CheckResult) -> String {
    match (c.passed, c.timed_out, c.exit_code) {
        (true, _, _) => "passed".to_owned(),
        (false, true, _) => "timed out".to_owned(),
        (false, false, Some(code)) => format!("failed (exit {code})"),
        (false, false, None) => "failed (killed)".to_owned(),
    }
}

/// The checks table: one row per check with the verdict the run ended with (its last
/// attempt), how many attempts it ran in, and the earlier attempts that failed.
fn checks_table(md: &mut String, r: &RunResult) {
    if r.checks.is_empty() {
        return;
    }
    md.push_str("| check | attempts | result | time |\n|---|---|---|---|\n");
    for runs in crate::report::junit::attempts_per_check(r) {
        let Some((last, earlier)) = runs.split_last() else {
            continue;
        };
        let icon = if last.passed { "✅" } else { "❌" };
        let before: Vec<String> = earlier
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("attempt {} {}", c.attempt, outcome(c)))
            .collect();
        let before = match before.as_slice() {
            [] => String::new(),
            list => format!(" (earlier: {})", list.join(", ")),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {icon} {}{before} | {:.1} s |",
            table_text(&last.name),
            runs.len(),
            outcome(last),
            last.duration_ms as f64 / 1000.0
        );
    }
    md.push('\n');
}

/// The output tail of each check that failed in the last attempt.
fn failed_outputs(md: &mut String, checks: &[CheckResult]) {
    let last = checks.iter().map(|c| c.attempt).max().unwrap_or(0);
    for c in checks.iter().filter(|c| c.attempt == last && !c.passed) {
        let text = clean(&c.output_tail);
        let lines: Vec<&str> = text.trim_end().lines().collect();
        let shown = &lines[lines.len().saturating_sub(TAIL_LINES)..];
        let what = if lines.len() > TAIL_LINES {
            format!("last {TAIL_LINES} lines of output")
        } else {
            "output".to_owned()
        };
        let _ = write!(
            md,
            "<details><summary>❌ <code>{}</code> {}: {what}</summary>\n\n",
            html_text(&c.name),
            outcome(c)
        );
        if shown.is_empty() {
            md.push_str("(no output)\n\n</details>\n\n");
            continue;
        }
        let body = shown
            .iter()
            .map(|l| cut_line(l))
            .collect::<Vec<_>>()
            .join("\n");
        let fence = "`".repeat(longest_run(&body, '`').max(2) + 1);
        let _ = write!(md, "{fence}text\n{body}\n{fence}\n\n</details>\n\n");
    }
}

/// A line of at most [`MAX_LINE`] bytes.
fn cut_line(line: &str) -> String {
    if line.len() <= MAX_LINE {
        return line.to_owned();
    }
    let mut end = MAX_LINE;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

/// The changed files with their counts, at most [`MAX_FILES`] of them.
fn changes(md: &mut String, r: &RunResult, files: &[FileChange]) {
    let Some(d) = &r.diff else {
        md.push_str("**Changes:** not recorded (no git repository, or checkpoints are off).\n\n");
        return;
    };
    if d.files == 0 {
        md.push_str("**Changes:** none.\n\n");
        return;
    }
    let plural = if d.files == 1 { "" } else { "s" };
    let _ = write!(
        md,
        "**Changes:** {} file{plural}, +{} −{}",
        d.files, d.insertions, d.deletions
    );
    if let Some(p) = &r.patch_path {
        let _ = write!(md, " (`{p}`)");
    }
    md.push_str("\n\n");
    if files.is_empty() {
        return;
    }
    md.push_str("| file | + | − |\n|---|--:|--:|\n");
    for f in files.iter().take(MAX_FILES) {
        let note = match (f.kind, f.binary) {
            (Kind::Added, _) => " (new)",
            (Kind::Deleted, _) => " (deleted)",
            (Kind::Modified, _) => "",
        };
        let (ins, del) = if f.binary {
            ("binary".to_owned(), "binary".to_owned())
        } else {
            (f.insertions.to_string(), f.deletions.to_string())
        };
        let _ = writeln!(md, "| {}{note} | {ins} | {del} |", code_span(&f.path));
    }
    if files.len() > MAX_FILES {
        let _ = writeln!(
            md,
            "\n… and {} more (see the patch).",
            files.len() - MAX_FILES
        );
    }
    md.push('\n');
}

/// The calls waiting for a person (`on_ask: defer`, a hook's `defer`), with the
/// command that runs one and the one that refuses it.
fn pending(md: &mut String, r: &RunResult) {
    if r.pending_approvals.is_empty() {
        return;
    }
    md.push_str(
        "#### Waiting for approval

| call | tool and input | reason |
|---|---|---|
",
    );
    for p in &r.pending_approvals {
        let args: String = p.arguments.to_string().chars().take(120).collect();
        let _ = writeln!(
            md,
            "| {} | {} {} | {} |",
            code_span(&p.call_id),
            p.tool,
            code_span(&args),
            table_text(&p.reason)
        );
    }
    let id = r.pending_approvals[0].call_id.replace('`', "'");
    let _ = writeln!(
        md,
        "\nApprove: `cn-run --resume {} --approve {id}`; refuse: `--deny {id} --reason TEXT`.\n",
        r.run_id.replace('`', "'")
    );
}

/// The table of calls the permission policy did not let run as asked.
fn denials(md: &mut String, r: &RunResult) {
    if r.permission_denials.is_empty() {
        return;
    }
    md.push_str("| denied call | rule | source | reason |\n|---|---|---|---|\n");
    for d in &r.permission_denials {
        let args: String = d.arguments.to_string().chars().take(80).collect();
        let _ = writeln!(
            md,
            "| {} {} | {} | {} | {} |",
            d.tool,
            code_span(&args),
            code_span(d.rule.as_deref().unwrap_or("-")),
            d.source,
            table_text(&d.reason)
        );
    }
    md.push('\n');
}

/// Text safe in one table cell: no line breaks, pipes and HTML escaped.
fn table_text(s: &str) -> String {
    html_text(s)
        .replace('\r', "")
        .replace('\n', " ")
        .replace('|', "\\|")
}

/// `s` as a markdown code span inside a table cell, whatever backticks or controls it holds.
fn code_span(s: &str) -> String {
    let shown: String = s
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    let ticks = "`".repeat(longest_run(&shown, '`') + 1);
    let pad = if shown.starts_with('`') || shown.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{}{pad}{ticks}", shown.replace('|', "\\|"))
}

/// Text safe inside an HTML element.
pub(super) fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    s.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{DiffStat, ResultBuilder};

    fn changed(n: usize) -> Vec<FileChange> {
        (0..n)
            .map(|i| FileChange {
                path: format!("src/f{i}.rs"),
                kind: Kind::Modified,
                binary: false,
                insertions: i,
                deletions: 1,
            })
            .collect()
    }

    fn result_with_diff(files: usize) -> RunResult {
        let mut r = ResultBuilder::default().result();
        r.diff = Some(DiffStat {
            files,
            insertions: 7,
            deletions: files,
        });
        r.patch_path = Some("out/diff.patch".to_owned());
        r
    }

    #[test]
    fn the_changed_files_list_stops_at_thirty() {
        let md = render(&result_with_diff(45), &changed(45), STEP_SUMMARY_LIMIT);
        assert!(
            md.contains("**Changes:** 45 files, +7 −45 (`out/diff.patch`)"),
            "{md}"
        );
        assert!(md.contains("| `src/f29.rs` | 29 | 1 |"), "{md}");
        assert!(!md.contains("src/f30.rs"), "{md}");
        assert!(md.contains("… and 15 more (see the patch)."), "{md}");
    }

    #[test]
    fn odd_file_names_stay_inside_their_cell() {
        let mut files = changed(1);
        files[0].path = "a|b`c`\nd".to_owned();
        files[0].binary = true;
        files[0].kind = Kind::Added;
        let md = render(&result_with_diff(1), &files, STEP_SUMMARY_LIMIT);
        assert!(
            md.contains("| ``a\\|b`c`\\nd`` (new) | binary | binary |"),
            "{md}"
        );
    }

    #[test]
    fn a_failed_check_shows_its_whole_short_output_in_a_fence_longer_than_its_backticks() {
        let mut r = result_with_diff(0);
        r.checks = vec![CheckResult {
            name: "lint <all>".to_owned(),
            attempt: 1,
            passed: false,
            exit_code: None,
            duration_ms: 10,
            timed_out: true,
            output_tail: "```\n\u{1b}[1mboom\u{1b}[0m\n".to_owned(),
            interrupted: false,
        }];
        let md = render(&r, &[], STEP_SUMMARY_LIMIT);
        assert!(md.contains("**Changes:** none."), "{md}");
        assert!(
            md.contains("| lint &lt;all&gt; | 1 | ❌ timed out |"),
            "{md}"
        );
        assert!(
            md.contains("<summary>❌ <code>lint &lt;all&gt;</code> timed out: output</summary>\n\n````text\n```\nboom\n````\n"),
            "{md}"
        );
    }
}
