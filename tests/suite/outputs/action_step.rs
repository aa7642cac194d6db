//! The GitHub Action with several jobs in one step and with hostile or huge answers: each
//! output written once (aggregate status = the worst, `results` one item per job), a step
//! summary that shows every job, stays under GitHub's size limit (the answer is cut first,
//! never the outcome and checks) and that no model text can break; a build cache keyed on
//! the action's own Cargo.lock.

use std::path::Path;

use super::ci_outputs::{action_yml, parse_github_output, runner_step};
use crate::support::runner::{cn_run, repo_root, run, without_user_namespaces, write_files};

fn job(dir: &Path, name: &str, rest: &str, answer: &str) {
    let script = format!("turns:\n  - text: {answer:?}\n");
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: {name}.s.yaml}}\nprompt: go\n{rest}"
    );
    write_files(
        dir,
        &[
            (&format!("{name}.yaml"), &job),
            (&format!("{name}.s.yaml"), &script),
        ],
    );
}

/// Runs `jobs` as the action would (GITHUB_ACTIONS=true); returns (exit code, outputs,
/// step summary).
fn actions_run(dir: &Path, jobs: &[&str]) -> (i32, Vec<(String, String)>, String) {
    let mut cmd = cn_run(dir);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", dir.join("gh_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("gh_summary"))
        .args(["--parallel", "2", "--isolate", "none", "--out"])
        .arg(dir.join("out"));
    for j in jobs {
        cmd.arg(format!("{j}.yaml"));
    }
    let r = run(cmd, None);
    let outputs = parse_github_output(&std::fs::read_to_string(dir.join("gh_output")).unwrap());
    let summary = std::fs::read_to_string(dir.join("gh_summary")).unwrap_or_default();
    (r.code, outputs, summary)
}

