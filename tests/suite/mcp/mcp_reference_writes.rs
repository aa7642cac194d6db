//! What the issue found with the reference servers, checked by what happened on disk: the
//! official `@modelcontextprotocol/server-filesystem` (npm) and `mcp-server-git` (PyPI) run as
//! users run them, given a directory wider than the workspace. Without a rule no write tool
//! changes anything; `--readonly` and plan mode change nothing even with `allow: ['*']`;
//! untrusted mode needs a rule naming the tool; an allowed write lands in the workspace but
//! never outside it nor in a credential file. Read-only tools run with no rule. Installed by
//! `.ci/install-mcp-reference`; skipped with a message when absent.

use std::path::{Path, PathBuf};

use crate::support::runner::{Run, cn_run, git, git_init, repo_root, run, write_files};

fn installed(relative: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CN_RUN_MCP_REF")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/mcp-ref"));
    let path = dir.join(relative);
    if path.exists() {
        return Some(path);
    }
    eprintln!(
        "skipped: {} is not installed; run .ci/install-mcp-reference",
        path.display()
    );
    None
}

fn filesystem() -> Option<PathBuf> {
    installed("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

fn git_python() -> Option<PathBuf> {
    let python = installed("py/bin/python")?;
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp_server_git"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: mcp-server-git is not installed; run .ci/install-mcp-reference");
        return None;
    }
    Some(python)
}

/// A job in `ws` with `servers`, `permissions` and one turn of `calls`, run with `flags`.
fn run_job(ws: &Path, servers: &str, permissions: &str, calls: &[String], flags: &[&str]) -> Run {
    let calls: String = calls.iter().map(|c| format!("      - {c}\n")).collect();
    let script = format!("turns:\n  - tool_calls:\n{calls}  - text: done\n");
    let job = format!(
        "version: 1\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: p\n{permissions}\nmcp_servers:\n{servers}"
    );
    write_files(ws, &[("job.yaml", &job), ("s.yaml", &script)]);
    let mut cmd = cn_run(ws);
    cmd.arg("job.yaml").args(flags);
    run(cmd, Some(&ws.join("../out")))
}

/// A temporary tree: `ws/` (the workspace, with `a.txt` and `.env`) and `outside/`.
struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(root.join("outside")).unwrap();
    write_files(&ws, &[("a.txt", "original\n"), (".env", "TOKEN=keep-me\n")]);
    Tree {
        _tmp: tmp,
        root,
        ws,
    }
}

fn fs_server(js: &Path, allowed: &Path) -> String {
    format!(
        "  fs:\n    command: node\n    args: ['{}', '{}']\n    startup_timeout: 60s\n",
        js.display(),
        allowed.display()
    )
}

/// Calls of every write tool the filesystem server has, at paths in and out of `t.ws`.
fn fs_writes(t: &Tree) -> Vec<String> {
    let ws = t.ws.display();
    let root = t.root.display();
    vec![
        format!(
            "{{name: mcp__fs__write_file, id: w1, arguments: {{path: '{ws}/new.txt', content: planted}}}}"
        ),
        format!(
            "{{name: mcp__fs__write_file, id: w2, arguments: {{path: '{ws}/.env', content: planted}}}}"
        ),
        format!(
            "{{name: mcp__fs__write_file, id: w3, arguments: {{path: '{root}/outside/x.txt', content: planted}}}}"
        ),
        format!(
            "{{name: mcp__fs__edit_file, id: e1, arguments: {{path: '{ws}/a.txt', edits: [{{oldText: original, newText: planted}}]}}}}"
        ),
        format!("{{name: mcp__fs__create_directory, id: d1, arguments: {{path: '{ws}/made'}}}}"),
        format!(
            "{{name: mcp__fs__move_file, id: m1, arguments: {{source: '{ws}/a.txt', destination: '{ws}/moved.txt'}}}}"
        ),
    ]
}

/// Nothing the write calls aimed at changed.
fn unchanged(t: &Tree, case: &str) {
    assert_eq!(
        std::fs::read_to_string(t.ws.join("a.txt")).unwrap(),
        "original\n",
        "{case}"
    );
    assert_eq!(
        std::fs::read_to_string(t.ws.join(".env")).unwrap(),
        "TOKEN=keep-me\n",
        "{case}"
    );
    for made in ["ws/new.txt", "outside/x.txt", "ws/made", "ws/moved.txt"] {
        assert!(!t.root.join(made).exists(), "{case}: {made} was written");
    }
}

