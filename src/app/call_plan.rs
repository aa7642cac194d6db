//! What a `run` command line decides for the whole call, read from its flags once: the
//! choices the jobs share (stdout's format, the call's folder and JUnit file, how many run
//! at a time, their isolation), and what each job's [`Call`] is — with several jobs, its
//! own folder under `--out` and the number of jobs in the call. `--parallel` changes
//! nothing in a resolved [`crate::config::RunConfig`]: it is resolved with these values.
//! After the jobs are resolved, nothing reads `RunArgs`.

use std::path::PathBuf;

use crate::cli::{Format, Isolate, RunArgs};
use crate::config::{Answers, Call};
use crate::job::Job;

#[derive(Debug, Clone)]
pub(crate) struct CallPlan {
    pub format: Format,
    /// `--out DIR`: the run's folder, or with several jobs the call's.
    pub out: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    /// How many jobs run at the same time (at least one).
    pub parallel: usize,
    /// `--isolate`, if given (the default depends on the number of jobs).
    pub isolate: Option<Isolate>,
    /// `--html on|off`, if given (else the job's `outputs.html`).
    pub html: Option<bool>,
    /// `--approve`, `--deny`, `--reason`: answers to a resumed run's waiting calls.
    pub answers: Answers,
    /// Set by the runner for a call it makes part of a larger one.
    jobs_in_call: usize,
}

impl From<&RunArgs> for CallPlan {
    fn from(args: &RunArgs) -> Self {
        CallPlan {
            format: args.format,
            out: args.out.clone(),
            junit: args.junit.clone(),
            parallel: args.parallel.max(1),
            isolate: args.isolate,
            html: args.html.map(|s| s == crate::cli::Switch::On),
            answers: answers(args),
            jobs_in_call: args.jobs_in_call,
        }
    }
}

impl CallPlan {
    /// Each job's call-wide settings, in the jobs' order: a lone job writes to `--out`
    /// itself; several each to their own folder under it (`parallel_report::job_out_dirs`)
    /// and share the step summary.
    pub(crate) fn job_calls(&self, jobs: &[Job]) -> Vec<Call> {
        let (outs, jobs_in_call) = match jobs.len() {
            0 | 1 => (vec![self.out.clone(); jobs.len()], self.jobs_in_call),
            n => (
                super::parallel_report::job_out_dirs(jobs, self.out.as_deref()),
                n,
            ),
        };
        outs.into_iter()
            .map(|out| Call {
                format: self.format,
                out,
                jobs_in_call,
                html: self.html,
                answers: self.answers.clone(),
                elsewhere: false,
            })
            .collect()
    }

    /// The isolation the jobs run with: `--isolate`, else a worktree each when there are
    /// several.
    pub(crate) fn isolation(&self, jobs: usize) -> Isolate {
        self.isolate.unwrap_or(if jobs > 1 {
            Isolate::Worktree
        } else {
            Isolate::None
        })
    }
}

/// The answers the command line gives to deferred calls (a resume's).
pub(crate) fn answers(args: &RunArgs) -> Answers {
    Answers {
        approve: args.approve.clone(),
        deny: args.deny.clone(),
        reason: args.reason.clone(),
    }
}