#[test]
fn several_jobs_write_each_output_once_with_the_worst_status_and_every_result() {
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "good", "", "fine");
    job(
        tmp.path(),
        "bad",
        "checks: [{name: c, run: 'exit 1'}]\n",
        "tried",
    );
    job(tmp.path(), "limited", "limits: {max_turns: 1}\n", "never");
    write_files(
        tmp.path(),
        &[(
            "limited.s.yaml",
            "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: never\n",
        )],
    );
    let (code, outputs, summary) = actions_run(tmp.path(), &["good", "bad", "limited"]);
    let names: Vec<&str> = outputs.iter().map(|(k, _)| k.as_str()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        names.len(),
        unique.len(),
        "an output written twice: {names:?}"
    );
    let get = |n: &str| outputs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let worst = get("status").unwrap();
    assert_eq!(get("exit-code").unwrap(), code.to_string());
    let results: serde_json::Value = serde_json::from_str(&get("results").unwrap()).unwrap();
    let per_job: Vec<(String, String, i64)> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["job"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
                r["exit_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per_job.len(), 3, "{results}");
    assert_eq!(per_job[0], ("good".into(), "success".into(), 0));
    assert_eq!(per_job[1], ("bad".into(), "failed".into(), 1));
    assert_eq!(per_job[2], ("limited".into(), "limit_reached".into(), 4));
    // The worst of the jobs is the step's status and exit code.
    let max = per_job.iter().map(|p| p.2).max().unwrap();
    let worst_job = per_job.iter().find(|p| p.2 == max).unwrap();
    assert_eq!(
        (worst.as_str(), i64::from(code)),
        (worst_job.1.as_str(), max),
        "{per_job:?}"
    );
    for item in results.as_array().unwrap() {
        assert!(
            Path::new(item["result"].as_str().unwrap()).is_file(),
            "{item}"
        );
    }
    // The combined files, and every job in the summary.
    let junit = std::fs::read_to_string(get("junit").unwrap()).unwrap();
    assert_eq!(junit.matches("<testsuite ").count(), 3, "{junit}");
    assert!(get("result").unwrap().ends_with("summary.json"));
    for name in ["good", "bad", "limited"] {
        assert!(summary.contains(&format!("cn-run `{name}`")), "{summary}");
    }
}

#[test]
fn an_unclosed_fence_or_html_in_the_answer_cannot_swallow_what_follows() {
    for (n, answer) in [
        "```\nunclosed fence",
        "````rust\nfn x() {}\n```",
        "</details>\n# forged heading\n<details>",
        "~~~\ntilde fence",
        "<!-- never closed",
    ]
    .iter()
    .enumerate()
    {
        let tmp = tempfile::tempdir().unwrap();
        job(tmp.path(), "first", "", answer);
        job(tmp.path(), "second", "", "second answer");
        let (code, _, summary) = actions_run(tmp.path(), &["first", "second"]);
        assert_eq!(code, 0, "{summary}");
        // The answer sits inside a fence longer than any backtick run in it, which ends
        // before `</details>`; the next job's section follows intact.
        // Jobs finish in any order: look in the first job's section.
        let section = summary.find("cn-run `first`").unwrap();
        let start = section
            + summary[section..]
                .find("<summary>Final answer</summary>")
                .unwrap();
        let rest = &summary[start..];
        let open = rest.find("\n\n").unwrap() + 2;
        let fence: String = rest[open..].chars().take_while(|c| *c == '`').collect();
        assert!(fence.len() >= 3, "case {n}: {rest}");
        let body_end = rest[open + fence.len()..]
            .find(&format!("\n{fence}\n"))
            .unwrap();
        assert!(rest[open..open + fence.len() + body_end].contains(answer.lines().next().unwrap()));
        let after = &rest[open + fence.len() + body_end..];
        assert!(
            after.starts_with(&format!("\n{fence}\n\n</details>")),
            "case {n}: {after}"
        );
        assert!(
            summary.contains("### ✅ cn-run `second`: success"),
            "case {n}: {summary}"
        );
    }
}

#[test]
fn a_huge_answer_is_cut_and_the_outcome_and_checks_stay_under_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let big = "x".repeat(1_500_000);
    job(
        tmp.path(),
        "huge",
        "checks: [{name: still shown, run: 'echo visible-tail; exit 1'}]\n",
        &big,
    );
    job(tmp.path(), "other", "", "small");
    let (code, _, summary) = actions_run(tmp.path(), &["huge", "other"]);
    assert_eq!(code, 1);
    assert!(summary.len() < 1_000_000, "{} bytes", summary.len());
    assert!(summary.contains("### ❌ cn-run `huge`: failed"));
    assert!(
        summary.contains("| still shown | 1 | ❌ failed (exit 1) |"),
        "checks table"
    );
    assert!(
        summary.contains("visible-tail"),
        "the failed check's output"
    );
    assert!(summary.contains("the whole answer is in result.json"));
    assert!(summary.contains("### ✅ cn-run `other`: success"));
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("out/huge/result.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        result["result"].as_str().unwrap().len(),
        big.len(),
        "result.json keeps it whole"
    );
}

/// The "key" step run as the runner runs it: the key holds the hash of the action's own
/// Cargo.lock (hashFiles cannot see the action's folder) and its ref.
#[test]
fn the_build_cache_key_comes_from_the_actions_own_cargo_lock_and_ref() {
    let action = action_yml();
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let key_step = steps.iter().find(|s| s["id"] == "key").expect("a key step");
    let cache = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .unwrap();
    assert_eq!(cache["with"]["key"], "${{ steps.key.outputs.key }}");
    assert!(!serde_yaml::to_string(cache).unwrap().contains("hashFiles"));
    let tmp = tempfile::tempdir().unwrap();
    let key_for = |action_dir: &Path, reference: &str| -> String {
        let out = tmp.path().join("out");
        let _ = std::fs::remove_file(&out);
        let status = std::process::Command::new("bash")
            .args(["-c", key_step["run"].as_str().unwrap()])
            .env("GITHUB_ACTION_PATH", action_dir)
            .env("GITHUB_ACTION_REF", reference)
            .env("GITHUB_OUTPUT", &out)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .status()
            .unwrap();
        assert!(status.success());
        let text = std::fs::read_to_string(&out).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("key="))
            .unwrap()
            .to_owned()
    };
    let lock = std::fs::read(repo_root().join("Cargo.lock")).unwrap();
    let digest = sha2_hex(&lock);
    let real = key_for(&repo_root(), "v1");
    assert!(
        real.contains(&digest[..16]) && real.contains("-v1-"),
        "{real}"
    );
    assert_ne!(real, key_for(&repo_root(), "v2"));
    // Another Cargo.lock, another key.
    let copy = tmp.path().join("action");
    write_files(
        &copy,
        &[
            ("Cargo.lock", "other"),
            ("Cargo.toml", ""),
            ("src/lib.rs", ""),
        ],
    );
    assert!(!key_for(&copy, "v1").contains(&digest[..16]));
}

