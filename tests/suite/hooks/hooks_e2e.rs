//! Hooks with Claude Code's protocol, end to end: the scripts in `tests/fixtures/hooks`
//! (POSIX sh, Python, Node.js, written from Claude Code's public hooks reference) run
//! through cn-run on the scripted provider, and each test checks what they did — a file
//! written or not, what the model was told, what result.json says. Every defence has its
//! control: the same payload with the defence absent takes effect.

use std::path::Path;

use serde_json::Value;

use crate::support::runner::{Run, cn_run, repo_root, run, session_of, write_files};

/// Copies the fixture hooks into `ws/.hooks`.
pub(super) fn install_hooks(ws: &Path) {
    let dest = ws.join(".hooks");
    std::fs::create_dir_all(&dest).unwrap();
    for entry in std::fs::read_dir(repo_root().join("tests/fixtures/hooks")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dest.join(path.file_name().unwrap())).unwrap();
    }
}

/// A Python 3 the sandbox can see (a pyenv shim under a hidden home may not be).
pub(super) fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// A job over the script `turns` (YAML list items), with `rest` added.
fn setup(ws: &Path, rest: &str, turns: &str) {
    install_hooks(ws);
    let job = format!(
        "version: 1\nname: hooked\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: do the task\n{rest}"
    );
    write_files(
        ws,
        &[
            ("job.yaml", &job),
            ("s.yaml", &format!("turns:\n{turns}")),
            ("tool.sh", "echo tool\n"),
        ],
    );
}

fn start(ws: &Path, extra: &[&str]) -> Run {
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml").args(extra);
    run(cmd, Some(&ws.join("out")))
}

fn bash(id: &str, command: &str) -> String {
    let command = command.replace('\'', "''");
    format!("  - tool_calls: [{{name: Bash, id: {id}, arguments: {{command: '{command}'}}}}]\n")
}

/// The result the model got for call `id`.
fn told(r: &Run, id: &str) -> String {
    r.events_of("tool.finished")
        .iter()
        .find(|e| e["call_id"] == id)
        .map(|e| e["output"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

fn hook_block(event: &str, matcher: &str, command: &str) -> String {
    format!(
        "  {event}:\n    - matcher: '{matcher}'\n      hooks:\n        - {{type: command, command: '{command}', timeout: 20}}\n"
    )
}

#[test]
fn exit_code_2_blocks_a_call_and_the_model_reads_the_reason() {
    for command in [
        "rm victim.txt",
        "echo x; rm victim.txt",
        "true && rm victim.txt",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let hooks = hook_block("PreToolUse", "Bash", "sh .hooks/block_rm.sh");
        let policy = "permissions: {mode: auto}\n";
        setup(
            ws,
            &format!("{policy}hooks:\n{hooks}"),
            &(bash("c1", command) + "  - text: done\n"),
        );
        write_files(ws, &[("victim.txt", "keep me\n")]);
        let r = start(ws, &[]);
        assert_eq!(r.code, 0, "{command}: {r:#?}");
        assert!(
            ws.join("victim.txt").exists(),
            "{command}: the hook's block held"
        );
        assert!(
            told(&r, "c1").contains("move files to trash/"),
            "{}",
            told(&r, "c1")
        );
        let denials = r.result()["permission_denials"].clone();
        assert_eq!(denials[0]["source"], "hook", "{denials}");
        assert_eq!(denials[0]["tool_use_id"], "c1");
        let ran = r.events_of("hook.ran");
        assert_eq!(ran[0]["exit_code"], 2);
        assert_eq!(ran[0]["decision"], "block");
    }
    // Control: without the hook the same call deletes the file.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(
        ws,
        "permissions: {mode: auto}\n",
        &(bash("c1", "rm victim.txt") + "  - text: done\n"),
    );
    write_files(ws, &[("victim.txt", "keep me\n")]);
    assert_eq!(start(ws, &[]).code, 0);
    assert!(
        !ws.join("victim.txt").exists(),
        "control: the call works without the hook"
    );
}

/// A policy hook (Python) that allows every command naming a marker.
fn guard_job(ws: &Path, permissions: &str, turns: &str) {
    let hooks = hook_block(
        "PreToolUse",
        "Bash",
        &format!("{} .hooks/guard.py", python()),
    );
    setup(
        ws,
        &format!("permissions: {permissions}\nhooks:\n{hooks}"),
        turns,
    );
}

#[test]
fn a_hooks_allow_answers_an_ask_and_never_runs_a_disabled_command() {
    let disabled = [
        "chmod u+s tool.sh; echo ran > marker_a.txt",
        "chmod 4755 tool.sh && echo ran > marker_b.txt",
        "chmod g+s tool.sh; echo ran > marker_c.txt",
        "rm -rf ~; echo ran > marker_d.txt",
    ];
    let mut turns = bash("ok", "chmod u+x tool.sh; echo ran > marker_ok.txt");
    for (i, c) in disabled.iter().enumerate() {
        turns.push_str(&bash(&format!("d{i}"), c));
    }
    turns.push_str("  - text: done\n");
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    guard_job(ws, "{on_ask: deny}", &turns);
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    // Control: the hook's allow answered the policy's ask, so the same kind of call ran.
    assert!(ws.join("marker_ok.txt").exists(), "{r:#?}");
    for (i, c) in disabled.iter().enumerate() {
        let marker = format!("marker_{}.txt", (b'a' + i as u8) as char);
        assert!(
            !ws.join(&marker).exists(),
            "{c}: a hook's allow ran a disabled command"
        );
        assert!(told(&r, &format!("d{i}")).contains("Permission denied"));
    }
    let log = std::fs::read_to_string(ws.join("guard.log")).unwrap();
    assert_eq!(log.lines().count(), 5, "the hook saw every call: {log}");
    let denials = r.result()["permission_denials"].clone();
    let answered = denials
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["tool_use_id"] == "ok")
        .unwrap()
        .clone();
    assert_eq!(answered["source"], "hook");
    assert_eq!(answered["resolution"], "allowed");
    assert_eq!(answered["permission"], "ask");
    // Control: with no hook the ask is denied by on_ask and nothing is written.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(
        ws,
        "permissions: {on_ask: deny}\n",
        &(bash("ok", "chmod u+x tool.sh; echo ran > marker_ok.txt") + "  - text: done\n"),
    );
    assert_eq!(start(ws, &[]).code, 0);
    assert!(!ws.join("marker_ok.txt").exists());
}

