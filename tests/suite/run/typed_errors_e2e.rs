//! The typed errors keep what a user sees: each failure below says the same words on stderr
//! and exits with the code of its class, decided in one place (`RunError::status`, then
//! `Status::exit_code`): a session or a setting the command line or job gets wrong is exit
//! 2; a session that is there but cannot be read is the environment, exit 6.

use std::path::Path;

use crate::support::runner::{cn_run, run, run_folder, write_files};

const JOB: &str =
    "version: 1\nname: typed\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\n";

fn cn(ws: &Path, args: &[&str]) -> crate::support::runner::Run {
    let mut cmd = cn_run(ws);
    cmd.args(args);
    run(cmd, None)
}

/// A workspace with one finished run; its session file's path.
fn one_run(ws: &Path) -> std::path::PathBuf {
    write_files(
        ws,
        &[("job.yaml", JOB), ("s.yaml", "turns:\n  - text: done\n")],
    );
    assert_eq!(cn(ws, &["job.yaml"]).code, 0);
    run_folder(ws).join("session.jsonl")
}

fn expect(ws: &Path, args: &[&str], code: i32, words: &str) {
    let r = cn(ws, args);
    assert_eq!(r.code, code, "{args:?}: {r:#?}");
    assert!(
        r.stderr
            .lines()
            .any(|l| l.starts_with("cn-run: ") && l.contains(words)),
        "{args:?}: stderr says `{words}`: {}",
        r.stderr
    );
}

#[test]
fn a_session_the_command_line_names_that_is_not_there_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    expect(
        ws,
        &["--resume", "latest", "-p", "more"],
        2,
        "no sessions under .cn-run",
    );
    one_run(ws);
    for id in ["nosuch", "run-0000", "../elsewhere"] {
        let words = format!("no session `{id}` (looked in .cn-run)");
        expect(ws, &["--resume", id, "-p", "more"], 2, &words);
    }
}

#[test]
fn a_session_that_cannot_be_read_is_exit_6_saying_where() {
    // (what the file becomes, the words said after the file's name)
    // (A bad line after the first is skipped and named: `resume_e2e`.)
    let cases: [(&str, &str); 4] = [
        ("bad first line", " line 1: not a session item"),
        ("not json at all", ": not a session file"),
        ("unknown version", ": session format 7 is not supported"),
        ("empty", ": not a session file"),
    ];
    for (what, tail) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let session = one_run(ws);
        let text = std::fs::read_to_string(&session).unwrap();
        let first = text.lines().next().unwrap().to_owned();
        let broken = match what {
            "bad first line" => format!("{}\n{first}\n", &first[..first.len() / 2]),
            "not json at all" => "hello\n".to_owned(),
            "unknown version" => {
                let folder = session.parent().unwrap();
                let mut whole = crate::support::runner::session_of(folder);
                whole["schema_version"] = 7.into();
                whole.to_string()
            }
            _ => String::new(),
        };
        std::fs::write(&session, broken).unwrap();
        let id = session.to_str().unwrap();
        let words = format!(
            "cn-run: cannot read the session to resume: {}{tail}",
            session.display()
        );
        let r = cn(ws, &["--resume", id, "-p", "more"]);
        assert_eq!(r.code, 6, "{what}: {r:#?}");
        assert!(r.stderr.contains(&words), "{what}: {words}\n{}", r.stderr);
    }
}