fn sha2_hex(bytes: &[u8]) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// The step of action.yml with `id`, as the runner gets it.
fn step(id: &str) -> serde_yaml::Value {
    action_yml()["runs"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id || s["name"].as_str().is_some_and(|n| n == id))
        .unwrap_or_else(|| panic!("no step {id}"))
        .clone()
}

/// Starts the "Run the job" step's script as the runner does (`bash --noprofile --norc
/// -eo pipefail FILE`), in its own process group as the runner starts a step, running
/// the real cn-run on `job` with `--out out`.
fn start_run_step(dir: &Path, script: &str, job: &str) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    job_step(dir, script, job, "--out out --quiet")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// The "Run the job" step's script, ready to run as the runner does, with the real cn-run
/// on `job` and `args`, the other inputs at their defaults.
fn job_step(dir: &Path, script: &str, job: &str, args: &str) -> std::process::Command {
    let mut cmd = runner_step(dir, script);
    cmd.env("CN_RUN", env!("CARGO_BIN_EXE_cn-run"))
        .env("INPUT_JOB", job)
        .env("INPUT_PARAMS", "")
        .env("INPUT_MODEL", "")
        .env("INPUT_API_KEY", "")
        .env("INPUT_API_KEY_ENV", "OPENAI_API_KEY")
        .env("INPUT_FORMAT", "json")
        .env("INPUT_ARGS", args);
    cmd
}

fn signal(pid: u32, sig: &str) {
    let _ = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status();
}

/// A job whose only call sleeps: the run is busy when the cancel comes.
fn sleeping_job(dir: &Path) {
    job(
        dir,
        "busy",
        "permissions: {allow: ['Bash(sleep *)']}\n",
        "never reached",
    );
    write_files(
        dir,
        &[(
            "busy.s.yaml",
            "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'sleep 300'}}]\n  - text: never\n",
        )],
    );
}

fn events_say(dir: &Path, what: &str) -> bool {
    std::fs::read_to_string(dir.join("out/events.jsonl")).is_ok_and(|e| e.contains(what))
}

/// A cancelled workflow: the runner sends SIGINT to the step's process (then SIGTERM after
/// 7.5 s). The step execs cn-run, so the signal reaches it: the run stops as interrupted,
/// exit 130, with result.json. The control runs the same script without `exec`: the shell
/// takes the signals and ends, and cn-run goes on with no result.json — what happened
/// before.
#[test]
fn a_cancelled_step_stops_cn_run_which_writes_its_result() {
    use crate::support::procs::{alive, kill_in_dir, wait_for};
    let script = step("run")["run"].as_str().unwrap().to_owned();
    assert!(script.contains("exec \"${cmd[@]}\""), "{script}");
    for sig in ["-INT", "-TERM"] {
        let tmp = tempfile::tempdir().unwrap();
        sleeping_job(tmp.path());
        let mut child = start_run_step(tmp.path(), &script, "busy.yaml");
        assert!(wait_for(|| events_say(tmp.path(), "\"tool.started\"")));
        signal(child.id(), sig);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{sig}: {status:?}");
        let result: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join("out/result.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(result["status"], "interrupted", "{sig}: {result}");
        assert!(events_say(tmp.path(), "\"run.completed\""));
        kill_in_dir(tmp.path());
    }

    // The control: the step as it was, without exec.
    let tmp = tempfile::tempdir().unwrap();
    sleeping_job(tmp.path());
    let without_exec = script.replace("exec \"${cmd[@]}\"", "\"${cmd[@]}\"");
    let mut child = start_run_step(tmp.path(), &without_exec, "busy.yaml");
    assert!(wait_for(|| events_say(tmp.path(), "\"tool.started\"")));
    let shell = child.id();
    let cn_run: u32 = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
        .unwrap()
        .split_whitespace()
        .next()
        .expect("the shell's child, cn-run")
        .parse()
        .unwrap();
    signal(shell, "-INT");
    signal(shell, "-TERM");
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(130), "{status:?}");
    assert!(alive(cn_run), "without exec cn-run outlives its step");
    assert!(!tmp.path().join("out/result.json").exists());
    signal(cn_run, "-KILL");
    kill_in_dir(tmp.path());
}