#[test]
fn a_hooks_allow_never_opens_an_exclude_rule() {
    let call = "python3 -c \"open(''marker.txt'', ''w'').write(''x'')\"";
    for (exclude, written) in [("exclude: ['Bash(python3 *)'], ", false), ("", true)] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let turns = format!(
            "  - tool_calls: [{{name: Bash, id: c1, arguments: {{command: '{call}'}}}}]\n  - text: done\n"
        );
        guard_job(ws, &format!("{{{exclude}on_ask: deny}}"), &turns);
        let r = start(ws, &[]);
        assert_eq!(r.code, 0, "{r:#?}");
        assert_eq!(
            ws.join("marker.txt").exists(),
            written,
            "exclude {exclude:?}: {}",
            told(&r, "c1")
        );
    }
}

#[test]
fn an_updated_input_runs_as_rewritten_and_is_judged_again() {
    let rewrite = "node .hooks/rewrite.js";
    let hooks = hook_block("PreToolUse", "Bash", rewrite);
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(
        ws,
        &format!("hooks:\n{hooks}"),
        &(bash("c1", "REWRITE_ME") + "  - text: done\n"),
    );
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("rewritten.txt")).unwrap(),
        "rewritten\n"
    );
    // A rewrite into a disabled command is judged as what it is now.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let to = "REWRITE_TO=\"chmod u+s tool.sh; echo x > bad.txt\" node .hooks/rewrite.js";
    let hooks = hook_block("PreToolUse", "Bash", &to.replace('\'', "''"));
    setup(
        ws,
        &format!("hooks:\n{hooks}"),
        &(bash("c1", "REWRITE_ME") + "  - text: done\n"),
    );
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(!ws.join("bad.txt").exists(), "{}", told(&r, "c1"));
    assert!(told(&r, "c1").contains("Permission denied"));
}

