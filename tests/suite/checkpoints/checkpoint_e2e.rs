//! Checkpoints through the binary: a run in a git repo leaves hidden refs, a diff.patch
//! that reproduces its changes, HEAD and index untouched, and `cn-run rollback` undoes it.

use std::path::{Path, PathBuf};

use crate::support::runner::{cn_run, git, git_init, run, run_folder, write_files};

const SCRIPT: &str = "turns:
  - tool_calls:
      - {name: Read, arguments: {filepath: a.txt}}
  - tool_calls:
      - {name: Edit, arguments: {file_path: a.txt, old_string: alpha, new_string: ALPHA}}
      - {name: Write, arguments: {filepath: new/b.txt, content: \"brand new\\n\"}}
  - tool_calls:
      - {name: Bash, arguments: {command: 'rm gone.txt'}}
  - text: done
";

/// The run's checkpoint references in `ws`.
fn checkpoint_refs(ws: &Path) -> Vec<String> {
    git(ws, &["for-each-ref", "--format=%(refname)", "refs/cn-run/"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The run's folder and its result.json (a run made without `--out`).
fn run_result(ws: &Path) -> (PathBuf, serde_json::Value) {
    let dir = run_folder(ws);
    let text = std::fs::read_to_string(dir.join("result.json")).unwrap();
    (dir, serde_json::from_str(&text).unwrap())
}

/// The folder given to a run as `$XDG_RUNTIME_DIR`: where its private index goes.
fn runtime_dir(ws: &Path) -> PathBuf {
    let dir = ws.parent().unwrap().join("runtime");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary in `ws`, its private index in the test's own runtime folder.
fn cn_run_in(ws: &Path) -> std::process::Command {
    let mut cmd = cn_run(ws);
    cmd.env("XDG_RUNTIME_DIR", runtime_dir(ws));
    cmd
}

/// Private index folders the checkpointer left in the runtime folder or in `.git` (it
/// must leave none).
fn private_index_leftovers(ws: &Path) -> Vec<String> {
    [runtime_dir(ws), ws.join(".git")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cn-run-index-"))
        .collect()
}

fn setup(dir: &Path, extra: &str) {
    write_files(
        dir,
        &[
            ("a.txt", "alpha\nbeta\n"),
            ("gone.txt", "bye\n"),
            ("keep.txt", "same\n"),
        ],
    );
    git_init(dir);
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: /SCRIPT}}\nprompt: change things\npermissions: {{allow: ['Edit(*)', 'Write(**)', 'Bash(rm *)']}}\n{extra}"
    );
    let jobs = dir.parent().unwrap().join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    std::fs::write(jobs.join("s.yaml"), SCRIPT).unwrap();
    std::fs::write(jobs.join("job.yaml"), job.replace("/SCRIPT", "s.yaml")).unwrap();
}

/// A temp folder holding the workspace `ws` (set up as by [`setup`]) and `jobs/`.
fn workspace(extra: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    setup(&ws, extra);
    (tmp, ws)
}

/// `jobs/job.yaml` under `tmp` with `from` replaced by `to`; its path.
fn edit_job(tmp: &Path, from: &str, to: &str) -> PathBuf {
    let job = tmp.join("jobs/job.yaml");
    let text = std::fs::read_to_string(&job).unwrap().replace(from, to);
    std::fs::write(&job, text).unwrap();
    job
}

#[test]
fn checkpoints_diff_and_rollback() {
    let (tmp, ws) = workspace("");
    let head = git(&ws, &["rev-parse", "HEAD"]);
    let index_before = std::fs::read(ws.join(".git/index")).unwrap();
    let mut cmd = cn_run(&ws);
    cmd.arg(tmp.path().join("jobs/job.yaml"));
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "ALPHA\nbeta\n"
    );
    assert!(!ws.join("gone.txt").exists());
    // HEAD and the index are untouched; the run's snapshots are hidden refs.
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), head);
    assert_eq!(std::fs::read(ws.join(".git/index")).unwrap(), index_before);
    let refs = checkpoint_refs(&ws);
    assert!(refs.len() >= 3, "{refs:?}");
    // result.json reports the diff and the checkpoints.
    let (run_dir, result) = run_result(&ws);
    assert_eq!(result["diff"]["files"], 3, "{result}");
    assert!(result["checkpoints"].as_array().unwrap().len() >= 3);
    // diff.patch applied to a fresh copy of the start gives the final tree.
    let fresh = tmp.path().join("fresh");
    git(
        tmp.path(),
        &["clone", "-q", ws.to_str().unwrap(), fresh.to_str().unwrap()],
    );
    git(
        &fresh,
        &["apply", run_dir.join("diff.patch").to_str().unwrap()],
    );
    for f in ["a.txt", "new/b.txt", "keep.txt"] {
        assert_eq!(
            std::fs::read(fresh.join(f)).unwrap(),
            std::fs::read(ws.join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(!fresh.join("gone.txt").exists());
    // Rollback restores the start byte for byte.
    let mut cmd = cn_run(&ws);
    cmd.args(["rollback", "latest"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("gone.txt")).unwrap(),
        "bye\n"
    );
    assert!(!ws.join("new/b.txt").exists());
    assert_eq!(git(&ws, &["status", "--porcelain"]), "");
}

#[test]
fn rollback_on_failure_restores_the_start() {
    let (tmp, ws) =
        workspace("git: {rollback_on_failure: true}\nchecks: [{name: never, run: 'false'}]\n");
    let mut cmd = cn_run(&ws);
    cmd.arg(tmp.path().join("jobs/job.yaml"));
    let r = run(cmd, None);
    assert_eq!(r.code, 1, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    assert!(ws.join("gone.txt").exists());
    assert_eq!(git(&ws, &["status", "--porcelain"]), "");
}

#[test]
fn outside_git_the_run_works_and_says_so_once() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            (
                "job.yaml",
                "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: hi\n",
            ),
            ("s.yaml", "- text: ok\n"),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0);
    let warnings = r.events_of("warning");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]["message"]
            .as_str()
            .unwrap()
            .contains("checkpoints")
    );
    assert!(r.result()["diff"].is_null());
}

#[test]
fn a_secret_written_into_a_file_stays_exact_in_the_diff_and_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    write_files(&ws, &[("a.txt", "alpha\n")]);
    git_init(&ws);
    let secret = "ghp_secretInTheDiff0042";
    write_files(
        tmp.path(),
        &[
            (
                "job.yaml",
                "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: hi\npermissions: {allow: ['Write(**)']}\n",
            ),
            (
                "s.yaml",
                "turns:\n  - tool_calls:\n      - {name: Write, arguments: {filepath: creds.txt, content: \"token=ghp_secretInTheDiff0042\\n\"}}\n  - text: done\n",
            ),
        ],
    );
    let mut cmd = cn_run(&ws);
    cmd.arg(tmp.path().join("job.yaml"))
        .arg("--out")
        .arg(tmp.path().join("out"))
        .env("DEPLOY_TOKEN", secret);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["secret_in_diff"], true, "{result}");
    assert!(!result.to_string().contains(secret));
    // The patch stays exact so that it applies…
    let patch = std::fs::read_to_string(tmp.path().join("out/diff.patch")).unwrap();
    assert!(patch.contains(&format!("+token={secret}")), "{patch}");
    // …and the run says so, without repeating the value.
    let warnings = r.events_of("warning");
    assert!(
        warnings.iter().any(|w| w["message"]
            .as_str()
            .unwrap()
            .contains("diff.patch contains")),
        "{warnings:?}"
    );
    let events = std::fs::read_to_string(tmp.path().join("out/events.jsonl")).unwrap();
    assert!(!events.contains(secret));
}