/// Runs a step's script as the runner does, with `env`; returns (exit code, log, outputs).
fn run_step(dir: &Path, id: &str, path: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let outputs = dir.join("gh_output");
    let _ = std::fs::remove_file(&outputs);
    let out = runner_step(dir, step(id)["run"].as_str().unwrap())
        .env("PATH", path)
        .env("GITHUB_OUTPUT", &outputs)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let outputs = std::fs::read_to_string(&outputs).unwrap_or_default();
    (out.status.code().unwrap_or(-1), log, outputs)
}

fn link(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(from, to).unwrap();
}

/// `binary:` names a prebuilt cn-run: the build steps are skipped and the run step gets
/// that binary; without cn-run-call beside it the step stops and says why.
#[test]
fn the_binary_input_skips_the_build_and_needs_cn_run_call_beside_it() {
    let action = action_yml();
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let builds: Vec<&serde_yaml::Value> = steps
        .iter()
        .filter(|s| {
            s["id"] == "key"
                || s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/cache@"))
                || s["run"]
                    .as_str()
                    .is_some_and(|r| r.contains("cargo install"))
        })
        .collect();
    assert_eq!(builds.len(), 3);
    for s in builds {
        assert_eq!(s["if"], "inputs.binary == ''", "{s:?}");
    }
    assert_eq!(
        step("run")["env"]["CN_RUN"],
        "${{ steps.locate.outputs.path }}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_cn-run"));
    let call = bin.with_file_name("cn-run-call");
    link(bin, &tmp.path().join("release/cn-run"));
    link(&call, &tmp.path().join("release/cn-run-call"));
    link(bin, &tmp.path().join("lonely/cn-run"));
    link(bin, &tmp.path().join("cn-run/bin/cn-run"));
    link(&call, &tmp.path().join("cn-run/bin/cn-run-call"));
    let path = std::env::var("PATH").unwrap();
    // A relative path, as a workflow writes it, becomes absolute.
    let (code, log, outputs) = run_step(
        tmp.path(),
        "locate",
        &path,
        &[("INPUT_BINARY", "release/cn-run")],
    );
    assert_eq!(code, 0, "{log}");
    assert!(log.contains(env!("CARGO_PKG_VERSION")), "{log}");
    assert_eq!(
        outputs,
        format!("path={}\n", tmp.path().join("release/cn-run").display())
    );
    // None given: the one the build step installed.
    let (code, log, outputs) = run_step(tmp.path(), "locate", &path, &[("INPUT_BINARY", "")]);
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        outputs,
        format!("path={}\n", tmp.path().join("cn-run/bin/cn-run").display())
    );
    // cn-run alone, or nothing there.
    for missing in ["lonely/cn-run", "nowhere/cn-run"] {
        let (code, log, outputs) =
            run_step(tmp.path(), "locate", &path, &[("INPUT_BINARY", missing)]);
        assert_eq!(code, 2, "{log}");
        assert!(
            log.contains(
                "::error title=cn-run action::no executable cn-run with cn-run-call beside it"
            ),
            "{log}"
        );
        assert!(outputs.is_empty(), "{outputs}");
    }
}

