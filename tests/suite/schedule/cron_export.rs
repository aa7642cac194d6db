//! The exported schedules fire when `cn-run schedule` fires. Every generated and trap line
//! of `cron_reference`, in seven zones, is exported to Kubernetes CronJobs and to a GitHub
//! workflow; each exported line is then run through robfig/cron v3 the way Kubernetes'
//! CronJob controller runs it (`TZ=<timeZone> <schedule>`), and the GitHub lines through both
//! day-field readings (robfig's, and Debian's in cronsim), and compared with
//! `cn-run schedule --list` on ordinary days. A line no export can say the same way is
//! refused with the reason. On DST nights Kubernetes reads every line in elapsed time, as the
//! README says: shown on robfig too.

use std::collections::BTreeMap;
use std::path::Path;

use jiff::Timestamp;
use serde_json::Value;

use crate::support::cron_ref::{
    Window, ZONES, cn_run_list, lines, reference_python, reference_runs, robfig, robfig_runs,
    windows, write_jobs,
};
use crate::support::runner::{cn_run, run};

fn yaml_docs(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).unwrap())
        .collect()
}

/// `cn-run export TARGET` of the zone's jobs `idx`: its output, parsed.
fn export(dir: &Path, target: &str, zone: usize, idx: &[usize]) -> Vec<Value> {
    let mut cmd = cn_run(dir);
    cmd.args(["export", target]);
    if target.starts_with("k8s") {
        cmd.args(["--image", "cn-run:test"]);
    }
    cmd.args(idx.iter().map(|i| format!("z{zone}/j{i}.yaml")));
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    yaml_docs(&r.stdout)
}

/// Job name → (exported line, zone) from the CronJobs.
fn k8s_schedules(docs: &[Value]) -> BTreeMap<String, (String, String)> {
    docs.iter()
        .filter(|d| d["kind"] == "CronJob")
        .map(|d| {
            let name = d["metadata"]["labels"]["cn-run/job"].as_str().unwrap();
            let spec = &d["spec"];
            let line = spec["schedule"].as_str().unwrap().to_owned();
            (
                name.to_owned(),
                (line, spec["timeZone"].as_str().unwrap().to_owned()),
            )
        })
        .collect()
}

/// Job name → exported line, from the workflow (each job runs for its own line).
fn github_schedules(docs: &[Value]) -> BTreeMap<String, String> {
    let jobs = docs[0]["jobs"].as_object().unwrap();
    jobs.values()
        .map(|j| {
            let cond = j["if"].as_str().unwrap();
            let line = cond.split("github.event.schedule == '").nth(1).unwrap();
            let line = line.split('\'').next().unwrap();
            (j["name"].as_str().unwrap().to_owned(), line.to_owned())
        })
        .collect()
}

/// Both lists up to the end of the shorter one, without the runs within a day of one of
/// `zone`'s DST changes (where the README says the targets do otherwise).
fn outside_dst_days(
    zone: &str,
    a: &[Timestamp],
    b: &[Timestamp],
) -> (Vec<Timestamp>, Vec<Timestamp>) {
    let tz = jiff::tz::TimeZone::get(zone).unwrap();
    let day = jiff::SignedDuration::from_hours(24);
    let near_change = |t: &Timestamp| {
        let after_t = t.checked_add(jiff::SignedDuration::from_secs(1)).unwrap();
        let before = tz
            .preceding(after_t)
            .next()
            .is_some_and(|c| t.duration_since(c.timestamp()) < day);
        let after = tz
            .following(*t)
            .next()
            .is_some_and(|c| c.timestamp().duration_since(*t) < day);
        before || after
    };
    let end = a.last().min(b.last()).copied().unwrap_or(Timestamp::MIN);
    let keep = |l: &[Timestamp]| {
        l.iter()
            .filter(|t| **t <= end && !near_change(t))
            .copied()
            .collect()
    };
    (keep(a), keep(b))
}

