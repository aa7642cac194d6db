//! One reading of every command, end to end, by its effects: commands that once passed the
//! rule matcher as one part (its own splitter did not know `$'…'` quoting or comments) or ran
//! under `--auto` inside a substitution now leave their marker unwritten, while the allowed
//! part of the same script still runs; `--readonly` leaves a tracked file unchanged.
//!
//! The jobs turn the sandbox off: these tests show the policy layer on its own (what users
//! rely on where containment is off or partial), and a contained run would keep the markers
//! outside the workspace unwritten whatever the policy said.

use std::path::Path;

use crate::support::runner::{cn_run, run, write_files};

/// Runs a scripted model that makes each call in `commands` in turn, with extra flags.
fn scripted(ws: &Path, commands: &[&str], flags: &[&str]) -> crate::support::runner::Run {
    let calls: String = commands
        .iter()
        .map(|c| {
            let arg = serde_json::json!({ "command": c }).to_string();
            format!("  - tool_calls: [{{name: Bash, arguments: {arg}}}]\n")
        })
        .collect();
    let script = format!("turns:\n{calls}  - text: done\n");
    let job = "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\npermissions: {on_ask: deny}\ntools: {bash: {sandbox: off}}\n";
    write_files(ws, &[("job.yaml", job), ("s.yaml", &script)]);
    let mut cmd = cn_run(ws);
    cmd.arg(ws.join("job.yaml")).arg("-C").arg(ws).args(flags);
    run(cmd, Some(&ws.join("../out")))
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (tmp, ws, outside)
}

#[test]
fn a_quoted_quote_or_a_comment_does_not_carry_a_command_past_an_allow_rule() {
    let (_tmp, ws, outside) = setup();
    let commands = [
        "true $'\\''; touch ../outside/ansi",
        "true # it's fine\ntouch ../outside/comment",
        "true $\"x\"; touch ../outside/locale",
        "touch ../outside/allowed",
    ];
    let r = scripted(
        &ws,
        &commands,
        &[
            "--allow",
            "Bash(true *)",
            "--allow",
            "Bash(touch ../outside/allowed)",
        ],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        outside.join("allowed").exists(),
        "the control call ran: {r:#?}"
    );
    for marker in ["ansi", "comment", "locale"] {
        assert!(
            !outside.join(marker).exists(),
            "{marker} was written: {r:#?}"
        );
    }
}

