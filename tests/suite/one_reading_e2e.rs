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