#[test]
fn exported_schedules_fire_when_cn_run_schedule_fires() {
    let (Some(robfig), Some(python)) = (robfig(), reference_python()) else {
        return;
    };
    let all: Vec<String> = lines(170)
        .into_iter()
        .filter(|l| cn_run::job::CronTab::new(l, "UTC").is_ok())
        .collect();
    let (portable, refused): (Vec<usize>, Vec<usize>) = (0..all.len()).partition(|i| {
        cn_run::job::CronTab::new(&all[*i], "UTC")
            .unwrap()
            .portable()
            .is_ok()
    });
    assert!(
        portable.len() >= 180 && !refused.is_empty(),
        "{} / {}",
        portable.len(),
        refused.len()
    );
    let tmp = tempfile::tempdir().unwrap();
    write_jobs(tmp.path(), &all);
    let ordinary: Vec<Window> = windows().into_iter().take(2).collect();
    let ours: Vec<_> = ordinary
        .iter()
        .map(|w| cn_run_list(tmp.path(), w))
        .collect();
    // (job name, line for the target, zone, window) per case
    let mut k8s_cases = Vec::new();
    let mut gh_cases = Vec::new();
    for (z, zone) in ZONES.iter().enumerate() {
        let k8s = k8s_schedules(&export(tmp.path(), "k8s-cronjob", z, &portable));
        let gh = github_schedules(&export(tmp.path(), "github-workflow", z, &portable));
        assert_eq!((k8s.len(), gh.len()), (portable.len(), portable.len()));
        for i in &portable {
            let name = format!("z{z}-j{i}");
            let (line, tz) = &k8s[&name];
            assert_eq!(tz, zone);
            for w in 0..ordinary.len() {
                k8s_cases.push((name.clone(), line.clone(), *zone, w));
                gh_cases.push((name.clone(), gh[&name].clone(), *zone, w));
            }
        }
    }
    let ask = |cases: &[(String, String, &'static str, usize)]| -> Vec<(String, &'static str, Timestamp, usize)> {
        cases.iter().map(|(_, l, z, w)| (l.clone(), *z, ordinary[*w].from, ordinary[*w].count)).collect()
    };
    let mut wrong = Vec::new();
    let mut compared = 0;
    let mut compare = |target: &str,
                       cases: &[(String, String, &str, usize)],
                       answers: Vec<Result<Vec<Timestamp>, String>>| {
        for ((name, line, zone, w), theirs) in cases.iter().zip(answers) {
            let Ok(theirs) = theirs else {
                wrong.push(format!("{target} refuses `{line}`: {theirs:?}"));
                continue;
            };
            let (mine, theirs) = outside_dst_days(zone, &ours[*w][name], &theirs);
            compared += mine.len();
            if theirs != mine {
                wrong.push(format!(
                    "{target} `{line}` in {zone}:\n  cn-run {mine:?}\n  {target} {theirs:?}"
                ));
            }
        }
    };
    compare(
        "kubernetes/robfig",
        &k8s_cases,
        robfig_runs(&robfig, &ask(&k8s_cases)),
    );
    compare(
        "github/robfig",
        &gh_cases,
        robfig_runs(&robfig, &ask(&gh_cases)),
    );
    compare(
        "github/cronsim",
        &gh_cases,
        reference_runs(&python, "cronsim", &ask(&gh_cases)),
    );
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(10)].join("\n")
    );
    assert!(compared > 20_000, "{compared} run times compared");
    // What cannot be said the same way there is refused, with the reason (a few through
    // the binary; the partition above asked the library of all).
    for i in refused.iter().take(4) {
        let mut cmd = cn_run(tmp.path());
        cmd.args([
            "export",
            "k8s-cronjob",
            "--image",
            "cn-run:test",
            &format!("z0/j{i}.yaml"),
        ]);
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "`{}`: {r:#?}", all[*i]);
        assert!(
            r.stderr.contains("must match both day fields"),
            "{}",
            r.stderr
        );
        assert!(r.stdout.is_empty());
    }
}