#[test]
fn an_excluded_command_is_excluded_inside_quotes_substitutions_and_shells() {
    let (_tmp, ws, outside) = setup();
    let commands = [
        "true $'\\'' && touch ../outside/ansi",
        "echo $(touch ../outside/subst)",
        "echo `touch ../outside/backtick`",
        "bash -c 'touch ../outside/shell'",
        "sh <<EOF\ntouch ../outside/heredoc\nEOF",
        "true; mkdir ../outside/control",
    ];
    let r = scripted(&ws, &commands, &["--auto", "--exclude", "Bash(touch *)"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        outside.join("control").exists(),
        "auto mode ran the control: {r:#?}"
    );
    for marker in ["ansi", "subst", "backtick", "shell", "heredoc"] {
        assert!(
            !outside.join(marker).exists(),
            "{marker} was written: {r:#?}"
        );
    }
}

#[test]
fn readonly_leaves_the_tree_unchanged() {
    let (_tmp, ws, _outside) = setup();
    write_files(&ws, &[("tracked.txt", "original\n")]);
    let commands = [
        "echo changed > tracked.txt",
        "printf x >> tracked.txt",
        "touch new.txt",
        "tee tracked.txt < /dev/null",
        "cat tracked.txt",
    ];
    let r = scripted(&ws, &commands, &["--readonly"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("tracked.txt")).unwrap(),
        "original\n"
    );
    assert!(!ws.join("new.txt").exists());
}

#[test]
fn check_command_says_whether_builds_run_contained() {
    let tmp = tempfile::tempdir().unwrap();
    let judge = |flags: &[&str]| {
        let mut cmd = cn_run(tmp.path());
        cmd.arg("check-command").args(flags).arg("cargo test");
        run(cmd, None)
    };
    let contained = judge(&[]);
    assert_eq!(contained.code, 0, "{contained:#?}");
    assert!(contained.stderr.contains("contained"), "{contained:#?}");
    let bare = judge(&["--uncontained"]);
    assert_eq!(bare.code, 1, "{bare:#?}");
    assert!(bare.stdout.contains("build.uncontained"), "{bare:#?}");
    assert!(bare.stderr.contains("not contained"), "{bare:#?}");
}

/// A nested repository the model unpacked (`sub/`), whose config names programs for git to
/// run (an fsmonitor, an external diff) that write a marker outside the workspace.
fn plant_nested_repo(ws: &Path, outside: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let sub = ws.join("sub");
    write_files(&sub, &[("a.txt", "one\n")]);
    crate::support::runner::git(&sub, &["init", "-q"]);
    crate::support::runner::git(&sub, &["add", "a.txt"]);
    crate::support::runner::git(&sub, &["commit", "-qm", "one"]);
    let trap = sub.join(".git/trap.sh");
    let body = format!("#!/bin/sh\necho ran >> {}\n", outside.join("ran").display());
    std::fs::write(&trap, body).unwrap();
    std::fs::set_permissions(&trap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let trap = trap.to_str().unwrap();
    crate::support::runner::git(&sub, &["config", "core.fsmonitor", trap]);
    crate::support::runner::git(&sub, &["config", "diff.external", trap]);
    std::fs::write(sub.join("a.txt"), "two\n").unwrap();
}

#[test]
fn git_after_cd_into_a_nested_repository_runs_none_of_its_programs() {
    let (_tmp, ws, outside) = setup();
    plant_nested_repo(&ws, &outside);
    let commands = [
        "cd sub && git status",
        "cd sub; git diff",
        "pushd sub && git status --short",
        "(cd sub && git diff)",
        "cd sub\ngit status",
        "cd ./sub && ls && git status --porcelain",
        "sh -c 'cd sub && git diff'",
        "cd sub && env git status",
        "env -C sub git status",
        "touch ../outside/control",
    ];
    let r = scripted(
        &ws,
        &commands,
        &["--allow", "Bash(touch ../outside/control)"],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(outside.join("control").exists(), "the control ran: {r:#?}");
    assert!(
        !outside.join("ran").exists(),
        "a program from sub/.git/config ran: {r:#?}"
    );

    // The trap is live: with git allowed by a rule, the same command runs it.
    let allow = ["--allow", "Bash(cd *)", "--allow", "Bash(git *)"];
    let r = scripted(&ws, &["cd sub && git status"], &allow);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        outside.join("ran").exists(),
        "the planted fsmonitor is not live: {r:#?}"
    );
}

/// Under `--auto`, which allows what only needs permission: a disabled command (`eval`, whose
/// effect is a marker) before an unterminated quote, or behind a wrapper cn-run does not know,
/// never runs; bash would have run both (it runs the complete lines before a broken one). The
/// control, which only needs permission, runs.
#[test]
fn a_disabled_command_stays_disabled_before_a_broken_line_or_behind_an_unknown_wrapper() {
    let (_tmp, ws, outside) = setup();
    let commands = [
        "eval 'touch ../outside/unterminated'\necho \"abc",
        "eval 'touch ../outside/dollar'\necho $(date",
        "taskset -c 0 sh -c \"eval 'touch ../outside/wrapper'\"",
        "chrt -o 0 sh -c \"eval 'touch ../outside/chrt'\"",
        "touch ../outside/control",
    ];
    let r = scripted(&ws, &commands, &["--auto"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(outside.join("control").exists(), "{r:#?}");
    for marker in ["unterminated", "dollar", "wrapper", "chrt"] {
        assert!(!outside.join(marker).exists(), "{marker} ran: {r:#?}");
    }
}

/// `xargs rm -r` with its targets from the input is `rm -r $(…)`: never run, even under
/// `--auto` with the sandbox off; each folder named in the input is still there after the
/// run. The control, `rm -r` with the target spelled, runs.
#[test]
fn xargs_rm_with_targets_from_its_input_removes_nothing() {
    let (_tmp, ws, outside) = setup();
    let names = ["piped", "listed", "from_file", "nul", "found"];
    for name in names.iter().chain(&["control"]) {
        std::fs::create_dir_all(outside.join(name)).unwrap();
        std::fs::write(outside.join(name).join("keep.txt"), "x").unwrap();
    }
    std::fs::write(ws.join("list"), "../outside/listed\n").unwrap();
    std::fs::write(ws.join("list2"), "../outside/from_file\n").unwrap();
    let commands = [
        "echo ../outside/piped | xargs rm -rf",
        "xargs rm -rf < list",
        "xargs -a list2 rm -r",
        "printf '../outside/nul\\0' | xargs -0 -I{} rm -rf {}",
        "find ../outside -maxdepth 1 -name found | xargs rm -rf",
        "rm -r ../outside/control",
    ];
    let r = scripted(&ws, &commands, &["--auto"]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(!outside.join("control").exists(), "the control ran: {r:#?}");
    for name in names {
        assert!(
            outside.join(name).join("keep.txt").exists(),
            "{name} was removed: {r:#?}"
        );
    }
}

/// Writes after `cd` into `.git`, in several spellings, leave `.git/config` and the hooks
/// unchanged when nobody grants permission; the same write after `cd src` runs.
#[test]
fn writes_after_cd_into_git_leave_its_config_and_hooks_unchanged() {
    let (_tmp, ws, _outside) = setup();
    crate::support::runner::git(&ws, &["init", "-q"]);
    write_files(&ws, &[("src/a.txt", "a\n")]);
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    let config = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    let commands = [
        "cd .git && printf '\\tfsmonitor = touch fsmonitor-ran\\n' >> config",
        "pushd .git && echo x >> config",
        "(cd .git && echo x >> config)",
        "cd .g?t; echo 'touch hook-ran' > hooks/pre-commit",
        "env -C .git sh -c 'echo x >> config'",
        "cd .git/hooks && echo id > post-merge",
        "cd src && echo ok > note.txt",
    ];
    let r = scripted(&ws, &commands, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        config
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!ws.join(".git/hooks/post-merge").exists());
    assert!(ws.join("src/note.txt").exists(), "{r:#?}");
}