/// MCP server settings that cannot be made into a config: the job's to fix, exit 2, the
/// setting named.
#[test]
fn an_mcp_setting_that_cannot_be_expanded_is_exit_2_naming_it() {
    let cases: [(&str, &str); 5] = [
        (
            "    command: srv\n    env:\n      TOKEN: ${NOT_SET_H19}\n",
            "mcp_servers.fx.TOKEN: environment variable NOT_SET_H19 is not set",
        ),
        (
            "    command: srv\n    env:\n      TOKEN: pre-${NOT_SET_H19}-post\n",
            "mcp_servers.fx.TOKEN: environment variable NOT_SET_H19 is not set",
        ),
        (
            "    command: srv\n    env:\n      A: ok\n      B: ${UNCLOSED\n",
            "mcp_servers.fx.B: unclosed `${` in `${UNCLOSED`",
        ),
        (
            "    url: http://127.0.0.1:9/mcp\n    headers:\n      Authorization: Bearer ${NOT_SET_H19}\n",
            "mcp_servers.fx.Authorization: environment variable NOT_SET_H19 is not set",
        ),
        (
            "    url: http://127.0.0.1:9/mcp\n    headers:\n      X-Key: ${HOME}${NOT_SET_H19}\n",
            "mcp_servers.fx.X-Key: environment variable NOT_SET_H19 is not set",
        ),
    ];
    for (server, words) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let job = format!("{JOB}mcp_servers:\n  fx:\n{server}");
        write_files(
            ws,
            &[("job.yaml", &job), ("s.yaml", "turns:\n  - text: done\n")],
        );
        expect(ws, &["job.yaml"], 2, words);
        let events = walkdir(&ws.join(".cn-run"));
        assert!(
            !events.iter().any(|p| p.ends_with("events.jsonl")),
            "{server}: nothing ran: {events:?}"
        );
    }
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .flat_map(|e| {
            let p = e.path();
            let mut below = walkdir(&p);
            below.push(p);
            below
        })
        .collect()
}

/// `cn-run report` keeps its words and codes: a run folder or session the command line gets
/// wrong, or `--github` outside Actions, is exit 2; events that do not read back are exit 2
/// naming the line; a run folder it cannot write is exit 6.
#[test]
fn report_failures_keep_their_words_and_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    expect(ws, &["report", "latest"], 2, "no sessions under .cn-run");
    one_run(ws);
    let folder = run_folder(ws);
    let f = folder.to_str().unwrap();
    expect(
        ws,
        &["report", "nosuch"],
        2,
        "no events.jsonl in `nosuch` (nor in .cn-run/nosuch): give a run folder",
    );
    expect(
        ws,
        &["report", f, "--github"],
        2,
        "--github writes to $GITHUB_STEP_SUMMARY, which is not set",
    );
    std::fs::remove_file(folder.join("result.json")).unwrap();
    std::fs::create_dir(folder.join("result.json")).unwrap();
    expect(
        ws,
        &["report", f],
        6,
        &format!("cannot write {}", folder.join("result.json").display()),
    );
    std::fs::remove_dir(folder.join("result.json")).unwrap();
    // A damaged line is skipped and named; a file with no event at all is refused.
    let events = std::fs::read_to_string(folder.join("events.jsonl")).unwrap();
    let mut lines: Vec<&str> = events.lines().collect();
    lines[1] = "{\"type\": 7}";
    std::fs::write(folder.join("events.jsonl"), lines.join("\n") + "\n").unwrap();
    let r = cn(ws, &["report", f]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        r.stderr.contains("events.jsonl:2: not an event") && r.stderr.contains("skipped"),
        "{}",
        r.stderr
    );
    std::fs::remove_file(folder.join("result.json")).unwrap();
    std::fs::write(folder.join("events.jsonl"), "{\"type\": 7}\nnot json\n").unwrap();
    expect(ws, &["report", f], 2, "cannot rebuild the run's outputs");
    assert!(!folder.join("result.json").exists(), "nothing written");
}

/// Run folders left under `.cn-run` (its `.gitignore` aside).
fn run_folders(ws: &Path) -> Vec<std::path::PathBuf> {
    let Ok(read) = std::fs::read_dir(ws.join(".cn-run")) else {
        return Vec::new();
    };
    read.filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect()
}

