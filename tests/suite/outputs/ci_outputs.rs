//! CI outputs: JUnit that stays well-formed with ANSI-coloured output and reads back with
//! the structure CI reporters use; GitHub Actions annotations, summary, outputs and masks.

use std::path::Path;

use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

use crate::support::runner::{Run, cn_run, git_init, repo_root, run, write_files};

fn job(dir: &Path, rest: &str, script: &str) -> std::path::PathBuf {
    let job = format!(
        "version: 1\nname: ci-job\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: do it\n{rest}"
    );
    write_files(dir, &[("job.yaml", &job), ("s.yaml", script)]);
    dir.join("job.yaml")
}

fn parse_junit(path: &Path) -> Report {
    let xml = std::fs::read_to_string(path).unwrap();
    // An independent, strict XML parser must accept it too (when python3 is around).
    if let Ok(out) = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
        ])
        .arg(path)
        .output()
    {
        assert!(
            out.status.success(),
            "not well-formed XML: {}\n{xml}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"))
}

#[test]
fn junit_with_ansi_output_is_well_formed_and_structured() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "checks:\n  - {name: lint, run: \"printf '\\\\033[31merror\\\\033[0m: bad \\\\a thing\\\\n'; exit 1\"}\n  - {name: tests, run: 'echo all good'}\nretry: {max_attempts: 2}\n",
        "turns:\n  - text: \"\\e[1mdone\\e[0m\"\n  - text: still done\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j).arg("--junit").arg(tmp.path().join("all.xml"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 1, "{r:#?}");
    for file in [tmp.path().join("out/junit.xml"), tmp.path().join("all.xml")] {
        let report = parse_junit(&file);
        assert_eq!(report.test_suites.len(), 1);
        let suite = &report.test_suites[0];
        assert_eq!(suite.name.as_str(), "ci-job");
        let names: Vec<&str> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
        // One testcase per check with its final verdict; the first attempt of `lint`
        // is its rerun, not a testcase of its own.
        assert_eq!(names, ["agent run", "check: lint", "check: tests"]);
        assert!(matches!(
            suite.test_cases[0].status,
            TestCaseStatus::Success { .. }
        ));
        match &suite.test_cases[1].status {
            TestCaseStatus::NonSuccess {
                kind: NonSuccessKind::Failure,
                message,
                reruns,
                ..
            } => {
                assert!(message.as_ref().unwrap().as_str().contains("exit code 1"));
                assert_eq!(reruns.runs.len(), 1, "attempt 1 is a rerunFailure");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&suite.test_cases[2].status, TestCaseStatus::Success { flaky_runs } if flaky_runs.is_empty())
        );
        let props: Vec<(&str, &str)> = suite
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_str()))
            .collect();
        for key in [
            "run_id",
            "model",
            "cost_usd",
            "input_tokens",
            "output_tokens",
            "attempts",
        ] {
            assert!(
                props.iter().any(|(k, _)| *k == key),
                "missing property {key}: {props:?}"
            );
        }
        assert!(suite.time.is_some());
    }
}

#[test]
fn an_agent_that_hits_a_limit_fails_its_testcase_and_skips_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "limits: {max_turns: 1}\nchecks: [{name: tests, run: 'true'}]\n",
        "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: never\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 4);
    let report = parse_junit(&tmp.path().join("out/junit.xml"));
    let cases = &report.test_suites[0].test_cases;
    match &cases[0].status {
        TestCaseStatus::NonSuccess { message, ty, .. } => {
            assert!(message.as_ref().unwrap().as_str().contains("max_turns"));
            assert_eq!(ty.as_ref().unwrap().as_str(), "error_max_turns");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(cases[1].status, TestCaseStatus::Skipped { .. }));
}

fn github_run(dir: &Path, secret: &str) -> Run {
    let j = job(
        dir,
        "permissions: {allow: ['Bash(echo *)']}\ntools: {bash: {env: [DEPLOY_TOKEN]}}\nchecks: [{name: unit tests, run: 'echo ok'}]\noutput_schema: {type: object, properties: {summary: {type: string}, fixed: {type: integer}}}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo token=$DEPLOY_TOKEN'}}]\n  - tool_calls: [{name: Bash, arguments: {command: 'curl https://example.invalid'}}]\n  - text: '{\"summary\": \"fixed it\", \"fixed\": 3}'\n",
    );
    let mut cmd = cn_run(dir);
    cmd.arg(&j)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", dir.join("gh_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("gh_summary"))
        .env("DEPLOY_TOKEN", secret);
    run(cmd, Some(&dir.join("out")))
}

