//! Where the export targets time runs differently from `cn-run schedule`, said at the top of
//! the generated file (and on stderr when it concerns a job), so nobody has to find out on a
//! DST night. The README's "Schedules elsewhere" table says the same, with its tests.

use jiff::{SignedDuration, Timestamp};

use super::ExportJob;
use crate::job::Missed;

/// GitHub's shortest interval between two runs of a schedule (its documentation).
const GITHUB_MIN_INTERVAL: SignedDuration = SignedDuration::from_mins(5);

/// Notes for a GitHub workflow.
pub(crate) fn github_notes(jobs: &[ExportJob]) -> Vec<String> {
    let mut notes = vec![
        "Timing next to `cn-run schedule`: GitHub may start a scheduled run late, or drop it, \
         when busy (cn-run starts it within a minute); a run due while the job's previous \
         run goes waits for it (one waits, an older waiting one is cancelled), where cn-run \
         skips it."
            .to_owned(),
    ];
    for job in jobs {
        let Ok(schedule) = job.schedule() else {
            continue;
        };
        let name = &job.job().name;
        if schedule.missed == Missed::RunOnce {
            let note =
                format!("`{name}` has `missed: run-once`: GitHub does not make up runs it missed.");
            tracing::warn!("{}: {note}", job.path);
            notes.push(note);
        }
        if let Some(gap) = shortest_gap(job).filter(|g| *g < GITHUB_MIN_INTERVAL) {
            let note = format!(
                "`{}` ({name}) fires {} s apart at times; GitHub runs a schedule at most every \
                 5 minutes.",
                schedule.cron,
                gap.as_secs()
            );
            tracing::warn!("{}: {note}", job.path);
            notes.push(note);
        }
    }
    if jobs.iter().any(observes_dst) {
        notes.push(
            "DST nights: GitHub documents that a time the clock skips runs at the next valid \
             time, as cn-run does for fixed times; it documents nothing for a repeated hour, \
             where cn-run runs a fixed time once and a `*` line in elapsed time."
                .to_owned(),
        );
    }
    notes
}

/// Notes for Kubernetes CronJobs.
pub(crate) fn k8s_notes(jobs: &[ExportJob]) -> Vec<String> {
    let mut notes = vec![
        "Timing next to `cn-run schedule`: with concurrencyPolicy Forbid, an occurrence that \
         comes during a run starts when the run ends if still within \
         startingDeadlineSeconds (60 s; none with `missed: run-once`), where cn-run skips it."
            .to_owned(),
    ];
    if jobs.iter().any(observes_dst) {
        notes.push(
            "DST nights: the CronJob controller follows elapsed time for every line, so a \
             fixed time the clock skips does not run and one it repeats runs twice; cn-run \
             runs the first at the end of the gap and the second once."
                .to_owned(),
        );
    }
    notes
}

/// Whether the job's zone changes its offset in the coming years.
fn observes_dst(job: &ExportJob) -> bool {
    job.schedule()
        .ok()
        .and_then(|s| jiff::tz::TimeZone::get(&s.timezone).ok())
        .is_some_and(|tz| tz.following(Timestamp::now()).next().is_some())
}

/// The shortest time between two of the job's next few hundred runs.
fn shortest_gap(job: &ExportJob) -> Option<SignedDuration> {
    let tab = job.schedule().ok()?.compile().ok()?;
    let runs = tab.upcoming(Timestamp::now(), 300);
    runs.windows(2)
        .map(|w| w[1].timestamp().duration_since(w[0].timestamp()))
        .min()
}
