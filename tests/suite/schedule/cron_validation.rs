//! Which cron lines `cn-run` accepts, set beside what Debian's own `crontab(1)` says of the
//! same lines (recorded by `tests/fixtures/cron/debian-crontab.sh` into
//! `debian-crontab.tsv`): every line Debian refuses is refused, naming the field Debian
//! names; every line Debian accepts is accepted, except the classes below, where Debian's
//! parser accepts a line that does not do what it says, and cn-run refuses it with the reason.

use std::collections::BTreeMap;

use crate::support::runner::{cn_run, repo_root, run, write_files};

/// Lines Debian's crontab accepts and cn-run refuses on purpose: the class, and the words of
/// cn-run's reason.
const REFUSED_ON_PURPOSE: &[(&str, &[&str])] = &[
    // `0 0 31 2 *`: accepted by Debian, never runs.
    ("never fires", &["can never fire"]),
    // `0 0 5-1 * *`, `SAT-SUN`: Debian reads a backwards range as no value at all.
    ("backwards range", &["runs backwards"]),
    // `*-5`, `1-2-3`, `*/2/3`, `5#2`, `*x`: Debian skips what follows a valid item.
    (
        "characters Debian skips",
        &[
            "`*` stands alone",
            "two values around one `-`",
            "must be a number",
            "is not a value",
            "not part of this dialect",
        ],
    ),
    // `4294967296`: Debian's number wraps around 32 bits.
    ("number past 32 bits", &["out of range"]),
    // `@reboot`: there is no boot for `cn-run schedule`.
    ("@reboot", &["no such moment"]),
];

/// The recorded verdicts: (line, Debian's verdict).
fn debian_verdicts() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo_root().join("tests/fixtures/cron/debian-crontab.tsv"))
        .unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (line, verdict) = l.split_once('\t').unwrap();
            (line.to_owned(), verdict.to_owned())
        })
        .collect()
}

/// cn-run's verdict on each line: `None` when accepted, else its message. All lines go
/// through one `cn-run schedule --list`, which reports every job's problem.
fn cn_run_verdicts(lines: &[String]) -> Vec<Option<String>> {
    let tmp = tempfile::tempdir().unwrap();
    let jobs: Vec<(String, String)> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let job = format!(
                "version: 1\nmodel: {{provider: script, name: s, script: s.yaml}}\nprompt: x\n\
                 schedule: \"{line}\"\n"
            );
            (format!("jobs/j{i}.yaml"), job)
        })
        .collect();
    let mut files: Vec<(&str, &str)> = jobs.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    files.push(("jobs/s.yaml", "turns:\n  - text: hi\n"));
    write_files(tmp.path(), &files);
    let mut cmd = cn_run(tmp.path());
    cmd.args(["schedule", "--list", "jobs"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    let mut messages: BTreeMap<usize, String> = BTreeMap::new();
    for l in r.stderr.lines() {
        let l = l.trim_start_matches("cn-run: ");
        let Some(rest) = l.strip_prefix("jobs/j") else {
            continue;
        };
        let (i, message) = rest.split_once(".yaml:").unwrap();
        messages.insert(i.parse().unwrap(), message.to_owned());
    }
    (0..lines.len()).map(|i| messages.remove(&i)).collect()
}

#[test]
fn cn_run_accepts_what_debians_crontab_accepts_and_says_why_it_refuses() {
    let debian = debian_verdicts();
    assert!(debian.len() > 120, "{} recorded lines", debian.len());
    let lines: Vec<String> = debian.iter().map(|(l, _)| l.clone()).collect();
    let ours = cn_run_verdicts(&lines);
    let mut wrong = Vec::new();
    let mut on_purpose: BTreeMap<&str, usize> = BTreeMap::new();
    for ((line, theirs), mine) in debian.iter().zip(&ours) {
        match (theirs.as_str(), mine) {
            ("accepted", None) => {}
            ("accepted", Some(why)) => {
                let class = REFUSED_ON_PURPOSE
                    .iter()
                    .find(|(_, words)| words.iter().any(|w| why.contains(w)));
                match class {
                    Some((name, _)) => *on_purpose.entry(name).or_default() += 1,
                    None => wrong.push(format!("`{line}`: Debian accepts it; cn-run: {why}")),
                }
            }
            (_, None) => wrong.push(format!("`{line}`: Debian says {theirs}; cn-run accepts it")),
            (bad, Some(why)) => {
                // Debian names the field ("bad day-of-month"); so does cn-run, with the value.
                let field = bad.trim_start_matches("bad ");
                let named = why.contains(&format!("the {field} field `"))
                    || why.contains("fields; a cron line has 5")
                    || why.contains("alias")
                    || bad == "bad command";
                if !named {
                    wrong.push(format!("`{line}`: Debian says {bad}; cn-run: {why}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Each class of deliberate refusal is exercised.
    for (class, _) in REFUSED_ON_PURPOSE {
        assert!(
            on_purpose.get(class).is_some_and(|n| *n > 0),
            "no `{class}` line: {on_purpose:?}"
        );
    }
}

/// The three shapes and their variants, each refused naming the field (or the
/// whole line), the value and why, with exit 2 from `cn-run validate`.
#[test]
fn never_firing_lines_misplaced_names_and_empty_items_are_refused_with_the_reason() {
    let cases: &[(&str, &str)] = &[
        (
            "0 0 31 2 *",
            "`0 0 31 2 *` can never fire: no month in `2` has a day in `31`",
        ),
        (
            "0 0 30,31 feb *",
            "can never fire: no month in `feb` has a day in `30,31`",
        ),
        ("15 4 31 4,6,9,11 *", "can never fire"),
        ("0 0 31 2 *,1", "can never fire"),
        (
            "0 0 * MON *",
            "the month field `MON`: `MON` is a day of the week; months are 1-12",
        ),
        (
            "0 0 * mon-fri *",
            "the month field `mon-fri`: `mon` is a day of the week",
        ),
        (
            "0 0 * 1,Sun *",
            "the month field `1,Sun`: `Sun` is a day of the week",
        ),
        (
            "0 0 * * JAN",
            "the day-of-week field `JAN`: `JAN` is a month; days of the week",
        ),
        (
            "0 MON * * *",
            "the hour field `MON`: `MON` is a day of the week; hours are 0-23",
        ),
        (
            "0 0 dec * *",
            "the day-of-month field `dec`: `dec` is a month",
        ),
        (", * * * *", "the minute field `,`: an empty list item"),
        (
            "1,,2 * * * *",
            "the minute field `1,,2`: an empty list item",
        ),
        (
            "0 0 1, * *",
            "the day-of-month field `1,`: an empty list item",
        ),
        (
            "0 0 * * ,5",
            "the day-of-week field `,5`: an empty list item",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (line, words) in cases {
        let job = format!(
            "version: 1\nmodel: {{provider: script, name: s, script: s.yaml}}\nprompt: x\n\
             schedule: {{cron: \"{line}\", timezone: Europe/Berlin}}\n"
        );
        write_files(
            tmp.path(),
            &[("j.yaml", &job), ("s.yaml", "turns:\n  - text: hi\n")],
        );
        let mut cmd = cn_run(tmp.path());
        cmd.args(["validate", "j.yaml"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "`{line}`: {r:#?}");
        assert!(
            r.stderr.contains("j.yaml:4:")
                && r.stderr.contains("schedule.cron: ")
                && r.stderr.contains(words),
            "`{line}`: {}",
            r.stderr
        );
    }
}