#[test]
fn github_actions_outputs_summary_annotations_and_masks() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "ghp_plantedSecretValue123";
    let r = github_run(tmp.path(), secret);
    assert_eq!(r.code, 0, "{r:#?}");
    let outputs = std::fs::read_to_string(tmp.path().join("gh_output")).unwrap();
    assert!(outputs.contains("status=success\n"), "{outputs}");
    assert!(outputs.contains("exit-code=0\n"));
    assert!(outputs.contains("output-summary=fixed it\n"), "{outputs}");
    assert!(outputs.contains("output-fixed=3\n"));
    assert!(
        outputs.contains(&format!(
            "result={}",
            tmp.path()
                .join("out/result.json")
                .canonicalize()
                .unwrap()
                .display()
        )),
        "{outputs}"
    );
    let summary = std::fs::read_to_string(tmp.path().join("gh_summary")).unwrap();
    assert!(summary.contains("cn-run `ci-job`: success"), "{summary}");
    assert!(
        summary.contains("| unit tests | 1 | ✅ passed"),
        "{summary}"
    );
    assert!(summary.contains("| denied call |"), "{summary}");
    assert!(
        r.stderr.contains(&format!("::add-mask::{secret}")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("::group::ci-job turn 1") && r.stderr.contains("::endgroup::"));
    assert!(
        r.stderr.contains("::warning title=Bash call denied::"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_planted_secret_is_in_no_file_the_run_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "ghp_plantedSecretValue456";
    let r = github_run(tmp.path(), secret);
    assert_eq!(r.code, 0, "{r:#?}");
    // The command really printed it (to the agent's tool result, before masking)…
    let events = std::fs::read_to_string(tmp.path().join("out/events.jsonl")).unwrap();
    assert!(events.contains("token=[REDACTED]"), "{events}");
    // …and it is nowhere in what the run left behind, nor on stdout.
    assert!(!r.stdout.contains(secret));
    let mut files = vec![tmp.path().join("gh_output"), tmp.path().join("gh_summary")];
    for entry in std::fs::read_dir(tmp.path().join("out")).unwrap() {
        files.push(entry.unwrap().path());
    }
    for f in files.iter().filter(|f| f.is_file()) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        assert!(
            !text.contains(secret),
            "{} contains the secret",
            f.display()
        );
    }
    // stderr shows it only inside the mask command GitHub needs to hide it.
    let leaks: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains(secret) && !l.starts_with("::add-mask::"))
        .collect();
    assert!(leaks.is_empty(), "{leaks:?}");
}

#[test]
fn progress_is_plain_lines_without_a_terminal_a_live_line_with_one_and_the_outcome_with_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let j = job(
        tmp.path(),
        "",
        "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: ok\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j);
    let r = run(cmd, Some(&tmp.path().join("o1")));
    assert!(r.stderr.contains("[ci-job] turn 1: List ."), "{}", r.stderr);
    assert!(
        !r.stderr.contains('\u{1b}'),
        "no terminal codes in a CI log"
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j).arg("--quiet");
    let r = run(cmd, Some(&tmp.path().join("o2")));
    // --quiet silences progress; the one line saying how the run ended stays.
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("[ci-job] success after 2 turns, ")
            && r.stderr.ends_with(": the agent finished\n"),
        "--quiet keeps only the outcome: {}",
        r.stderr
    );
    // With a terminal (`script` gives the run one), the live line shows turn and status.
    let Ok(out) = std::process::Command::new("script")
        .args([
            "-qec",
            &format!(
                "{} {} --out {}",
                env!("CARGO_BIN_EXE_cn-run"),
                j.display(),
                tmp.path().join("o3").display()
            ),
            "/dev/null",
        ])
        .current_dir(tmp.path())
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .output()
    else {
        println!("skipped the terminal check: `script` is not installed");
        return;
    };
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains("ci-job · turn 1"), "{screen}");
    assert!(screen.contains("ci-job · success"), "{screen}");
}