/// Stand-ins for bwrap, sudo and apparmor_parser: bwrap fails until a profile was loaded
/// (when `fixes` is true loading makes it work, as on Ubuntu 24.04), sudo runs the command
/// with /etc/apparmor.d mapped into the test's folder (and logs each use), or refuses.
fn bubblewrap_stand_ins(dir: &Path, fixes: bool, sudo_works: bool) -> String {
    let bin = dir.join("bin");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("etc/apparmor.d")).unwrap();
    let bwrap = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{d}/bwrap.log'\n[ -f '{d}/loaded' ] && exit 0\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
        d = dir.display()
    );
    let sudo = if sudo_works {
        format!(
            "#!/bin/bash\n[ \"$1\" = -n ] && shift\necho \"$*\" >> '{d}/sudo.log'\nexec \"${{@//\\/etc\\/apparmor.d/{r}\\/etc\\/apparmor.d}}\"\n",
            d = dir.display(),
            r = root.display().to_string().replace('/', "\\/")
        )
    } else {
        "#!/bin/sh\necho 'sudo: a password is required' >&2\nexit 1\n".to_owned()
    };
    let parser = format!(
        "#!/bin/sh\necho \"$*\" >> '{d}/parser.log'\n{fix}\n",
        d = dir.display(),
        fix = if fixes {
            format!("touch '{}/loaded'", dir.display())
        } else {
            String::new()
        }
    );
    write_files(
        &bin,
        &[
            ("bwrap", &bwrap),
            ("sudo", &sudo),
            ("apparmor_parser", &parser),
        ],
    );
    for f in ["bwrap", "sudo", "apparmor_parser"] {
        std::fs::set_permissions(
            bin.join(f),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
    }
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
}

#[test]
fn where_bubblewrap_cannot_start_the_action_loads_a_profile_for_it_alone_and_probes_again() {
    let name = "Make bubblewrap usable";
    assert_eq!(step(name)["if"], "runner.os == 'Linux'");
    // As on Ubuntu 24.04: the first probe fails, the profile makes bwrap work.
    let tmp = tempfile::tempdir().unwrap();
    let path = bubblewrap_stand_ins(tmp.path(), true, true);
    let (code, log, _) = run_step(tmp.path(), name, &path, &[]);
    assert_eq!(code, 0, "{log}");
    assert!(
        log.contains("bubblewrap cannot start: bwrap: setting up uid map"),
        "{log}"
    );
    assert!(
        log.contains("bubblewrap works under the AppArmor profile cn-run-bwrap"),
        "{log}"
    );
    assert!(!log.contains("::warning"), "{log}");
    let profile =
        std::fs::read_to_string(tmp.path().join("root/etc/apparmor.d/cn-run-bwrap")).unwrap();
    let bwrap = tmp.path().join("bin/bwrap");
    assert_eq!(
        profile,
        format!(
            "abi <abi/4.0>,\ninclude <tunables/global>\nprofile cn-run-bwrap {} flags=(unconfined) {{\n  userns,\n}}\n",
            bwrap.display()
        ),
        "a profile for bwrap alone, granting it user namespaces"
    );
    let parsed = std::fs::read_to_string(tmp.path().join("parser.log")).unwrap();
    assert!(
        parsed.contains("-r ") && parsed.contains("cn-run-bwrap"),
        "{parsed}"
    );
    let probes = std::fs::read_to_string(tmp.path().join("bwrap.log")).unwrap();
    assert_eq!(
        probes.lines().count(),
        2,
        "probed before and after: {probes}"
    );
    assert!(probes.contains("--unshare-all"), "{probes}");

    // The profile does not help: a warning says commands are contained in part.
    let tmp = tempfile::tempdir().unwrap();
    let path = bubblewrap_stand_ins(tmp.path(), false, true);
    let (code, log, _) = run_step(tmp.path(), name, &path, &[]);
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("::warning title=cn-run action::bubblewrap cannot start on this runner (bwrap: setting up uid map"), "{log}");

    // No sudo: nothing is installed, the same warning.
    let tmp = tempfile::tempdir().unwrap();
    let path = bubblewrap_stand_ins(tmp.path(), true, false);
    let (code, log, _) = run_step(tmp.path(), name, &path, &[]);
    assert_eq!(code, 0, "{log}");
    assert!(!tmp.path().join("root/etc/apparmor.d/cn-run-bwrap").exists());
    assert!(
        log.contains("::warning title=cn-run action::bubblewrap cannot start"),
        "{log}"
    );

    // Where bubblewrap starts (this machine's real one), nothing is changed.
    if Path::new("/usr/bin/bwrap").exists() {
        let tmp = tempfile::tempdir().unwrap();
        let (code, log, _) = run_step(tmp.path(), name, &std::env::var("PATH").unwrap(), &[]);
        assert_eq!(code, 0, "{log}");
        assert!(
            log.contains("bubblewrap works: commands are contained"),
            "{log}"
        );
    } else {
        eprintln!("SKIPPED the real bubblewrap probe: /usr/bin/bwrap is not installed");
    }
}