#[test]
fn post_tool_use_hooks_format_files_and_talk_to_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let hooks = hook_block(
        "PostToolUse",
        "Edit|Write",
        &format!("{} .hooks/post_format.py", python()),
    ) + "    - matcher: Bash\n      hooks:\n        - {type: command, command: sh .hooks/post_block.sh}\n";
    let turns = "  - tool_calls: [{name: Write, id: w1, arguments: {filepath: a.txt, content: \"hello\\n\"}}]\n".to_owned()
        + &bash("b1", "echo built")
        + "  - text: done\n";
    setup(
        ws,
        &format!("permissions: {{mode: auto}}\nhooks:\n{hooks}"),
        &turns,
    );
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "hello\n# formatted\n"
    );
    assert!(
        told(&r, "w1").contains("the formatter ran on"),
        "{}",
        told(&r, "w1")
    );
    assert!(told(&r, "w1").contains("a.txt"));
    let b = told(&r, "b1");
    assert!(b.contains("built") && b.contains("fix them"), "{b}");
}

#[test]
fn user_prompt_submit_adds_context_or_refuses_the_task() {
    let hooks = hook_block(
        "UserPromptSubmit",
        "",
        &format!("{} .hooks/prompt.py", python()),
    );
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(ws, &format!("hooks:\n{hooks}"), "  - text: done\n");
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    let session = session_of(&ws.join("out"));
    assert!(
        session["history"].to_string().contains("Ticket: OPS-42"),
        "{session}"
    );
    // The refused task never reaches the model.
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(ws, &format!("hooks:\n{hooks}"), "  - text: done\n");
    let job = std::fs::read_to_string(ws.join("job.yaml")).unwrap();
    let job = job.replace(
        "prompt: do the task",
        "prompt: rotate the database password",
    );
    write_files(ws, &[("job.yaml", &job)]);
    let r = start(ws, &[]);
    assert_eq!(r.code, 1, "{r:#?}");
    let result = r.result();
    assert_eq!(result["num_turns"], 0, "{result}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("must not handle passwords")
    );
}

#[test]
fn a_stop_hook_sends_the_agent_back_until_the_work_is_done() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let hooks = hook_block("Stop", "", "sh .hooks/stop_until_done.sh");
    let turns = "  - text: finished early\n  - tool_calls: [{name: Write, id: w1, arguments: {filepath: done.txt, content: ok}}]\n  - text: really finished\n";
    setup(
        ws,
        &format!("permissions: {{mode: auto}}\nhooks:\n{hooks}"),
        turns,
    );
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(ws.join("done.txt").exists());
    assert_eq!(r.result()["result"], "really finished");
    let log = std::fs::read_to_string(ws.join("stop.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].contains("\"stop_hook_active\":false"), "{log}");
    assert!(lines[1].contains("\"stop_hook_active\":true"), "{log}");
    let session = session_of(&ws.join("out"));
    assert!(
        session["history"]
            .to_string()
            .contains("create done.txt before you finish")
    );
}

#[test]
fn continue_false_stops_the_run_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let hooks = hook_block("PreToolUse", "*", "node .hooks/halt.js");
    setup(
        ws,
        &format!("permissions: {{mode: auto}}\nhooks:\n{hooks}"),
        &(bash("c1", "echo one > one.txt")
            + &bash("c2", "echo two > two.txt")
            + "  - text: done\n"),
    );
    let r = start(ws, &[]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(
        r.result()["reason"]
            .as_str()
            .unwrap()
            .contains("change freeze")
    );
    assert!(!ws.join("two.txt").exists(), "no turn after the stop");
}