/// $GITHUB_OUTPUT read the way the Actions runner reads it: `name=value`, or
/// `name<<DELIMITER` then lines up to the delimiter. Panics on a line the runner rejects.
pub(super) fn parse_github_output(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.split('\n');
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        let eq = line.find('=');
        let heredoc = line.find("<<");
        match (eq, heredoc) {
            (Some(e), h) if h.is_none_or(|h| e < h) => {
                out.push((line[..e].to_owned(), line[e + 1..].to_owned()));
            }
            (_, Some(h)) => {
                let delim = &line[h + 2..];
                let mut value = Vec::new();
                loop {
                    let l = lines
                        .next()
                        .unwrap_or_else(|| panic!("{delim} never ends:\n{text}"));
                    if l == delim {
                        break;
                    }
                    value.push(l);
                }
                out.push((line[..h].to_owned(), value.join("\n")));
            }
            _ => panic!("the runner rejects {line:?}:\n{text}"),
        }
    }
    out
}

pub(super) fn action_yml() -> serde_yaml::Value {
    let text = std::fs::read_to_string(repo_root().join("action.yml")).unwrap();
    serde_yaml::from_str(&text).unwrap()
}

#[test]
fn every_step_output_is_declared_by_the_action_and_none_can_be_forged() {
    let tmp = tempfile::tempdir().unwrap();
    // The agent's answer tries to end a value early and to name an output of its own.
    let j = job(
        tmp.path(),
        "output_schema: {type: object, properties: {summary: {type: string}, fixed: {type: integer}}}\n",
        "turns:\n  - text: '{\"summary\": \"line one\\nline two\\nstatus=hacked\", \"fixed\": 3, \"x\\nstatus\": \"hacked\", \"a=b<<c\": 1}'\n",
    );
    let mut cmd = cn_run(tmp.path());
    cmd.arg(&j)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", tmp.path().join("gh_output"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let text = std::fs::read_to_string(tmp.path().join("gh_output")).unwrap();
    let outputs = parse_github_output(&text);
    let get = |name: &str| -> Vec<&str> {
        outputs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(get("status"), ["success"], "{text}");
    assert_eq!(get("output-summary"), ["line one\nline two\nstatus=hacked"]);
    assert_eq!(get("output-fixed"), ["3"]);
    // Field names that are not output names are only in structured-output.
    let fields: Vec<&str> = outputs
        .iter()
        .filter(|(k, _)| k.starts_with("output-"))
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(fields, ["output-summary", "output-fixed"], "{text}");
    let structured = get("structured-output");
    assert_eq!(structured.len(), 1);
    assert!(!structured[0].contains('\n'), "one line: {text}");
    let value: serde_json::Value = serde_json::from_str(structured[0]).unwrap();
    assert_eq!(value["summary"], "line one\nline two\nstatus=hacked");
    assert_eq!(value["x\nstatus"], "hacked");
    assert_eq!(value["a=b<<c"], 1);
    // A composite action passes on only the outputs it declares: every fixed one must be.
    let action = action_yml();
    let declared = action["outputs"].as_mapping().unwrap();
    let written: Vec<&str> = outputs
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !k.starts_with("output-"))
        .collect();
    for name in &written {
        let decl = declared
            .get(*name)
            .unwrap_or_else(|| panic!("action.yml does not declare the output {name}"));
        assert_eq!(
            decl["value"].as_str(),
            Some(format!("${{{{ steps.run.outputs.{name} }}}}").as_str()),
            "action.yml does not pass on the output {name}"
        );
        assert!(decl["description"].as_str().is_some_and(|d| !d.is_empty()));
    }
    for name in declared.keys() {
        let name = name.as_str().unwrap();
        assert!(
            written.contains(&name),
            "action.yml declares {name}, never written"
        );
    }
}

