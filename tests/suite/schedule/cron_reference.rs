//! `cn-run schedule --list` against cronsim (PyPI), which follows Debian's cron (the day-field
//! star rule and its daylight-saving rule included): the dialect's traps and a couple of
//! hundred generated lines, in seven time zones, on ordinary days and on each zone's DST
//! nights (two start instants per transition: before a fall-back's first pass, and just
//! before the change). One cn-run process per start instant lists every job of the zones
//! it covers; one python process answers every case.

use crate::support::cron_ref::{
    ZONES, cn_run_list, expanded, lines, reference_python, reference_runs, windows, write_jobs,
};

/// Whether neither the minute nor the hour field starts with `*` (read on the wall clock).
fn fixed_time(line: &str) -> bool {
    let fields: Vec<&str> = expanded(line).split_whitespace().collect();
    !fields[0].starts_with('*') && !fields[1].starts_with('*')
}

#[test]
fn schedule_list_fires_at_cronsims_instants_in_seven_zones_and_their_dst_nights() {
    let Some(python) = reference_python() else {
        return;
    };
    let all = lines(170);
    let (valid, refused): (Vec<String>, Vec<String>) = all
        .into_iter()
        .partition(|l| cn_run::job::CronTab::new(l, "UTC").is_ok());
    assert!(valid.len() >= 200, "{} valid lines", valid.len());
    let tmp = tempfile::tempdir().unwrap();
    write_jobs(tmp.path(), &valid);
    let windows = windows();
    let mut cases = Vec::new();
    let mut keys = Vec::new();
    for (w, window) in windows.iter().enumerate() {
        for z in &window.zones {
            for (i, line) in valid.iter().enumerate() {
                cases.push((line.clone(), ZONES[*z], window.from, window.count));
                keys.push((w, format!("z{z}-j{i}")));
            }
        }
    }
    // Lines cn-run refuses as never firing, cronsim refuses too.
    let never: Vec<_> = refused
        .iter()
        .map(|l| (l.clone(), "UTC", windows[0].from, 1))
        .collect();
    // The reference and cn-run's listings (a few processes at a time) run side by side.
    let (theirs, refusals, ours) = std::thread::scope(|s| {
        let reference = s.spawn(|| reference_runs(&python, "cronsim", &cases));
        let refusals = s.spawn(|| reference_runs(&python, "cronsim", &never));
        // Every thread is spawned before any is joined.
        #[allow(clippy::needless_collect)]
        let lists: Vec<_> = windows
            .chunks(windows.len().div_ceil(3))
            .map(|chunk| {
                s.spawn(|| {
                    chunk
                        .iter()
                        .map(|w| cn_run_list(tmp.path(), w))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let ours: Vec<_> = lists.into_iter().flat_map(|l| l.join().unwrap()).collect();
        (reference.join().unwrap(), refusals.join().unwrap(), ours)
    });
    for ((line, ..), answer) in never.iter().zip(&refusals) {
        assert!(
            answer.is_err(),
            "`{line}`: cn-run refuses it, cronsim lists {answer:?}"
        );
    }
    let mut differ = Vec::new();
    for (((w, name), case), reference) in keys.iter().zip(&cases).zip(&theirs) {
        let mine = &ours[*w][name];
        if reference.as_ref() != Ok(mine) {
            differ.push((case.clone(), mine.clone(), reference.clone()));
        }
    }
    // cronsim steps elapsed-time lines hour by hour from `minute=0`, which lands on the
    // half hour in Lord Howe's +10:30 once its fall-back is passed: there, croniter (which
    // steps minutes) is the reference, and it must agree with cn-run.
    let (half_hour, wrong): (Vec<_>, Vec<_>) = differ
        .into_iter()
        .partition(|(case, ..)| case.1 == "Australia/Lord_Howe" && !fixed_time(&case.0));
    let second: Vec<_> = half_hour.iter().map(|(case, ..)| case.clone()).collect();
    let croniter = reference_runs(&python, "croniter", &second);
    let mut wrong: Vec<String> = wrong
        .iter()
        .map(|(case, mine, theirs)| {
            format!(
                "`{}` in {} after {}:\n  cn-run  {mine:?}\n  cronsim {theirs:?}",
                case.0, case.1, case.2
            )
        })
        .collect();
    for ((case, mine, _), theirs) in half_hour.iter().zip(&croniter) {
        if theirs.as_ref() != Ok(mine) {
            wrong.push(format!(
                "`{}` in {} after {}:\n  cn-run   {mine:?}\n  croniter {theirs:?}",
                case.0, case.1, case.2
            ));
        }
    }
    eprintln!(
        "{} cases; {} decided by croniter (Lord Howe)",
        cases.len(),
        half_hour.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ; the first ones:\n{}",
        wrong.len(),
        cases.len(),
        wrong
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