/// What the README says Kubernetes does on DST nights, on robfig itself: a fixed time the
/// clock skips does not run that night, one it repeats runs twice (cn-run: once each).
#[test]
fn kubernetes_reads_dst_nights_in_elapsed_time() {
    let Some(robfig) = robfig() else {
        return;
    };
    let ts = |s: &str| s.parse::<Timestamp>().unwrap();
    let cases = [
        (
            "30 2 * * *".to_owned(),
            "Europe/Berlin",
            ts("2025-03-29T12:00:00Z"),
            2,
        ),
        (
            "30 1 * * *".to_owned(),
            "America/New_York",
            ts("2025-11-01T12:00:00Z"),
            3,
        ),
    ];
    let theirs = robfig_runs(&robfig, &cases);
    assert_eq!(
        theirs[0].as_ref().unwrap(),
        &[ts("2025-03-31T00:30:00Z"), ts("2025-04-01T00:30:00Z")],
        "no run on the night of 30 March"
    );
    assert_eq!(
        theirs[1].as_ref().unwrap(),
        &[
            ts("2025-11-02T05:30:00Z"),
            ts("2025-11-02T06:30:00Z"),
            ts("2025-11-03T06:30:00Z")
        ],
        "01:30 EDT and 01:30 EST"
    );
    // cn-run schedule: 03:00 CEST on 30 March; 01:30 EDT once on 2 November.
    let berlin = cn_run::job::CronTab::new("30 2 * * *", "Europe/Berlin").unwrap();
    assert_eq!(
        berlin.next_after(cases[0].2).unwrap().timestamp(),
        ts("2025-03-30T01:00:00Z")
    );
    let ny = cn_run::job::CronTab::new("30 1 * * *", "America/New_York").unwrap();
    let runs: Vec<_> = ny
        .upcoming(cases[1].2, 2)
        .iter()
        .map(|z| z.timestamp())
        .collect();
    assert_eq!(
        runs,
        [ts("2025-11-02T05:30:00Z"), ts("2025-11-03T06:30:00Z")]
    );
}

/// The comment at the top of a generated file, as one line.
fn comment_of(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
    lines.join(" ").replace("# ", "")
}

/// The generated files say where the targets time runs otherwise, and stderr says it of the
/// jobs it concerns: GitHub's 5-minute minimum, `missed: run-once` there, DST nights.
#[test]
fn the_exported_files_say_where_the_targets_time_runs_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let model = "version: 1\nmodel: {provider: script, name: s, script: s.yaml}\nprompt: x\n";
    crate::support::runner::write_files(
        tmp.path(),
        &[
            (
                "often.yaml",
                &format!("{model}name: often\nschedule: \"*/2 * * * *\"\n"),
            ),
            (
                "berlin.yaml",
                &format!(
                    "{model}name: berlin\nschedule: {{cron: \"30 2 * * *\", timezone: Europe/Berlin, missed: run-once}}\n"
                ),
            ),
            ("s.yaml", "turns:\n  - text: hi\n"),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["export", "github-workflow", "often.yaml", "berlin.yaml"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let header = comment_of(&r.stdout);
    for words in [
        "at most every 5 minutes",
        "`berlin` has `missed: run-once`",
        "DST nights",
        "waits for it",
    ] {
        assert!(header.contains(words), "{words}: {header}");
    }
    assert!(
        r.stderr.contains("at most every 5 minutes") && r.stderr.contains("missed: run-once"),
        "{}",
        r.stderr
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args([
        "export",
        "k8s-cronjob",
        "--image",
        "cn-run:test",
        "often.yaml",
        "berlin.yaml",
    ]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let header = comment_of(&r.stdout);
    assert!(
        header.contains("follows elapsed time for every line"),
        "{header}"
    );
    assert!(header.contains("startingDeadlineSeconds (60 s"), "{header}");
    // A UTC-only export has no DST note.
    let mut cmd = cn_run(tmp.path());
    cmd.args([
        "export",
        "k8s-cronjob",
        "--image",
        "cn-run:test",
        "often.yaml",
    ]);
    let r = run(cmd, None);
    assert!(!r.stdout.contains("DST nights"), "{}", r.stdout);
}