#[test]
fn the_step_summary_lists_changed_files_and_the_tail_of_a_failed_check() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    write_files(&ws, &[("a.txt", "alpha\nbeta\n"), ("gone.txt", "bye\n")]);
    git_init(&ws);
    let secret = "ghp_plantedSecretValue789";
    let check = "for i in $(seq 1 30); do printf '\\\\033[31mline %s\\\\033[0m\\\\n' $i; done; echo token=$DEPLOY_TOKEN; exit 3";
    let rest = format!(
        "permissions: {{allow: ['Edit(*)', 'Write(**)', 'Bash(rm *)']}}\ntools: {{bash: {{env: [DEPLOY_TOKEN]}}}}\nchecks: [{{name: 'unit `tests`', run: \"{check}\"}}]\n"
    );
    let j = job(
        tmp.path(),
        &rest,
        "turns:\n  - tool_calls: [{name: Read, arguments: {filepath: a.txt}}]\n  - tool_calls:\n      - {name: Edit, arguments: {file_path: a.txt, old_string: alpha, new_string: ALPHA}}\n      - {name: Write, arguments: {filepath: new dir/b.txt, content: \"one\\ntwo\\n\"}}\n      - {name: Bash, arguments: {command: 'rm gone.txt'}}\n  - text: done\n",
    );
    let mut cmd = cn_run(&ws);
    cmd.arg(&j)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", tmp.path().join("gh_summary"))
        .env("DEPLOY_TOKEN", secret);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 1, "{r:#?}");
    let summary = std::fs::read_to_string(tmp.path().join("gh_summary")).unwrap();
    assert!(summary.contains("cn-run `ci-job`: failed"), "{summary}");
    // What changed, per file, from the run's own diff.
    assert!(summary.contains("**Changes:** 3 files, +3 −2"), "{summary}");
    for row in [
        "| `a.txt` | 1 | 1 |",
        "| `gone.txt` (deleted) | 0 | 1 |",
        "| `new dir/b.txt` (new) | 2 | 0 |",
    ] {
        assert!(summary.contains(row), "missing {row:?}:\n{summary}");
    }
    // Why the check failed: the end of its output, without terminal codes or the secret.
    assert!(
        summary.contains("| unit `tests` | 1 | ❌ failed (exit 3) |"),
        "{summary}"
    );
    let details = summary
        .split("<details><summary>❌ <code>unit `tests`</code> failed (exit 3): last 20 lines of output</summary>\n\n```text\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no output tail:\n{summary}"));
    let shown = details.split("\n```\n\n</details>").next().unwrap();
    let mut expected: Vec<String> = (12..=30).map(|i| format!("line {i}")).collect();
    expected.push("token=[REDACTED]".to_owned());
    assert_eq!(shown.lines().collect::<Vec<_>>(), expected, "{summary}");
    assert!(!summary.contains('\u{1b}'), "terminal codes in {summary}");
    assert!(!summary.contains(secret));
}

#[test]
fn a_passing_run_summary_has_no_failure_details() {
    let tmp = tempfile::tempdir().unwrap();
    let r = github_run(tmp.path(), "ghp_plantedSecretValue321");
    assert_eq!(r.code, 0, "{r:#?}");
    let summary = std::fs::read_to_string(tmp.path().join("gh_summary")).unwrap();
    assert!(!summary.contains("<details><summary>❌"), "{summary}");
    // Not a git repository: the summary says changes were not recorded, not "none".
    assert!(summary.contains("**Changes:** not recorded"), "{summary}");
}

/// A step's script as the runner runs it: written to a file, run by `bash --noprofile
/// --norc -eo pipefail FILE` in `dir`, with only PATH, HOME and RUNNER_TEMP (= `dir`) set.
pub(super) fn runner_step(dir: &Path, script: &str) -> std::process::Command {
    write_files(dir, &[("step.sh", script)]);
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "step.sh"])
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("RUNNER_TEMP", dir);
    cmd
}

/// The action's "Run the job" step, run with bash as the runner runs it, against a fake
/// cn-run that records its argv. Returns (exit code, stdout+stderr, argv if it ran).
fn run_action_step(dir: &Path, job: &str, args: &str) -> (i32, String, Option<Vec<String>>) {
    let action = action_yml();
    let step = action["runs"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "run")
        .expect("a step with id run");
    assert_eq!(step["shell"], "bash");
    let env = step["env"].as_mapping().unwrap();
    for var in ["INPUT_JOB", "INPUT_PARAMS", "INPUT_MODEL", "INPUT_ARGS"] {
        assert!(env.contains_key(var), "{var} is not passed to the step");
    }
    write_files(
        dir,
        &[
            (
                "cn-run/bin/cn-run",
                "#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$ARGV_OUT\"\nprintf '%s' \"$MY_KEY\" > \"$ARGV_OUT.key\"\n",
            ),
            ("glob-me", ""),
        ],
    );
    let fake = dir.join("cn-run/bin/cn-run");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let _ = std::fs::remove_file(dir.join("argv"));
    let out = runner_step(dir, step["run"].as_str().unwrap())
        .env("CN_RUN", &fake)
        .env("ARGV_OUT", dir.join("argv"))
        .env("INPUT_JOB", job)
        .env("INPUT_PARAMS", "A=1\nB=two words\n")
        .env("INPUT_MODEL", "m1")
        .env("INPUT_API_KEY", "sk-test-key-0001")
        .env("INPUT_API_KEY_ENV", "MY_KEY")
        .env("INPUT_FORMAT", "json")
        .env("INPUT_ARGS", args)
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let argv = std::fs::read(dir.join("argv")).ok().map(|bytes| {
        let key = std::fs::read_to_string(dir.join("argv.key")).unwrap();
        assert_eq!(
            key, "sk-test-key-0001",
            "the key reaches cn-run in its variable"
        );
        let mut words: Vec<String> = bytes
            .split(|&b| b == 0)
            .map(|w| String::from_utf8(w.to_vec()).unwrap())
            .collect();
        assert_eq!(words.pop().as_deref(), Some(""), "NUL-terminated");
        words
    });
    (out.status.code().unwrap_or(-1), log, argv)
}

