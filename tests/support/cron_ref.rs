//! The cron reference implementations the schedule tests compare `cn-run` with, and the
//! lines, zones and windows they compare over: cronsim and croniter (PyPI) through
//! `tests/fixtures/cron/reference.py`, and robfig/cron v3 as Kubernetes' CronJob controller
//! calls it (`tests/fixtures/cron/robfig/main.go`, Debian's package), all installed by
//! `.ci/install-cron-reference`. Without them the tests skip with a message.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ZonedDateTime};
use serde_json::{Value, json};

use super::runner::{cn_run, repo_root, run};

/// Where `.ci/install-cron-reference` put the references.
fn reference_dir() -> PathBuf {
    std::env::var_os("CN_RUN_CRON_REF")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/cron-ref"))
}

/// The robfig/cron program, or `None` (with the reason printed) when it was not built.
pub fn robfig() -> Option<PathBuf> {
    let exe = reference_dir().join("robfig-next");
    let ok = exe.is_file();
    if !ok {
        eprintln!(
            "skipped: {} is not built (needs go and Debian's golang-github-robfig-cron-dev); \
             run .ci/install-cron-reference",
            exe.display()
        );
    }
    ok.then_some(exe)
}

/// Run times from robfig/cron as the CronJob controller reads `line` with `timeZone: zone`.
pub fn robfig_runs(
    exe: &Path,
    cases: &[(String, &str, Timestamp, usize)],
) -> Vec<Result<Vec<Timestamp>, String>> {
    let request: Vec<Value> = cases
        .iter()
        .map(|(line, zone, from, count)| json!({"line": line, "zone": zone, "from": from.to_string(), "count": count}))
        .collect();
    answers(Command::new(exe), &Value::Array(request).to_string())
}

/// Send `request` to `cmd`'s stdin and read its JSON answer: a list per case, or an error.
fn answers(mut cmd: Command, request: &str) -> Vec<Result<Vec<Timestamp>, String>> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let request = request.to_owned();
    let writer =
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, request.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    answers
        .into_iter()
        .map(|a| match a.as_array() {
            Some(runs) => Ok(runs
                .iter()
                .map(|t| t.as_str().unwrap().parse().unwrap())
                .collect()),
            None => Err(a["error"].as_str().unwrap_or_default().to_owned()),
        })
        .collect()
}

pub const ZONES: [&str; 7] = [
    "America/New_York",
    "Europe/Berlin",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "America/Santiago",
    "America/Sao_Paulo",
    "UTC",
];

/// The reference's python, or `None` (with the reason printed) when it is not installed.
pub fn reference_python() -> Option<PathBuf> {
    let dir = reference_dir();
    let python = dir.join("py/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import cronsim, croniter"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "skipped: cronsim is not installed under {}; run .ci/install-cron-reference",
            dir.display()
        );
    }
    ok.then_some(python)
}

/// The lines Debian's cron reads differently from other parsers, the DST cases, the aliases.
const CURATED: &[&str] = &[
    "0 0 */1 * 1",
    "0 0 *,10 * 2",
    "0 0 10,* * 2",
    "0 0 */2 * 1",
    "0 0 1,15 * 5",
    "0 0 13 * 5",
    "0 0 1-31 * 1",
    "0 0 * * 7",
    "0 0 * * 5-7",
    "0 0 1 * */1",
    "0 0 1-15 * */2",
    "30 2 * * *",
    "30 2,14 * * *",
    "30 1,13 * * *",
    "0,30 1-3 * * *",
    "15 2 * * *",
    "0 2 * * *",
    "59 1 * * *",
    "0 0 * * *",
    "30 23 * * *",
    "0 1 * * *",
    "45 0 * * *",
    "0,15,30,45 0-2 * * *",
    "30 * * * *",
    "0 * * * *",
    "*/15 * * * *",
    "* * * * *",
    "*/30 * * * *",
    "* 2 * * *",
    "* 0 * * *",
    "5 */2 * * *",
    "*/10 1-3 * * *",
    "0 */1 * * *",
    "15,45 * * * *",
    "@daily",
    "@hourly",
    "@weekly",
    "@monthly",
    "@yearly",
    "@midnight",
    "@annually",
    "0 0 29 2 *",
    "0 12 29 2 1",
    "*/100 * * * *",
    "0-59/20,7 1-3 * * *",
    "0 0 * JAN-MAR/2 *",
    "0 0 * * MON-FRI/2",
    "0 0 */7 * *",
    "0 12 * * sun",
    "0 3 1-7 * 1",
    "1 2 3 4 5",
    "0 0 31 * *",
];

const MINUTES: &[&str] = &[
    "0", "30", "*", "*/15", "*/5", "0,30", "15,45", "5-10", "*/20", "59", "10-40/10", "*,30",
    "0-59/30", "45", "1",
];
const HOURS: &[&str] = &[
    "*", "0", "1", "2", "3", "1,13", "2,14", "0-3", "1-3", "*/2", "*/3", "23", "0,12", "22-23",
    "9-17", "*/6", "0-4/2", "*,2", "23,0-1",
];
const DOMS: &[&str] = &[
    "*", "*", "*", "1", "15", "1,15", "*/2", "*/1", "10-20", "31", "29", "28-31", "*/10", "1-7",
    "13", "*,10", "2-30/7", "30", "4-8",
];
const MONTHS: &[&str] = &[
    "*", "*", "*", "1", "2", "*/3", "jan-mar", "FEB", "3,10", "11", "4-10", "*/2", "Oct-Dec",
    "3-4", "9-11", "9", "4",
];
const DOWS: &[&str] = &[
    "*", "*", "*", "1", "0", "7", "mon-fri", "SAT,SUN", "5", "*/2", "1-5/2", "6-7", "0,6", "*/1",
    "*,3", "sun", "2-4",
];