/// Runs `args` as the action does (GITHUB_ACTIONS=true), without --parallel; returns
/// (exit code, outputs, step summary, stderr).
fn actions_call(dir: &Path, args: &[&str]) -> (i32, Vec<(String, String)>, String, String) {
    let mut cmd = cn_run(dir);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", dir.join("gh_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("gh_summary"))
        .env("OPENAI_API_KEY", "sk-test-not-needed")
        .args(args);
    let r = run(cmd, None);
    let outputs =
        parse_github_output(&std::fs::read_to_string(dir.join("gh_output")).unwrap_or_default());
    let summary = std::fs::read_to_string(dir.join("gh_summary")).unwrap_or_default();
    (r.code, outputs, summary, r.stderr)
}

fn output(outputs: &[(String, String)], name: &str) -> String {
    outputs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no output {name}: {outputs:?}"))
}

/// An invalid job file: the step still gets `status: invalid`, `exit-code: 2`, a
/// `results` item, a summary section, a JUnit report, and an `::error` on each line.
#[test]
fn an_invalid_job_file_gets_its_outputs_summary_and_located_errors() {
    for (n, (text, places)) in [
        (
            "version: 1\nname: x\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: go\nlimits: {max_turns: lots}\ncolour: red\n",
            vec![(5, "limits.max_turns"), (6, "colour")],
        ),
        ("version: 1\nname: x\nprompt: [unclosed\n", vec![(4, "")]),
        (
            "version: 1\nname: x\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: 'fix {{ params.pth }}'\nparams: {path: {default: src}}\n",
            vec![(4, "prompt")],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let tmp = tempfile::tempdir().unwrap();
        write_files(tmp.path(), &[("jobs/broken.yaml", text), ("jobs/s.yaml", "turns:\n  - text: hi\n")]);
        let (code, outputs, summary, stderr) = actions_call(tmp.path(), &["jobs/broken.yaml"]);
        assert_eq!(code, 2, "case {n}: {stderr}");
        assert_eq!(output(&outputs, "status"), "invalid", "case {n}");
        assert_eq!(output(&outputs, "exit-code"), "2", "case {n}");
        let results: serde_json::Value = serde_json::from_str(&output(&outputs, "results")).unwrap();
        assert_eq!(results[0]["job"], "jobs/broken.yaml", "case {n}: {results}");
        assert_eq!(results[0]["status"], "invalid");
        assert_eq!(results[0]["exit_code"], 2);
        let junit = std::fs::read_to_string(output(&outputs, "junit")).unwrap();
        assert!(junit.contains("failures=\"1\""), "case {n}: {junit}");
        assert!(summary.contains("### ❌ cn-run `jobs/broken.yaml`: invalid"), "case {n}: {summary}");
        for (line, field) in places {
            let prefix = format!("::error file=jobs/broken.yaml,line={line},col=");
            let annotation = stderr
                .lines()
                .find(|l| l.starts_with(&prefix))
                .unwrap_or_else(|| panic!("case {n}: no error on line {line}:\n{stderr}"));
            assert!(annotation.contains(field), "case {n}: {annotation}");
        }
    }
}

/// A job of several that cannot start (its key is not set): its own `results` item, its
/// summary section and a located `::error`, beside the job that ran.
#[test]
fn a_parallel_job_that_cannot_start_gets_its_result_summary_and_error() {
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "ran", "", "fine");
    write_files(
        tmp.path(),
        &[(
            "nokey.yaml",
            "version: 1\nname: nokey\nmodel:\n  provider: openai\n  name: gpt-4.1\n  api_key_env: CN_RUN_TEST_UNSET\nprompt: go\n",
        )],
    );
    let (code, outputs, summary, stderr) = actions_call(
        tmp.path(),
        &[
            "ran.yaml",
            "nokey.yaml",
            "--parallel",
            "2",
            "--isolate",
            "none",
            "--out",
            "out",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(output(&outputs, "status"), "invalid");
    let results: serde_json::Value = serde_json::from_str(&output(&outputs, "results")).unwrap();
    let jobs: Vec<(&str, &str)> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["job"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(jobs, [("ran", "success"), ("nokey", "invalid")]);
    assert!(
        results[1]["reason"]
            .as_str()
            .unwrap()
            .contains("CN_RUN_TEST_UNSET")
    );
    assert!(
        summary.contains("### ✅ cn-run `ran`: success"),
        "{summary}"
    );
    assert!(
        summary.contains("### ❌ cn-run `nokey`: invalid"),
        "{summary}"
    );
    assert!(
        stderr.contains("::error file=nokey.yaml,line=6,col=16,title=cn-run nokey%3A invalid::model.api_key_env names CN_RUN_TEST_UNSET"),
        "{stderr}"
    );
    let junit = std::fs::read_to_string(output(&outputs, "junit")).unwrap();
    assert_eq!(junit.matches("<testsuite ").count(), 2, "{junit}");
}

/// Containment in part is said where a reader of the step looks: a `::warning` naming
/// what is missing and why, and a line of the step summary. The control is the same job
/// where bubblewrap starts: no warning, and the summary names what held. The job runs a
/// command (a check): the sandbox is set up for the first one.
#[test]
fn partial_containment_is_a_warning_and_a_summary_line() {
    let check = "checks:\n  - {name: c, run: \"true\"}\n";
    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "contained", check, "done");
    let (summary_file, output_file) = (tmp.path().join("gh_summary"), tmp.path().join("gh_output"));
    let env = [
        ("GITHUB_ACTIONS", Path::new("true")),
        ("GITHUB_STEP_SUMMARY", summary_file.as_path()),
        ("GITHUB_OUTPUT", output_file.as_path()),
    ];
    let Some(r) = without_user_namespaces(tmp.path(), &["contained.yaml", "--out", "out"], &env)
    else {
        return;
    };
    let (code, stderr) = (r.code, r.stderr);
    assert_eq!(code, 0, "{stderr}");
    let summary = std::fs::read_to_string(tmp.path().join("gh_summary")).unwrap();
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("::warning title=cn-run contained%3A partial containment::"))
        .unwrap_or_else(|| panic!("no warning:\n{stderr}"));
    assert!(
        warning.contains("not in force: ") && warning.contains("pid-namespace"),
        "{warning}"
    );
    assert!(warning.contains("bubblewrap"), "why: {warning}");
    assert!(
        summary.contains("⚠️ **Containment: partial** — commands ran with"),
        "{summary}"
    );

    let tmp = tempfile::tempdir().unwrap();
    job(tmp.path(), "contained", check, "done");
    let mut cmd = cn_run(tmp.path());
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", tmp.path().join("gh_summary"))
        .arg("contained.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let summary = std::fs::read_to_string(tmp.path().join("gh_summary")).unwrap();
    if r.result()["sandbox"]["missing"]
        .as_array()
        .is_some_and(Vec::is_empty)
    {
        assert!(!r.stderr.contains("partial containment"), "{}", r.stderr);
        assert!(
            summary.contains("**Containment:** bubblewrap (workspace-write): "),
            "{summary}"
        );
    } else {
        eprintln!("SKIPPED the control: bubblewrap cannot start here either");
    }
}

/// The "Run the job" step, run as the runner runs it with the real cn-run, for every run
/// shape: the step's exit code and its `status`/`exit-code` outputs say how the run ended,
/// and the summary's heading too.
#[test]
fn every_run_shape_reaches_the_steps_outputs_as_it_ended() {
    let script = step("run")["run"].as_str().unwrap().to_owned();
    let flaky = "if [ -f .seen ]; then echo pass; else touch .seen; echo first; exit 3; fi";
    let shapes: [(&str, String, &str, &str, i32); 6] = [
        (
            "passing",
            "checks: [{name: ok, run: 'true'}]\n".into(),
            "turns:\n  - text: done\n",
            "success",
            0,
        ),
        (
            "failing",
            "checks: [{name: c, run: 'exit 1'}]\nretry: {max_attempts: 2}\n".into(),
            "turns:\n  - text: a\n  - text: b\n",
            "failed",
            1,
        ),
        (
            "retried",
            format!("checks: [{{name: c, run: {flaky:?}}}]\nretry: {{max_attempts: 2}}\n"),
            "turns:\n  - text: a\n  - text: b\n",
            "success",
            0,
        ),
        (
            "limited",
            "limits: {max_turns: 1}\n".into(),
            "turns:\n  - tool_calls: [{name: List, arguments: {dirpath: .}}]\n  - text: never\n",
            "limit_reached",
            4,
        ),
        (
            "hostile",
            "checks: [{name: noisy, run: \"printf '\\\\033]0;x\\\\nafter\\\\n'; exit 1\"}]\n"
                .into(),
            "turns:\n  - text: \"```\\n</details>\"\n",
            "failed",
            1,
        ),
        (
            "broken",
            "colour: red\n".into(),
            "turns:\n  - text: never\n",
            "invalid",
            2,
        ),
    ];
    for (name, rest, turns, status, code) in shapes {
        let tmp = tempfile::tempdir().unwrap();
        job(tmp.path(), name, &rest, "x");
        write_files(tmp.path(), &[(&format!("{name}.s.yaml"), turns)]);
        let out = job_step(tmp.path(), &script, &format!("{name}.yaml"), "--out out")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", tmp.path().join("gh_output"))
            .env("GITHUB_STEP_SUMMARY", tmp.path().join("gh_summary"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{name}: {out:?}");
        let outputs =
            parse_github_output(&std::fs::read_to_string(tmp.path().join("gh_output")).unwrap());
        let get = |k: &str| outputs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(
            get("status").as_deref(),
            Some(status),
            "{name}: {outputs:?}"
        );
        assert_eq!(get("exit-code"), Some(code.to_string()), "{name}");
        let summary = std::fs::read_to_string(tmp.path().join("gh_summary")).unwrap();
        let icon = if code == 0 { "✅" } else { "❌" };
        let heading = if code == 2 {
            format!("{name}.yaml")
        } else {
            name.to_owned()
        };
        assert!(
            summary.contains(&format!("### {icon} cn-run `{heading}`: {status}")),
            "{name}: {summary}"
        );
    }
}

/// The action's report steps, run as the runner runs them on a real `--parallel` call's
/// `results`: the upload step gets each job's report.html and a name of its own, and the
/// summary gets a link to the uploaded artifact. The control: with `--html off` there is
/// nothing to upload and no upload step would run.
#[test]
fn the_action_uploads_each_page_and_links_it_from_the_summary() {
    let path = std::env::var("PATH").unwrap();
    for (flags, pages) in [(&[][..], 2), (&["--html", "off"][..], 0)] {
        let tmp = tempfile::tempdir().unwrap();
        job(tmp.path(), "one", "", "fine");
        job(
            tmp.path(),
            "two",
            "checks: [{name: c, run: 'exit 1'}]\n",
            "tried",
        );
        let mut args = vec!["--parallel", "2", "--isolate", "none", "--out", "out"];
        args.extend(flags);
        args.extend(["one.yaml", "two.yaml"]);
        let (code, outputs, _, _) = actions_call(tmp.path(), &args);
        assert_eq!(code, 1);
        let results = output(&outputs, "results");
        let env = [("RESULTS", results.as_str()), ("GITHUB_JOB", "nightly")];
        let (code, log, step_outputs) = run_step(tmp.path(), "reports", &path, &env);
        assert_eq!(code, 0, "{log}");
        let parsed = parse_github_output(&step_outputs);
        let files: Vec<String> = parsed
            .iter()
            .find(|(k, _)| k == "files")
            .map(|(_, v)| v.lines().map(str::to_owned).collect())
            .unwrap_or_default();
        assert_eq!(files.len(), pages, "{flags:?}: {step_outputs}");
        for f in &files {
            assert!(f.ends_with("/report.html") && Path::new(f).is_file(), "{f}");
        }
        if pages == 0 {
            continue;
        }
        let name = output(&parsed, "name");
        assert!(name.starts_with("cn-run-report-nightly-"), "{name}");
        let url = "https://github.com/o/r/actions/runs/1/artifacts/2";
        let summary = tmp.path().join("linked_summary");
        let summary_path = summary.to_str().unwrap();
        let env = [("URL", url), ("GITHUB_STEP_SUMMARY", summary_path)];
        let step = "Link the HTML reports from the step summary";
        let (code, log, _) = run_step(tmp.path(), step, &path, &env);
        assert_eq!(code, 0, "{log}");
        let linked = std::fs::read_to_string(&summary).unwrap();
        assert!(linked.contains(&format!("]({url})")), "{linked}");
    }
}