#[test]
fn matchers_take_claude_codes_tool_names_and_the_input_its_field_names() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let record = "sh .hooks/record.sh";
    let hooks =
        hook_block("PreToolUse", "Grep|LS", record) + &hook_block("PostToolUse", "Read", record);
    let turns = "  - tool_calls: [{name: Search, id: s1, arguments: {pattern: tool}}, {name: List, id: l1, arguments: {dirpath: .}}, {name: Read, id: r1, arguments: {filepath: tool.sh}}, {name: Bash, id: b1, arguments: {command: 'echo hi'}}]\n  - text: done\n";
    setup(ws, &format!("hooks:\n{hooks}"), turns);
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    let log = std::fs::read_to_string(ws.join("hooks.log")).unwrap();
    let events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l.split_once(' ').unwrap().1).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(events.len(), 3, "Bash matched nothing: {log}");
    assert!(
        names.contains(&"Grep") && names.contains(&"LS") && names.contains(&"Read"),
        "{names:?}"
    );
    let read = events.iter().find(|e| e["tool_name"] == "Read").unwrap();
    assert_eq!(read["hook_event_name"], "PostToolUse");
    let path = read["tool_input"]["file_path"].as_str().unwrap();
    assert!(
        path.ends_with("/tool.sh") && Path::new(path).is_absolute(),
        "{read}"
    );
    assert!(
        read["tool_response"]["output"]
            .as_str()
            .unwrap()
            .contains("echo tool")
    );
    for e in &events {
        for field in [
            "session_id",
            "transcript_path",
            "cwd",
            "permission_mode",
            "tool_use_id",
        ] {
            assert!(e[field].is_string(), "{field} in {e}");
        }
    }
}

#[test]
fn a_hook_that_hangs_or_crashes_is_a_named_failure_and_refuses_the_call() {
    for (script, kind) in [("hang.sh", "timeout"), ("crash.sh", "crashed")] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let hooks = format!(
            "  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {{type: command, command: 'sh .hooks/{script}', timeout: 2}}\n"
        );
        setup(
            ws,
            &format!("permissions: {{mode: auto}}\nhooks:\n{hooks}"),
            &(bash("c1", "echo ran > marker.txt") + "  - text: done\n"),
        );
        let r = start(ws, &[]);
        assert_eq!(r.code, 0, "{script}: {r:#?}");
        assert!(
            !ws.join("marker.txt").exists(),
            "{script}: a silent hook refuses the call"
        );
        let ran = r.events_of("hook.ran");
        let failure = ran[0]["failure"].as_str().unwrap_or_default();
        assert!(failure.starts_with(kind), "{script}: {ran:?}");
        assert!(
            told(&r, "c1").contains("PreToolUse hook"),
            "{}",
            told(&r, "c1")
        );
    }
}

/// A repository settings file at `path` whose hooks write hooks.log (and a `prompt` hook,
/// which cn-run skips with a warning).
fn repo_settings_at(ws: &Path, path: &str) {
    let settings = r#"{"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "sh .hooks/record.sh"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh .hooks/record.sh"}]}],
        "PermissionRequest": [{"hooks": [{"type": "command", "command": "sh .hooks/record.sh"}]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "Are the tests green? $ARGUMENTS"}]}]
    }}"#;
    write_files(ws, &[(path, settings)]);
}

fn repo_settings(ws: &Path) {
    repo_settings_at(ws, ".claude/settings.json");
}

/// Where Continue's `cn` finds a repository's hook settings.
const SETTINGS_FILES: [&str; 4] = [
    ".claude/settings.json",
    ".continue/settings.json",
    ".claude/settings.local.json",
    ".continue/settings.local.json",
];

#[test]
fn a_repository_hook_never_runs_in_untrusted_mode() {
    let turns = bash("c1", "echo hi") + "  - text: done\n";
    for file in SETTINGS_FILES {
        for (rest, flags, runs) in [
            ("repo_hooks: true\n", &[][..], true),
            ("repo_hooks: true\n", &["--untrusted"][..], false),
            (
                "repo_hooks: true\nuntrusted_paths: ['src/**']\n",
                &[][..],
                false,
            ),
            ("", &[][..], false),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let ws = tmp.path();
            setup(ws, rest, &turns);
            repo_settings_at(ws, file);
            let r = start(ws, flags);
            assert_eq!(r.code, 0, "{file} {rest} {flags:?}: {r:#?}");
            let warnings = r.events_of("warning");
            assert_eq!(
                ws.join("hooks.log").exists(),
                runs,
                "{file} {rest} {flags:?}: {warnings:?}"
            );
            if runs {
                let log = std::fs::read_to_string(ws.join("hooks.log")).unwrap();
                assert!(
                    log.starts_with("SessionStart ") && log.contains("\nPreToolUse "),
                    "{log}"
                );
                assert_eq!(r.events_of("hook.ran")[0]["origin"], "repository");
                let said = |w: &Value, what: &str| {
                    let m = w["message"].as_str().unwrap_or_default();
                    m.contains(file) && m.contains(what)
                };
                assert!(
                    warnings.iter().any(|w| said(w, "`prompt` hook")),
                    "{warnings:?}"
                );
                assert!(
                    warnings.iter().any(|w| said(w, "PermissionRequest")),
                    "{warnings:?}"
                );
            }
        }
    }
}

