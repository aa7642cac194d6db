//! A run that cannot start says why, and its exit code says whose fault it is: a job file or
//! command line that is wrong is exit 2 with the place of the problem; a run folder, a
//! workspace copy or a git worktree the runner cannot make is the environment, exit 6, in
//! words. (Tests run as root, so every failure here is one root meets too: a path below a
//! regular file, a directory where a file must go.)

use std::path::Path;

use crate::support::runner::{Run, cn_run, git_init, run, write_files};

fn job(dir: &Path, file: &str, name: &str, rest: &str) {
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: work\n{rest}"
    );
    write_files(dir, &[(file, &job), ("s.yaml", "turns:\n  - text: done\n")]);
}

fn cn(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = cn_run(dir);
    cmd.args(args);
    run(cmd, None)
}

/// Run folders the runner cannot make or write: each exit 6, naming the folder or file.
#[test]
fn a_run_folder_the_runner_cannot_write_exits_6_saying_what() {
    let cases: [(&str, &[&str], &str, &str); 5] = [
        (
            "below a file",
            &["--out", "plain/out"],
            "",
            "cannot write the run folder",
        ),
        (
            "deep below a file",
            &["--out", "plain/a/b/c"],
            "",
            "cannot write the run folder",
        ),
        (
            "the folder is a file",
            &["--out", "plain"],
            "",
            "cannot write the run folder",
        ),
        (
            "events.jsonl is a folder",
            &["--out", "taken"],
            "",
            "cannot write the run's files",
        ),
        (
            "the workspace copy cannot be made",
            &["--out", "copyout"],
            "workspace: {path: ., copy: true}\n",
            "cannot copy the workspace",
        ),
    ];
    for (what, flags, rest, words) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        job(ws, "job.yaml", "j", rest);
        write_files(
            ws,
            &[
                ("plain", "a regular file\n"),
                ("copyout/workspace", "a file\n"),
            ],
        );
        std::fs::create_dir_all(ws.join("taken/events.jsonl")).unwrap();
        let mut args = vec!["job.yaml"];
        args.extend_from_slice(flags);
        let r = cn(ws, &args);
        assert_eq!(r.code, 6, "{what}: {r:#?}");
        assert!(r.stderr.contains(words), "{what}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{what}: {}", r.stdout);
    }
}

/// The default run folder (`.cn-run/<id>`) cannot be made when `.cn-run` is a file.
#[test]
fn a_default_run_folder_that_cannot_be_made_exits_6() {
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "job.yaml", "j", "");
    write_files(tmp.path(), &[(".cn-run", "not a folder\n")]);
    let r = cn(tmp.path(), &["job.yaml"]);
    assert_eq!(r.code, 6, "{r:#?}");
    assert!(
        r.stderr.contains("cannot write the run folder"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(".cn-run"), "{}", r.stderr);
}

/// A git worktree that cannot be made (in a repository that has a commit) is the
/// environment: exit 6, with the job named and the reason.
#[test]
fn a_git_worktree_that_cannot_be_made_exits_6() {
    // (what, a file planted where git or cn-run needs a folder, more flags)
    let cases: [(&str, &str, &[&str]); 5] = [
        ("worktree folder's parent is a file", ".cn-run", &[]),
        ("worktrees folder is a file", ".cn-run/worktrees", &[]),
        (
            "git's worktree admin folder is a file",
            ".git/worktrees",
            &[],
        ),
        (
            "the branch namespace is a file",
            ".git/refs/heads/cn-run",
            &[],
        ),
        (
            "one job asked to isolate",
            ".cn-run",
            &["--isolate", "worktree"],
        ),
    ];
    for (what, plant, extra) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        job(ws, "a.yaml", "first", "");
        job(ws, "b.yaml", "second", "");
        git_init(ws);
        write_files(ws, &[(plant, "in the way\n")]);
        let mut args = vec!["--out", "out"];
        if extra.is_empty() {
            args.extend(["a.yaml", "b.yaml"]);
        } else {
            args.push("a.yaml");
            args.extend_from_slice(extra);
        }
        let r = cn(ws, &args);
        assert_eq!(r.code, 6, "{what}: {r:#?}");
        assert!(
            r.stderr.contains("cannot make the run's git worktree") && r.stderr.contains("first"),
            "{what}: {}",
            r.stderr
        );
    }
}

/// Without a repository there is no worktree to make: the command line asked for
/// something the workspace cannot give, nothing ran, exit 2.
#[test]
fn a_worktree_outside_a_repository_is_still_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "a.yaml", "first", "");
    let r = cn(
        tmp.path(),
        &["a.yaml", "--isolate", "worktree", "--out", "o"],
    );
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(
        r.stderr.contains("not inside a git repository"),
        "{}",
        r.stderr
    );
}

/// A bad job file is still exit 2, with the place of the problem (file:line:column).
#[test]
fn a_bad_job_file_still_exits_2_with_a_located_error() {
    let cases: [(&str, &str, &str); 5] = [
        ("unknown field", "limits: {max_turn: 3}\n", "job.yaml:5:"),
        ("bad duration", "limits: {timeout: soon}\n", "job.yaml:5:"),
        ("bad mode", "permissions: {mode: yolo}\n", "job.yaml:5:"),
        ("yaml syntax", "limits: {max_turns: [\n", "job.yaml:"),
        (
            "duplicate key",
            "limits: {max_turns: 2}\nlimits: {max_turns: 3}\n",
            "job.yaml:6:",
        ),
    ];
    for (what, rest, place) in cases {
        let tmp = tempfile::tempdir().unwrap();
        job(tmp.path(), "job.yaml", "j", rest);
        let r = cn(tmp.path(), &["job.yaml", "--out", "o"]);
        assert_eq!(r.code, 2, "{what}: {r:#?}");
        assert!(r.stderr.contains(place), "{what}: {}", r.stderr);
        assert!(!tmp.path().join("o").exists(), "{what}: nothing ran");
    }
    // Command-line mistakes are exit 2 too.
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "job.yaml", "j", "");
    for args in [
        &["job.yaml", "--timeout", "soon"][..],
        &["missing.yaml"][..],
        &["job.yaml", "--allow", "Bsh(ls)"][..],
    ] {
        let r = cn(tmp.path(), args);
        assert_eq!(r.code, 2, "{args:?}: {r:#?}");
    }
}
