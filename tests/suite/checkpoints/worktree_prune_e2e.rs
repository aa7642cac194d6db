//! A `--parallel` call killed in the middle (a cancelled CI job, `kill -9`) cannot remove
//! its throwaway worktrees and their `cn-run/<id>` branches; the next `--parallel` call on
//! the repository does, and says so — and leaves alone those of a call still running.

use std::path::Path;

use crate::support::live::{Live, wait_for_text};
use crate::support::procs;
use crate::support::runner::{cn_run, git, git_init, run, write_files};

/// Jobs `job1` and `job2` in `jobs/`: held at a gate (`go` in their worktree) when
/// `gated`, else an answer at once.
fn jobs(dir: &Path, tag: &str, gated: bool) -> Vec<std::path::PathBuf> {
    let turn = if gated {
        "  - tool_calls: [{name: Bash, arguments: {command: 'while [ ! -e go ]; do sleep 0.05; done'}}]\n"
    } else {
        ""
    };
    (1..=2)
        .map(|n| {
            let script = format!("turns:\n{turn}  - text: job {n} done\n");
            let job = format!(
                "version: 1\nname: {tag}{n}\nmodel: {{provider: script, name: m, script: s{tag}{n}.yaml}}\nprompt: work\npermissions: {{mode: auto, allow: ['Bash(while *)']}}\n"
            );
            let jobs = dir.join("jobs");
            write_files(&jobs, &[(&format!("{tag}{n}.yaml"), &job), (&format!("s{tag}{n}.yaml"), &script)]);
            jobs.join(format!("{tag}{n}.yaml"))
        })
        .collect()
}

/// A `--parallel 2` call of the gated jobs, held until both are at their gate.
fn held(repo: &Path, dir: &Path, tag: &str, out: &str) -> Live {
    let mut cmd = cn_run(repo);
    cmd.args(["--parallel", "2", "--out", out])
        .args(jobs(dir, tag, true));
    let live = Live::start(cmd, dir, None);
    for n in 1..=2 {
        let events = repo
            .join(out)
            .join(format!("{tag}{n}"))
            .join("events.jsonl");
        assert!(
            wait_for_text(&events, "-e go ]"),
            "{}",
            live.stderr_so_far()
        );
    }
    live
}

fn branches(repo: &Path) -> usize {
    git(repo, &["branch", "--list", "cn-run/*"]).lines().count()
}

fn worktrees(repo: &Path) -> usize {
    git(repo, &["worktree", "list"]).lines().count()
}

/// A quick `--parallel 2` call; its stderr.
fn quick(repo: &Path, dir: &Path, tag: &str) -> String {
    let mut cmd = cn_run(repo);
    cmd.args(["--parallel", "2", "--out"])
        .arg(format!("out-{tag}"))
        .args(jobs(dir, tag, false));
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    r.stderr
}

fn repo(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("repo");
    write_files(&repo, &[("a.txt", "a\n")]);
    git_init(&repo);
    repo
}

#[test]
fn the_worktrees_and_branches_of_a_killed_call_go_with_the_next_call() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let killed = held(&repo, tmp.path(), "k", "out-k");
    killed.signal("KILL");
    killed.wait();
    procs::kill_in_dir(&repo);
    assert_eq!(
        (worktrees(&repo), branches(&repo)),
        (3, 2),
        "the killed call left both"
    );
    let said = quick(&repo, tmp.path(), "q");
    assert_eq!(
        said.matches("removed the worktree and branch cn-run/")
            .count(),
        2,
        "{said}"
    );
    assert_eq!((worktrees(&repo), branches(&repo)), (1, 0));
    let left: Vec<_> = std::fs::read_dir(repo.join(".cn-run/worktrees"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_worktrees_of_a_call_still_running_stay() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let live = held(&repo, tmp.path(), "l", "out-l");
    let said = quick(&repo, tmp.path(), "q");
    assert!(!said.contains("removed the worktree"), "{said}");
    assert_eq!(
        (worktrees(&repo), branches(&repo)),
        (3, 2),
        "the live call's stay"
    );
    for wt in std::fs::read_dir(repo.join(".cn-run/worktrees")).unwrap() {
        let wt = wt.unwrap().path();
        if wt.is_dir() {
            std::fs::write(wt.join("go"), "").unwrap();
        }
    }
    let r = live.wait();
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        (worktrees(&repo), branches(&repo)),
        (1, 0),
        "{}\n{}",
        git(&repo, &["worktree", "list", "--porcelain"]),
        r.stderr
    );
}