#[test]
fn the_repositorys_disable_all_hooks_leaves_the_jobs_hooks_running() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let hooks = hook_block("PreToolUse", "Bash", "sh .hooks/block_rm.sh");
    setup(
        ws,
        &format!("repo_hooks: true\npermissions: {{mode: auto}}\nhooks:\n{hooks}"),
        &(bash("c1", "rm victim.txt") + "  - text: done\n"),
    );
    repo_settings(ws);
    write_files(
        ws,
        &[
            ("victim.txt", "keep me\n"),
            (
                ".continue/settings.local.json",
                r#"{"disableAllHooks": true}"#,
            ),
        ],
    );
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        !ws.join("hooks.log").exists(),
        "the repository's hooks are off"
    );
    assert!(
        ws.join("victim.txt").exists(),
        "the job's hook still blocked rm"
    );
    let warnings = r.events_of("warning");
    assert!(
        warnings.iter().any(|w| w["message"]
            .as_str()
            .unwrap_or_default()
            .contains("disableAllHooks")),
        "{warnings:?}"
    );
}

#[test]
fn session_and_notification_hooks_fire_at_their_points() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let record = "sh .hooks/record.sh";
    let hooks = [
        hook_block("SessionStart", "startup", record),
        hook_block("SessionEnd", "", record),
        hook_block("Notification", "", record),
    ]
    .concat();
    setup(
        ws,
        &format!("permissions: {{on_ask: fail}}\nhooks:\n{hooks}"),
        &(bash("c1", "make deploy") + "  - text: done\n"),
    );
    let r = start(ws, &[]);
    assert_eq!(r.code, 3, "{r:#?}");
    let log = std::fs::read_to_string(ws.join("hooks.log")).unwrap();
    let order: Vec<&str> = log.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(
        order,
        ["SessionStart", "Notification", "SessionEnd"],
        "{log}"
    );
    assert!(log.contains("\"source\":\"startup\""));
    assert!(log.contains("needs your permission to use Bash"));
}

#[test]
fn a_job_files_bad_hooks_are_located_errors_and_nothing_runs() {
    for (hooks, want) in [
        (
            "  PreToolUs:\n    - hooks: [{type: command, command: 'true'}]\n",
            "PreToolUs",
        ),
        (
            "  PreToolUse:\n    - matcher: 'Bash('\n      hooks: [{type: command, command: 'true'}]\n",
            "hooks.PreToolUse[0].matcher",
        ),
        (
            "  Stop:\n    - hooks: [{type: prompt, command: 'true'}]\n",
            "hooks.Stop[0].hooks[0].type",
        ),
        (
            "  Stop:\n    - hooks: [{type: command, command: ' '}]\n",
            "hooks.Stop[0].hooks[0].command",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        setup(ws, &format!("hooks:\n{hooks}"), "  - text: done\n");
        let mut cmd = cn_run(ws);
        cmd.arg("job.yaml");
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "{hooks}: {r:#?}");
        assert!(r.stderr.contains("job.yaml:"), "located: {}", r.stderr);
        assert!(r.stderr.contains(want), "{want}: {}", r.stderr);
        assert!(!ws.join(".cn-run").exists(), "nothing ran");
    }
}

#[test]
fn hooks_run_contained_with_the_environment_allow_list() {
    if !crate::suite::containment_scene::namespaces_available() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("hook-was-here");
    let payload = format!(
        "echo x > {}; echo \"tok=$PLANTED_HOOK_TOKEN\" > seen.txt",
        target.display()
    );
    for (sandbox, contained) in [("", true), ("tools: {bash: {sandbox: off}}\n", false)] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let hooks = hook_block("SessionStart", "", &payload);
        setup(ws, &format!("{sandbox}hooks:\n{hooks}"), "  - text: done\n");
        let mut cmd = cn_run(ws);
        cmd.arg("job.yaml")
            .env("PLANTED_HOOK_TOKEN", "s3cr3t-hook-token");
        let r = run(cmd, Some(&ws.join("out")));
        assert_eq!(r.code, 0, "{r:#?}");
        let seen = std::fs::read_to_string(ws.join("seen.txt")).unwrap();
        assert_eq!(
            target.exists(),
            !contained,
            "{sandbox:?}: the hook's write outside the workspace"
        );
        assert_eq!(
            seen.contains("s3cr3t-hook-token"),
            !contained,
            "{sandbox:?}: the runner's variable outside the allow-list: {seen}"
        );
        let _ = std::fs::remove_file(&target);
    }
}