/// A flag or a setting of the job that is wrong, from the typed errors of this round
/// (`ParamError`, `ValueError`, `BaseRefError`, `RuleError`): exit 2 with its words, and
/// no run folder left behind (one made before the error was found is removed again).
#[test]
fn wrong_flags_and_rule_files_are_exit_2_and_leave_no_run_folder() {
    // (a git repository?, the rule file r.md if any, flags, words)
    let cases: [(bool, Option<&str>, &[&str], &str); 8] = [
        (
            false,
            None,
            &["--param", "novalue"],
            "expected NAME=VALUE, got `novalue`",
        ),
        (false, None, &["--param", "=x"], "parameter name is empty"),
        (
            false,
            None,
            &["--timeout", "soon"],
            "`soon` is not a duration",
        ),
        (
            true,
            None,
            &["--untrusted", "--base-ref", "no-such-ref"],
            "cannot resolve base ref `no-such-ref`",
        ),
        (
            false,
            None,
            &["--untrusted", "--base-ref", "main"],
            "no git repository",
        ),
        (
            false,
            Some("---\nglobs: [\"a[\"]\n---\nx\n"),
            &[],
            "rules[0].file: glob `a[`",
        ),
        (
            false,
            Some("---\nregex: \"(\"\n---\nx\n"),
            &[],
            "rules[0].file: regex `(`",
        ),
        (
            false,
            Some("---\nglobs: {a: [\n---\nx\n"),
            &[],
            "rules[0].file: front matter:",
        ),
    ];
    for (repo, rule, flags, words) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let job = match rule {
            Some(_) => format!("{JOB}rules:\n  - file: r.md\n"),
            None => JOB.to_owned(),
        };
        let script = "turns:\n  - text: done\n";
        write_files(ws, &[("job.yaml", &job), ("s.yaml", script)]);
        if let Some(text) = rule {
            write_files(ws, &[("r.md", text)]);
        }
        if repo {
            crate::support::runner::git_init(ws);
        }
        let mut args = vec!["job.yaml"];
        args.extend_from_slice(flags);
        // clap says a bad `--param` as `error: invalid value …`; cn-run says the others.
        let r = cn(ws, &args);
        assert_eq!(r.code, 2, "{args:?}: {r:#?}");
        assert!(r.stderr.contains(words), "{args:?}: {}", r.stderr);
        assert_eq!(
            run_folders(ws),
            Vec::<std::path::PathBuf>::new(),
            "{flags:?}"
        );
    }
}

/// The model's key or a header names a variable the environment does not set: the job's to
/// fix (`ModelSettingError`), exit 2 naming it, before any run folder is made.
#[test]
fn an_unset_model_key_or_header_variable_is_exit_2_naming_it() {
    let model = |extra: &str| {
        format!(
            "version: 1\nname: typed\nmodel: {{provider: openai, name: gpt-x, \
             api_base: \"http://127.0.0.1:9/v1\"{extra}}}\nprompt: go\n"
        )
    };
    let cases = [
        (
            model(", api_key_env: NOPE_KEY_H19"),
            "model.api_key_env names NOPE_KEY_H19, but that environment variable is not set",
        ),
        (
            model(", api_key_env: NOPE_KEY_H19, headers: {X-Team: x}"),
            "model.api_key_env names NOPE_KEY_H19",
        ),
        (
            model(", headers: {X-Team: \"${NOPE_TEAM_H19}\"}"),
            "header X-Team reads ${NOPE_TEAM_H19}, which is not set",
        ),
        (
            model(", headers: {A: ok, X-Key: \"${NOPE_TEAM_H19}\"}"),
            "header X-Key reads ${NOPE_TEAM_H19}, which is not set",
        ),
        (
            model(", headers: {Authorization: \"${NOPE_AUTH_H19}\"}"),
            "header Authorization reads ${NOPE_AUTH_H19}, which is not set",
        ),
    ];
    for (job, words) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        write_files(ws, &[("job.yaml", &job)]);
        let mut cmd = cn_run(ws);
        cmd.arg("job.yaml").env("OPENAI_API_KEY", "sk-test-h19");
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "{job}: {r:#?}");
        assert!(r.stderr.contains(words), "{job}: {}", r.stderr);
        assert_eq!(run_folders(ws), Vec::<std::path::PathBuf>::new(), "{job}");
    }
}

/// A folder the user gave with `--out` is theirs: a run that stops on a wrong setting
/// before its first file leaves it in place, empty or not.
#[test]
fn an_out_folder_given_stays_when_the_run_cannot_start() {
    for existing in [&[][..], &[("out/mine.txt", "mine")][..]] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        write_files(
            ws,
            &[("job.yaml", JOB), ("s.yaml", "turns:\n  - text: done\n")],
        );
        write_files(ws, existing);
        std::fs::create_dir_all(ws.join("out")).unwrap();
        crate::support::runner::git_init(ws);
        let args = [
            "job.yaml",
            "--out",
            "out",
            "--untrusted",
            "--base-ref",
            "no-such-ref",
        ];
        let r = cn(ws, &args);
        assert_eq!(r.code, 2, "{existing:?}: {r:#?}");
        assert!(ws.join("out").is_dir(), "{existing:?}: --out was removed");
        for (path, text) in existing {
            assert_eq!(std::fs::read_to_string(ws.join(path)).unwrap(), *text);
        }
    }
}