#[test]
fn filesystem_writes_change_nothing_without_a_rule_nor_in_readonly_plan_or_untrusted_runs() {
    let Some(js) = filesystem() else { return };
    let cases: [(&str, &[&str]); 5] = [
        ("", &[]),
        ("permissions: {allow: ['*']}", &["--readonly"]),
        (
            "permissions: {allow: ['mcp__fs__write_file', 'mcp__fs__edit_file']}",
            &["--readonly"],
        ),
        ("permissions: {mode: plan, allow: ['mcp__fs__*']}", &[]),
        (
            "permissions: {allow: ['*', 'mcp__*', 'mcp__fs__*']}",
            &["--untrusted"],
        ),
    ];
    for (permissions, flags) in cases {
        let t = tree();
        let mut calls = fs_writes(&t);
        calls.push(format!(
            "{{name: mcp__fs__read_text_file, id: r1, arguments: {{path: '{}/a.txt'}}}}",
            t.ws.display()
        ));
        let r = run_job(&t.ws, &fs_server(&js, &t.root), permissions, &calls, flags);
        let case = format!("{permissions} {flags:?}");
        assert_eq!(r.code, 0, "{case}: {r:#?}");
        unchanged(&t, &case);
        let read = r
            .events_of("tool.finished")
            .into_iter()
            .find(|e| e["call_id"] == "r1")
            .map(|e| e["output"].to_string())
            .unwrap_or_default();
        // Read-only tools still run (plan, --readonly and untrusted keep them).
        assert!(read.contains("original"), "{case}: {read}");
    }
}

#[test]
fn an_allowed_filesystem_write_lands_in_the_workspace_only() {
    let Some(js) = filesystem() else { return };
    let t = tree();
    let permissions = "permissions: {allow: ['mcp__fs__write_file']}";
    let r = run_job(
        &t.ws,
        &fs_server(&js, &t.root),
        permissions,
        &fs_writes(&t)[..3],
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    // The positive control: the rule lets the write inside the workspace through.
    assert_eq!(
        std::fs::read_to_string(t.ws.join("new.txt")).unwrap(),
        "planted"
    );
    assert_eq!(
        std::fs::read_to_string(t.ws.join(".env")).unwrap(),
        "TOKEN=keep-me\n"
    );
    assert!(
        !t.root.join("outside/x.txt").exists(),
        "written outside the workspace"
    );
}

fn git_server(python: &Path, repo: &Path) -> String {
    format!(
        "  git:\n    command: '{}'\n    args: [-m, mcp_server_git, --repository, '{}']\n    startup_timeout: 60s\n",
        python.display(),
        repo.display()
    )
}

fn git_repo() -> Tree {
    let t = tree();
    git_init(&t.ws);
    write_files(&t.ws, &[("b.txt", "untracked\n")]);
    t
}

fn git_writes(ws: &Path) -> Vec<String> {
    let ws = ws.display();
    vec![
        format!(
            "{{name: mcp__git__git_add, id: add, arguments: {{repo_path: '{ws}', files: [b.txt]}}}}"
        ),
        format!(
            "{{name: mcp__git__git_commit, id: commit, arguments: {{repo_path: '{ws}', message: planted}}}}"
        ),
        format!(
            "{{name: mcp__git__git_create_branch, id: branch, arguments: {{repo_path: '{ws}', branch_name: planted}}}}"
        ),
        format!("{{name: mcp__git__git_reset, id: reset, arguments: {{repo_path: '{ws}'}}}}"),
        format!("{{name: mcp__git__git_status, id: status, arguments: {{repo_path: '{ws}'}}}}"),
    ]
}

/// The repository's commits, branches and staged files, to compare before and after.
fn git_state(ws: &Path) -> String {
    let log = git(ws, &["log", "--branches", "--tags", "--format=%H %s"]);
    let branches = git(ws, &["branch", "--list"]);
    let staged = git(ws, &["diff", "--cached", "--name-only"]);
    format!("{log}\n{branches}\n{staged}")
}

#[test]
fn git_writes_change_no_repository_without_a_rule_nor_in_a_readonly_run() {
    let Some(python) = git_python() else { return };
    let cases: [(&str, &[&str]); 3] = [
        ("", &[]),
        ("permissions: {allow: ['*']}", &["--readonly"]),
        ("permissions: {mode: plan, allow: ['mcp__git__*']}", &[]),
    ];
    for (permissions, flags) in cases {
        let t = git_repo();
        let before = git_state(&t.ws);
        let r = run_job(
            &t.ws,
            &git_server(&python, &t.ws),
            permissions,
            &git_writes(&t.ws),
            flags,
        );
        let case = format!("{permissions} {flags:?}");
        assert_eq!(r.code, 0, "{case}: {r:#?}");
        assert_eq!(git_state(&t.ws), before, "{case}: the repository changed");
        let status = r
            .events_of("tool.finished")
            .into_iter()
            .find(|e| e["call_id"] == "status")
            .map(|e| e["output"].to_string())
            .unwrap_or_default();
        assert!(
            status.contains("b.txt"),
            "{case}: git_status did not run: {status}"
        );
    }
    // The positive control: a rule naming the tool lets it change the repository.
    let t = git_repo();
    let permissions = "permissions: {allow: ['mcp__git__git_create_branch']}";
    let r = run_job(
        &t.ws,
        &git_server(&python, &t.ws),
        permissions,
        &git_writes(&t.ws),
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(git(&t.ws, &["branch", "--list"]).contains("planted"));
    assert_eq!(
        git(&t.ws, &["diff", "--cached", "--name-only"]).trim(),
        "",
        "git_add ran"
    );
}