#[test]
fn a_hooks_allow_never_answers_a_write_into_git() {
    let allow_all = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#;
    let hooks = format!(
        "  PreToolUse:\n    - matcher: '*'\n      hooks: [{{type: command, command: {}}}]\n",
        serde_json::to_string(allow_all).unwrap()
    );
    let hook = "#!/bin/sh\\necho planted > planted.txt\\n";
    let turns = format!(
        "  - tool_calls: [{{name: Write, id: g1, arguments: {{filepath: .git/hooks/pre-commit, content: \"{hook}\"}}}}, {{name: Write, id: g2, arguments: {{filepath: ./.git/config, content: x}}}}, {{name: Write, id: ok, arguments: {{filepath: notes/ok.txt, content: fine}}}}]\n  - text: done\n"
    );
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    setup(ws, &format!("hooks:\n{hooks}"), &turns);
    crate::support::runner::git_init(ws);
    let config = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        !ws.join(".git/hooks/pre-commit").exists(),
        "{}",
        told(&r, "g1")
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        config
    );
    // Control: the hook's allow answers the ask of a plain write.
    assert_eq!(
        std::fs::read_to_string(ws.join("notes/ok.txt")).unwrap(),
        "fine"
    );
}

#[test]
fn explain_lists_the_hooks_a_run_would_run_and_says_why_repository_ones_would_not() {
    let hooks = hook_block("PreToolUse", "Bash", "sh .hooks/block_rm.sh");
    for (flags, repo_listed) in [(&[][..], true), (&["--untrusted"][..], false)] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        setup(
            ws,
            &format!("repo_hooks: true\nhooks:\n{hooks}"),
            "  - text: done\n",
        );
        repo_settings(ws);
        let mut cmd = cn_run(ws);
        cmd.args(["explain", "--json", "job.yaml"]).args(flags);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{r:#?}");
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let rows = v["hooks"].as_array().unwrap();
        assert_eq!(rows[0]["event"], "PreToolUse");
        assert_eq!(rows[0]["origin"], "job");
        assert_eq!(rows[0]["command"], "sh .hooks/block_rm.sh");
        let repo = rows.iter().any(|h| h["origin"] == "repository");
        assert_eq!(repo, repo_listed, "{flags:?}: {v}");
        if !repo_listed {
            assert!(v["hooks_note"].as_str().unwrap().contains("untrusted"));
        }
    }
}

#[test]
fn a_nested_agents_stop_fires_subagent_stop_and_its_calls_meet_the_hooks() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let record = "sh .hooks/record.sh";
    let hooks = [
        hook_block("SubagentStop", "", record),
        hook_block("Stop", "", record),
        hook_block("PreToolUse", "Bash", "sh .hooks/block_rm.sh"),
    ]
    .concat();
    let subagents = "subagents:\n  - {name: worker, description: Runs commands., system_prompt: Run., tools: ['Bash(*)']}\n";
    let turns = "  - tool_calls: [{name: Subagent, id: sub1, arguments: {subagent_name: worker, description: run it, prompt: remove it}}]\n  - tool_calls: [{name: Bash, id: b1, arguments: {command: 'rm victim.txt'}}]\n  - text: the worker was refused\n  - text: all done\n";
    setup(
        ws,
        &format!("permissions: {{mode: auto}}\n{subagents}hooks:\n{hooks}"),
        turns,
    );
    write_files(ws, &[("victim.txt", "keep\n")]);
    let r = start(ws, &[]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        ws.join("victim.txt").exists(),
        "the nested call met the PreToolUse hook"
    );
    let log = std::fs::read_to_string(ws.join("hooks.log")).unwrap();
    let order: Vec<&str> = log.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(order, ["SubagentStop", "Stop"], "{log}");
}