const JOBS: &str = "jobs/a.yaml\njobs/b.yaml";

#[test]
fn the_action_takes_job_paths_by_line_and_expands_globs() {
    let tmp = tempfile::tempdir().unwrap();
    let jobs = |argv: Option<Vec<String>>| -> Vec<String> {
        let argv = argv.expect("cn-run ran");
        let end = argv.iter().position(|w| w == "--param").unwrap();
        argv[2..end].to_vec()
    };
    write_files(
        tmp.path(),
        &[
            ("jobs/b.yaml", ""),
            ("jobs/a.yaml", ""),
            ("my jobs/one job.yaml", ""),
        ],
    );
    let (code, log, argv) = run_action_step(tmp.path(), "jobs/*.yaml", "");
    assert_eq!(code, 0, "{log}");
    assert_eq!(jobs(argv), ["jobs/a.yaml", "jobs/b.yaml"]);
    // A path with spaces: alone on its line, or the whole input.
    let (code, log, argv) =
        run_action_step(tmp.path(), "  my jobs/one job.yaml\njobs/b.yaml\n", "");
    assert_eq!(code, 0, "{log}");
    assert_eq!(jobs(argv), ["my jobs/one job.yaml", "jobs/b.yaml"]);
    let (_, _, argv) = run_action_step(tmp.path(), "my jobs/one job.yaml", "");
    assert_eq!(jobs(argv), ["my jobs/one job.yaml"]);
    let (_, _, argv) = run_action_step(tmp.path(), "jobs/b.yaml jobs/a.yaml", "");
    assert_eq!(jobs(argv), ["jobs/b.yaml", "jobs/a.yaml"]);
    // A glob that matches nothing stops the step before cn-run starts.
    let (code, log, argv) = run_action_step(tmp.path(), "job/*.yml", "");
    assert_ne!(code, 0, "{log}");
    assert_eq!(argv, None, "{log}");
    assert!(
        log.contains("::error title=cn-run action::no job file matches job/*.yml"),
        "{log}"
    );
}

#[test]
fn the_action_splits_args_like_shell_words_and_never_runs_them() {
    let tmp = tempfile::tempdir().unwrap();
    let args = "--allow 'Bash(python3 *)' --max-turns 20\n--note \"two  words\" it\\'s 'say \"hi\"' \
                $(touch pwned) `touch pwned2` $HOME *";
    let (code, log, argv) = run_action_step(tmp.path(), JOBS, args);
    assert_eq!(code, 0, "{log}");
    let argv = argv.unwrap_or_else(|| panic!("cn-run did not run:\n{log}"));
    assert_eq!(
        argv,
        [
            "--format",
            "json",
            "jobs/a.yaml",
            "jobs/b.yaml",
            "--param",
            "A=1",
            "--param",
            "B=two words",
            "--model",
            "m1",
            "--allow",
            "Bash(python3 *)",
            "--max-turns",
            "20",
            "--note",
            "two  words",
            "it's",
            "say \"hi\"",
            "$(touch",
            "pwned)",
            "`touch",
            "pwned2`",
            "$HOME",
            "*",
        ]
    );
    assert!(!tmp.path().join("pwned").exists() && !tmp.path().join("pwned2").exists());
    assert!(log.contains("::add-mask::sk-test-key-0001"), "{log}");

    // Blank args add no (empty) word.
    let (code, log, argv) = run_action_step(tmp.path(), JOBS, " \n ");
    assert_eq!(code, 0, "{log}");
    assert_eq!(argv.unwrap().last().map(String::as_str), Some("m1"));

    // An unmatched quote stops the step before cn-run starts, and says why.
    let (code, log, argv) = run_action_step(tmp.path(), JOBS, "--allow 'Bash(python3 *)");
    assert_ne!(code, 0, "{log}");
    assert_eq!(argv, None, "cn-run ran with a half-split args:\n{log}");
    assert!(
        log.contains("::error title=cn-run action::cannot split the args input"),
        "{log}"
    );
}