/// The curated lines and `n` generated ones (a fixed seed: the same lines every run).
pub fn lines(n: usize) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(39);
    let mut pick = |pool: &[&str]| pool[rng.usize(..pool.len())].to_owned();
    let mut out: Vec<String> = CURATED.iter().map(|l| (*l).to_owned()).collect();
    while out.len() < CURATED.len() + n {
        let line = [
            pick(MINUTES),
            pick(HOURS),
            pick(DOMS),
            pick(MONTHS),
            pick(DOWS),
        ]
        .join(" ");
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// The five fields cronsim is given for an alias (cronsim reads five fields only).
pub fn expanded(line: &str) -> &str {
    match line {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other => other,
    }
}

/// A start instant and how many runs to list after it, for some zones.
#[derive(Debug, Clone)]
pub struct Window {
    pub zones: Vec<usize>,
    pub from: Timestamp,
    pub count: usize,
}

/// Two ordinary windows for every zone, and two around each of the first two DST changes
/// of each zone that has them (2025; São Paulo's last ones were in 2018).
pub fn windows() -> Vec<Window> {
    let ts = |s: &str| s.parse::<Timestamp>().unwrap();
    let all: Vec<usize> = (0..ZONES.len()).collect();
    let mut out = vec![
        Window {
            zones: all.clone(),
            from: ts("2025-06-10T10:17:00Z"),
            count: 8,
        },
        Window {
            zones: all,
            from: ts("2025-12-31T20:00:00Z"),
            count: 8,
        },
    ];
    for (z, zone) in ZONES.iter().enumerate() {
        let year = if *zone == "America/Sao_Paulo" {
            "2018-01-01T00:00:00Z"
        } else {
            "2025-01-01T00:00:00Z"
        };
        let tz = TimeZone::get(zone).unwrap();
        for change in tz.following(ts(year)).take(2) {
            let t = change.timestamp();
            let before = |m: i64| t.checked_sub(SignedDuration::from_mins(m)).unwrap();
            out.push(Window {
                zones: vec![z],
                from: before(65),
                count: 6,
            });
            out.push(Window {
                zones: vec![z],
                from: before(5),
                count: 20,
            });
        }
    }
    out
}

/// Job files for `lines` in every zone: `<dir>/z<zone>/j<line>.yaml`.
pub fn write_jobs(dir: &Path, lines: &[String]) {
    for (z, zone) in ZONES.iter().enumerate() {
        let zdir = dir.join(format!("z{z}"));
        std::fs::create_dir_all(&zdir).unwrap();
        std::fs::write(zdir.join("s.yaml"), "turns:\n  - text: hi\n").unwrap();
        for (i, line) in lines.iter().enumerate() {
            let job = format!(
                "version: 1\nname: z{z}-j{i}\nmodel: {{provider: script, name: s, script: s.yaml}}\n\
                 prompt: x\nschedule: {{cron: \"{line}\", timezone: {zone}}}\n"
            );
            std::fs::write(zdir.join(format!("j{i}.yaml")), job).unwrap();
        }
    }
}

/// `cn-run schedule --list --json --from --count` over the window's zones: runs per job name.
pub fn cn_run_list(dir: &Path, w: &Window) -> BTreeMap<String, Vec<Timestamp>> {
    let mut cmd = cn_run(dir);
    cmd.args(["schedule", "--list", "--json", "--state-dir", "state"])
        .args([
            "--count",
            &w.count.to_string(),
            "--from",
            &w.from.to_string(),
        ]);
    for z in &w.zones {
        cmd.arg(format!("z{z}"));
    }
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let jobs: Vec<Value> = serde_json::from_str(&r.stdout).unwrap();
    jobs.iter()
        .map(|j| {
            let runs = j["next_runs"].as_array().unwrap().iter().map(|z| {
                z.as_str()
                    .unwrap()
                    .parse::<ZonedDateTime>()
                    .unwrap()
                    .timestamp()
            });
            (j["name"].as_str().unwrap().to_owned(), runs.collect())
        })
        .collect()
}

/// The reference's runs (or its refusal) for each case `(line, zone, from, count)`.
pub fn reference_runs(
    python: &Path,
    implementation: &str,
    cases: &[(String, &str, Timestamp, usize)],
) -> Vec<Result<Vec<Timestamp>, String>> {
    let cases: Vec<Value> = cases
        .iter()
        .map(|(line, zone, from, count)| {
            json!({"line": expanded(line), "zone": zone, "from": from.to_string(), "count": count})
        })
        .collect();
    let mut cmd = Command::new(python);
    cmd.arg(repo_root().join("tests/fixtures/cron/reference.py"));
    answers(
        cmd,
        &json!({"impl": implementation, "cases": cases}).to_string(),
    )
}