/// A run that fails its set-up (here: a permissions file that does not exist) exits 2
/// and writes nothing to git, although the checkpoint thread started early to take the
/// system prompt's git status: no reference, no private index left in `.git`.
#[test]
fn a_run_that_cannot_start_leaves_no_checkpoint_behind() {
    let (tmp, ws) = workspace("");
    let job = edit_job(
        tmp.path(),
        "permissions: {allow:",
        "permissions: {file: no-such-permissions.yaml, allow:",
    );
    let mut cmd = cn_run_in(&ws);
    cmd.arg(&job);
    let r = run(cmd, None);
    assert_eq!(r.code, 2, "{r:#?}");
    assert!(r.stderr.contains("no-such-permissions.yaml"), "{r:#?}");
    let refs = checkpoint_refs(&ws);
    assert!(
        refs.is_empty(),
        "a run that did not start made checkpoints: {refs:?}"
    );
    let leftovers = private_index_leftovers(&ws);
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A run that only answers changes nothing: no snapshot is taken (no reference), its
/// result lists no checkpoint and an empty diff. The same job with one Read call takes
/// the start snapshot.
#[test]
fn a_run_that_only_answers_takes_no_snapshot() {
    for (script, snapshots) in [
        ("turns:\n  - text: just an answer\n", 0),
        (
            "turns:\n  - tool_calls:\n      - {name: Read, arguments: {filepath: a.txt}}\n  - text: read it\n",
            1,
        ),
    ] {
        let (tmp, ws) = workspace("");
        std::fs::write(tmp.path().join("jobs/s.yaml"), script).unwrap();
        let mut cmd = cn_run_in(&ws);
        cmd.arg(tmp.path().join("jobs/job.yaml"));
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{r:#?}");
        let refs = checkpoint_refs(&ws);
        assert_eq!(refs.len(), snapshots, "{script}: {refs:?}");
        let (run_dir, result) = run_result(&ws);
        assert_eq!(result["checkpoints"].as_array().unwrap().len(), snapshots);
        assert_eq!(result["diff"]["files"], 0, "{result}");
        assert_eq!(std::fs::read(run_dir.join("diff.patch")).unwrap(), b"");
        let leftovers = private_index_leftovers(&ws);
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

/// The private index lives in memory-backed `$XDG_RUNTIME_DIR` while the run goes (a
/// tool call lists that folder) and is gone afterwards; the user's index is untouched.
#[test]
fn the_private_index_lives_in_the_runtime_folder_and_goes_with_the_run() {
    let (tmp, ws) = workspace("");
    let runtime = runtime_dir(&ws);
    let script = format!(
        "turns:\n  - tool_calls:\n      - {{name: Bash, arguments: {{command: 'ls {}'}}}}\n  - text: listed\n",
        runtime.display()
    );
    std::fs::write(tmp.path().join("jobs/s.yaml"), script).unwrap();
    let job = edit_job(tmp.path(), "'Bash(rm *)'", "'Bash(ls *)'");
    // The listing looks at the host's runtime folder (under /tmp), which containment hides
    // behind the run's private /tmp: this test opts out of it.
    let text = std::fs::read_to_string(&job).unwrap() + "tools: {bash: {sandbox: off}}\n";
    std::fs::write(&job, text).unwrap();
    let index_before = std::fs::read(ws.join(".git/index")).unwrap();
    let mut cmd = cn_run_in(&ws);
    cmd.arg(&job);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let (run_dir, _) = run_result(&ws);
    let session = std::fs::read_to_string(run_dir.join("session.jsonl")).unwrap();
    assert!(
        session.contains("cn-run-index-"),
        "the listing shows the private index folder: {session}"
    );
    let leftovers = private_index_leftovers(&ws);
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(std::fs::read(ws.join(".git/index")).unwrap(), index_before);
}

/// Each checkpoint is reported after its call's `tool.finished` and before a call of a
/// later turn starts, in call order; the session file lists them all. The calls of one turn
/// run together (the Edit and the Write here) and their checkpoints are handed in once the
/// turn is done, so one call's checkpoint may come after another call of the same turn has
/// started: on a busy machine the Edit's file work can end before the turn's next call is
/// first polled, so the Edit ends before the Write starts (this test asked for the next
/// call of the same turn, and failed 1 run in 15 under load).
#[test]
fn checkpoint_events_come_after_their_call_and_before_the_next() {
    let (tmp, ws) = workspace("");
    let out = tmp.path().join("out");
    let mut cmd = cn_run_in(&ws);
    cmd.arg(tmp.path().join("jobs/job.yaml"));
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let events = r.events();
    let at = |kind: &str, call: &str| {
        events
            .iter()
            .position(|e| e["type"] == kind && e["call_id"] == call)
            .unwrap_or_else(|| panic!("no {kind} for {call}"))
    };
    let created: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "checkpoint.created" && !e["call_id"].is_null())
        .collect();
    assert_eq!(created.len(), 3, "Edit, Write and Bash each changed a file");
    let indexes: Vec<u64> = created
        .iter()
        .map(|e| e["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [1, 2, 3]);
    for c in &created {
        let call = c["call_id"].as_str().unwrap();
        let pos = at("checkpoint.created", call);
        assert!(
            pos > at("tool.finished", call),
            "{call}: reported before its call ended"
        );
        let turn = &events[at("tool.started", call)]["turn"];
        let next_turn = events
            .iter()
            .position(|e| e["type"] == "tool.started" && e["turn"].as_u64() > turn.as_u64());
        if let Some(next) = next_turn {
            assert!(
                pos < next,
                "{call}: reported after a later turn's call started"
            );
        }
    }
    let order: Vec<&str> = created
        .iter()
        .map(|e| e["call_id"].as_str().unwrap())
        .collect();
    let by_call: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool.started")
        .filter_map(|e| e["call_id"].as_str())
        .filter(|id| order.contains(id))
        .collect();
    assert_eq!(order, by_call, "checkpoints not in call order");
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "seq out of order");
    let session = crate::support::runner::session_of(&out);
    assert_eq!(
        session["checkpoints"].as_array().unwrap().len(),
        4,
        "start + 3"
    );
}

const ARTIFACT_SCRIPT: &str = "turns:
  - tool_calls:
      - {name: Bash, arguments: {command: 'dd if=/dev/urandom of=target/big.bin bs=1024 count=5 status=none'}}
  - tool_calls:
      - {name: Write, arguments: {filepath: small.txt, content: \"small\\n\"}}
  - text: done
";

/// A build artifact over `git.max_file_size` stays out: listed in the checkpoint event
/// and result.json, named (not shown) in diff.patch, left alone by rollback, while the
/// small file the run wrote is rolled back.
#[test]
fn an_artifact_over_the_job_limit_is_listed_not_stored_and_survives_rollback() {
    let (tmp, ws) = workspace("git: {max_file_size: 4KB, keep: 5}\n");
    std::fs::create_dir(ws.join("target")).unwrap();
    std::fs::write(tmp.path().join("jobs/s.yaml"), ARTIFACT_SCRIPT).unwrap();
    edit_job(tmp.path(), "'Bash(rm *)'", "'Bash(dd *)'");
    let out = tmp.path().join("out");
    let mut cmd = cn_run_in(&ws);
    cmd.arg(tmp.path().join("jobs/job.yaml"));
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    let artifact = std::fs::read(ws.join("target/big.bin")).unwrap();
    assert_eq!(artifact.len(), 5120);
    let result = r.result();
    assert_eq!(
        result["skipped"],
        serde_json::json!([{"path": "target/big.bin", "bytes": 5120}]),
        "{result}"
    );
    assert!(result["git_added_bytes"].as_u64().unwrap() > 0);
    let listed = r
        .events_of("checkpoint.created")
        .iter()
        .any(|e| e["skipped"][0]["path"] == "target/big.bin");
    assert!(listed, "no checkpoint event lists the artifact");
    let patch = std::fs::read(out.join("diff.patch")).unwrap();
    let text = String::from_utf8_lossy(&patch);
    assert!(text.contains("target/big.bin (5120 bytes)"), "{text}");
    assert!(
        patch.len() < 2000,
        "the patch carries the artifact: {} bytes",
        patch.len()
    );
    let refs = checkpoint_refs(&ws);
    for r in &refs {
        let files = git(&ws, &["ls-tree", "-r", "--name-only", r]);
        assert!(!files.contains("big.bin"), "{r} holds the artifact");
    }
    let mut cmd = cn_run_in(&ws);
    let run_id = result["session_id"].as_str().unwrap();
    cmd.args(["rollback", run_id, "-C"]).arg(&ws);
    let rb = run(cmd, None);
    assert_eq!(rb.code, 0, "{rb:#?}");
    assert_eq!(std::fs::read(ws.join("target/big.bin")).unwrap(), artifact);
    assert!(!ws.join("small.txt").exists());
}

/// `cn-run sessions prune` removes the runs' refs and reports what it freed.
#[test]
fn sessions_prune_removes_the_checkpoints() {
    let (tmp, ws) = workspace("");
    let mut cmd = cn_run_in(&ws);
    cmd.arg(tmp.path().join("jobs/job.yaml"));
    assert_eq!(run(cmd, None).code, 0);
    assert!(!checkpoint_refs(&ws).is_empty());
    let mut cmd = cn_run_in(&ws);
    cmd.args(["sessions", "prune", "-C"]).arg(&ws);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["runs"].as_array().unwrap().len(), 1, "{report}");
    assert!(report["objects_removed"].as_u64().unwrap() > 0, "{report}");
    assert!(checkpoint_refs(&ws).is_empty());
    git(&ws, &["fsck", "--no-dangling", "--connectivity-only"]);
}

/// Sizes that do not parse are located errors of the job file; good ones are accepted.
#[test]
fn git_size_settings_are_checked() {
    for bad in [
        "10 parsecs",
        "MB",
        "-5MB",
        "99999999999999999999GB",
        "1.5MB",
    ] {
        let (tmp, ws) = workspace(&format!("git: {{max_file_size: '{bad}'}}\n"));
        let mut cmd = cn_run_in(&ws);
        cmd.arg("validate").arg(tmp.path().join("jobs/job.yaml"));
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "{bad}: {r:#?}");
        assert!(
            r.stderr.contains("git.max_file_size") || r.stdout.contains("git.max_file_size"),
            "{bad}: {r:#?}"
        );
    }
    for good in ["10MB", "512 KiB", "1g", "2048", "0"] {
        let (tmp, ws) = workspace(&format!(
            "git: {{max_file_size: '{good}', max_dir_files: 50, binary_patch: true, keep: 3}}\n"
        ));
        let mut cmd = cn_run_in(&ws);
        cmd.arg("validate").arg(tmp.path().join("jobs/job.yaml"));
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{good}: {r:#?}");
    }
}

/// The end of the run takes its diff from the last checkpoint's tree only when every
/// change was a tool call checkpointed after it; a check command runs after the last
/// call, so what it changes (six kinds) is in diff.patch too.
#[test]
fn what_a_check_changes_after_the_last_call_is_in_the_diff() {
    let cases = [
        ("echo late > late.txt", "late.txt", "+late"),
        ("echo more >> keep.txt", "keep.txt", "+more"),
        ("rm keep.txt", "keep.txt", "-same"),
        ("echo tail >> a.txt", "a.txt", "+tail"),
        (
            "mkdir -p deep/er && echo x > deep/er/x.txt",
            "deep/er/x.txt",
            "+x",
        ),
        ("chmod +x keep.txt", "keep.txt", "new mode 100755"),
    ];
    for (command, path, line) in cases {
        let check = format!("checks: [{{name: c, run: '{command}'}}]\n");
        let (tmp, ws) = workspace(&check);
        let out = tmp.path().join("out");
        let mut cmd = cn_run_in(&ws);
        cmd.arg(tmp.path().join("jobs/job.yaml"));
        let r = run(cmd, Some(&out));
        assert_eq!(r.code, 0, "{command}: {r:#?}");
        let patch = std::fs::read_to_string(out.join("diff.patch")).unwrap();
        let section = patch
            .split("diff --git ")
            .find(|s| s.starts_with(&format!("a/{path} ")))
            .unwrap_or_else(|| panic!("{command}: {path} not in the patch:\n{patch}"));
        assert!(section.contains(line), "{command}: {section}");
        // The tools' own changes are there too.
        assert!(patch.contains("a/new/b.txt"), "{command}: {patch}");
    }
}

/// `cn-run rollback` and `sessions prune` decide their exit code by the error's class
/// (`CheckpointError::status`, then the one table): a run, a checkpoint or a repository the
/// command line names that is not there is exit 2 (it was 6); something in the way of the
/// restore is the environment, exit 6. The workspace is left as it was in each case.
#[test]
fn rollback_and_prune_exit_2_for_what_the_command_line_names_and_6_for_the_rest() {
    let (tmp, ws) = workspace("");
    let mut cmd = cn_run_in(&ws);
    cmd.arg(tmp.path().join("jobs/job.yaml"));
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run_folder(&ws).join("result.json")).unwrap(),
    )
    .unwrap();
    let id = result["session_id"].as_str().unwrap().to_owned();
    let plain = tempfile::tempdir().unwrap();
    let ws_arg = ws.to_str().unwrap().to_owned();
    let plain_arg = plain.path().to_str().unwrap().to_owned();
    // (arguments, exit code, words on stderr)
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["rollback", "run-nosuch", "-C", &ws_arg],
            2,
            "no checkpoints for run \"run-nosuch\"",
        ),
        (
            vec!["rollback", &id, "--to", "99", "-C", &ws_arg],
            2,
            "has no checkpoint 99",
        ),
        (
            vec!["rollback", "bad/id", "-C", &ws_arg],
            2,
            "cannot be used in a git reference name",
        ),
        (
            vec!["rollback", &id, "-C", &plain_arg],
            2,
            "is not inside a git repository",
        ),
        (
            vec!["sessions", "prune", "-C", &plain_arg],
            2,
            "is not inside a git repository",
        ),
    ];
    let before = std::fs::read_to_string(ws.join("a.txt")).unwrap();
    for (args, code, words) in &cases {
        let mut cmd = cn_run_in(&ws);
        cmd.args(args);
        let r = run(cmd, None);
        assert_eq!(r.code, *code, "{args:?}: {r:#?}");
        assert!(r.stderr.contains(words), "{args:?}: {}", r.stderr);
        assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), before);
    }
    // The start snapshot's commit object is gone from the repository: git fails, the
    // environment, exit 6.
    let start = git(&ws, &["rev-parse", &format!("refs/cn-run/{id}/0")]);
    let hex = start.trim();
    let object = ws.join(".git/objects").join(&hex[..2]).join(&hex[2..]);
    std::fs::remove_file(object).unwrap();
    let mut cmd = cn_run_in(&ws);
    cmd.args(["rollback", &id, "-C", &ws_arg]);
    let r = run(cmd, None);
    assert_eq!(r.code, 6, "{r:#?}");
    assert!(r.stderr.contains("git"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), before);
}
