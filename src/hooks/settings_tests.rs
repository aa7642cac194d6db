//! Which repository settings files give hooks, in which order, and which are refused.

use std::time::Duration;

use super::*;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A Claude settings file with one Stop hook, command `a`.
const ONE_STOP_HOOK: &str =
    r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}"#;

fn commands(defs: &[HookDef]) -> Vec<&str> {
    defs.iter().map(|d| d.command.command.as_str()).collect()
}

#[test]
fn a_claude_settings_file_reads_its_hooks_and_skips_foreign_events() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "s.json",
        r#"{"permissions": {"allow": ["Bash(ls)"]},
            "hooks": {
              "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": 5, "statusMessage": "checking"}]}],
              "PermissionRequest": [{"hooks": [{"type": "command", "command": "y"}]}]
            }}"#,
    );
    let s = read_settings(&dir.path().join("s.json"), "s.json").unwrap();
    assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
    assert!(
        s.notes[0].contains("hooks.PermissionRequest"),
        "{:?}",
        s.notes
    );
    let defs = flatten(&s.section, HookOrigin::Repository);
    assert_eq!(defs.len(), 1);
    assert_eq!(defs[0].event, HookEvent::PreToolUse);
    assert_eq!(defs[0].matcher.as_deref(), Some("Bash"));
    assert_eq!(defs[0].command.timeout(), Duration::from_secs(5));
}

#[test]
fn hooks_of_other_types_are_skipped_by_name_and_the_command_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "s.json",
        r#"{"hooks": {"Stop": [{"hooks": [
            {"type": "prompt", "prompt": "Are the tests green? $ARGUMENTS"},
            {"type": "command", "command": "./check.sh"},
            {"type": "agent", "prompt": "review"},
            {"type": "http", "url": "http://127.0.0.1:9/hook"}]}]}}"#,
    );
    let s = read_settings(&dir.path().join("s.json"), "s.json").unwrap();
    assert_eq!(
        commands(&flatten(&s.section, HookOrigin::Repository)),
        ["./check.sh"]
    );
    assert_eq!(s.notes.len(), 3, "{:?}", s.notes);
    for (note, kind, j) in [(0, "prompt", 0), (1, "agent", 2), (2, "http", 3)] {
        let n = &s.notes[note];
        assert!(n.contains(&format!("hooks.Stop[0].hooks[{j}]")), "{n}");
        assert!(n.contains(&format!("`{kind}`")), "{n}");
    }
}

#[test]
fn a_malformed_command_hook_is_an_error_naming_where() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "s.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": 7}]}]}}"#,
    );
    let e = read_settings(&dir.path().join("s.json"), "s.json").unwrap_err();
    assert!(e.to_string().contains("hooks.Stop[0].hooks[0]"), "{e}");
}

#[test]
fn continue_and_claude_files_add_up_in_continues_order() {
    let dir = tempfile::tempdir().unwrap();
    let one = |c: &str| {
        format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{c}"}}]}}]}}}}"#
        )
    };
    write(dir.path(), ".continue/settings.local.json", &one("d"));
    write(dir.path(), ".claude/settings.local.json", &one("c"));
    write(dir.path(), ".continue/settings.json", &one("b"));
    write(dir.path(), ".claude/settings.json", &one("a"));
    let (defs, warnings) = repository_hooks(dir.path());
    assert_eq!(commands(&defs), ["a", "b", "c", "d"], "{warnings:?}");
    assert!(defs.iter().all(|d| d.origin == HookOrigin::Repository));
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn disable_all_hooks_turns_the_repositorys_hooks_off() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".claude/settings.json", ONE_STOP_HOOK);
    write(
        dir.path(),
        ".continue/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    let (defs, warnings) = repository_hooks(dir.path());
    assert!(defs.is_empty(), "{defs:?}");
    assert!(warnings[0].contains("disableAllHooks"), "{warnings:?}");
}

#[test]
fn a_settings_file_that_is_a_link_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "elsewhere.json", ONE_STOP_HOOK);
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.json"),
        dir.path().join(".claude/settings.json"),
    )
    .unwrap();
    let (defs, warnings) = repository_hooks(dir.path());
    assert!(defs.is_empty());
    assert!(warnings[0].contains("symbolic link"), "{warnings:?}");
}
