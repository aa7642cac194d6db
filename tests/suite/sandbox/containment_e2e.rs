//! Contained by default, shown by effects (issue 16): a scripted model, under the default
//! containment (no `tools.bash` settings), tries to write outside the workspace through
//! files it wrote (build files, test files), through programs started by options and
//! environment variables, and through git directories it made; a check runs what it
//! planted. Every payload proves it ran (a `ran-TAG` file in the workspace) and leaves no
//! file outside it — neither under the host's /tmp nor elsewhere. Each class has a control
//! with `sandbox: off` showing the same payloads do escape there, so the test can fail.
//! Tests that need namespaces print SKIPPED and return where bubblewrap cannot make them.

use serde_json::{Value, json};

use super::containment_scene::{Scene, bash, namespaces_available, write};

/// The build-file cases: (tag, files the model writes, the command it runs).
fn build_file_cases(s: &Scene) -> Vec<(String, Vec<Value>, String)> {
    let p = |t: &str| s.payload(t);
    let pkg = |script: &str, cmd: &str, t: &str| {
        json!({"name": "x", "version": "1.0.0", "scripts": {script: p(t), cmd: "true"}}).to_string()
    };
    let build_rs = format!(
        "fn main() {{ std::process::Command::new(\"sh\").arg(\"-c\").arg({:?}).status().unwrap(); }}\n",
        p("cargo")
    );
    let cargo_toml = "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let unit = format!(
        "import os, unittest\nclass T(unittest.TestCase):\n    def test_x(self):\n        os.system({:?})\n",
        p("unittest")
    );
    vec![
        (
            "make".into(),
            vec![write("Makefile", &format!("all:\n\t{}\n", p("make")))],
            "make".into(),
        ),
        (
            "makeshell".into(),
            vec![write(
                "mk/Makefile",
                &format!("X := $(shell {})\nall:\n\t@true\n", p("makeshell")),
            )],
            "make -n -C mk".into(),
        ),
        (
            "npmtest".into(),
            vec![write("npm1/package.json", &pkg("test", "build", "npmtest"))],
            "cd npm1 && npm test --silent".into(),
        ),
        (
            "npmpre".into(),
            vec![write(
                "npm2/package.json",
                &pkg("prebuild", "build", "npmpre"),
            )],
            "cd npm2 && npm run build --silent".into(),
        ),
        (
            "cargo".into(),
            vec![
                write("crate/Cargo.toml", cargo_toml),
                write("crate/build.rs", &build_rs),
                write("crate/src/main.rs", "fn main() {}\n"),
            ],
            "cd crate && cargo build --offline --quiet".into(),
        ),
        (
            "unittest".into(),
            vec![write("py/test_x.py", &unit)],
            "cd py && python3 -m unittest -q".into(),
        ),
    ]
}

fn build_file_calls(s: &Scene) -> (Vec<Value>, Vec<String>) {
    let mut calls = Vec::new();
    let mut tags = Vec::new();
    for (tag, files, command) in build_file_cases(s) {
        calls.extend(files);
        calls.push(bash(&command));
        tags.push(tag);
    }
    (calls, tags)
}

#[test]
fn model_written_build_files_run_but_cannot_write_outside_the_workspace() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let (calls, tags) = build_file_calls(&s);
    let r = s.run(&calls, "");
    assert_eq!(r.code, 0, "{r:#?}");
    s.assert_contained(&r);
    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
    s.assert_ran_but_wrote_nothing_outside(&tags, &r);
}

#[test]
fn control_without_containment_the_same_build_files_do_write_outside() {
    let s = Scene::new();
    let (calls, _) = build_file_calls(&s);
    let r = s.run(&calls, "tools: {bash: {sandbox: off}}\n");
    assert!(s.outside.join("make").exists(), "{}", s.transcript(&r));
    assert!(s.host_tmp.join("npmtest").exists(), "{}", s.transcript(&r));
    let explain = r.stderr.contains("sandbox: off");
    assert!(explain, "sandbox: off is warned about: {}", r.stderr);
}

/// Programs started by options and variables: (tag, command). `pay-TAG.sh` holds the
/// payload.
fn option_cases() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "extdiff",
            "git init -q r1 && cd r1 && echo a > f && git add f && echo b > f && GIT_EXTERNAL_DIFF='sh ../pay-extdiff.sh' git diff",
        ),
        (
            "diffext",
            "git init -q r2 && cd r2 && echo a > f && git add f && echo b > f && git -c diff.external='sh ../pay-diffext.sh' diff",
        ),
        (
            "sshcmd",
            "GIT_SSH_COMMAND=\"sh $PWD/pay-sshcmd.sh\" git ls-remote ssh://example.invalid/x.git; true",
        ),
        ("alias", "git -c alias.st=\"!sh $PWD/pay-alias.sh\" st"),
        (
            "findexec",
            "find . -maxdepth 0 -exec sh pay-findexec.sh \\;",
        ),
        ("awk", "awk 'BEGIN { system(\"sh pay-awk.sh\") }'"),
        ("sede", "echo x | sed '1e sh pay-sede.sh'"),
        ("xargs", "echo pay-xargs.sh | xargs sh"),
        (
            "tarcheck",
            "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='sh pay-tarcheck.sh' pay-tarcheck.sh",
        ),
        (
            "ccmake",
            "mkdir -p cc && cd cc && echo 'int main(){return 0;}' > m.c && make CC='sh ../pay-ccmake.sh' m",
        ),
    ]
}

/// Writes each case's payload, runs its command in one contained run, and shows that every
/// payload ran (its marker in the workspace) while none wrote outside.
fn assert_payloads_stay_inside(cases: &[(&str, &str)]) {
    let s = Scene::new();
    let mut calls = Vec::new();
    for (tag, command) in cases {
        calls.push(write(&format!("pay-{tag}.sh"), &s.payload(tag)));
        calls.push(bash(command));
    }
    let r = s.run(&calls, "");
    s.assert_contained(&r);
    let tags: Vec<&str> = cases.iter().map(|(t, _)| *t).collect();
    s.assert_ran_but_wrote_nothing_outside(&tags, &r);
}

#[test]
fn programs_started_by_options_and_variables_stay_inside() {
    if !namespaces_available() {
        return;
    }
    assert_payloads_stay_inside(&option_cases());
}

/// Git directories the model made, with programs in their configuration: (tag, command).
fn git_dir_cases() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "fsmon",
            "git init -q g1 && git -C g1 config core.fsmonitor 'sh ../pay-fsmon.sh' && git -C g1 status",
        ),
        (
            "gitdir",
            "git init -q --bare g2.git && git --git-dir=g2.git config core.fsmonitor 'sh pay-gitdir.sh' && GIT_DIR=g2.git GIT_WORK_TREE=. git status",
        ),
        (
            "hook",
            "git init -q g3 && printf '#!/bin/sh\\nsh ../pay-hook.sh\\n' > g3/.git/hooks/pre-commit && chmod +x g3/.git/hooks/pre-commit && git -C g3 -c user.name=a -c user.email=a@b commit -q --allow-empty -m x",
        ),
        (
            "hookspath",
            "git init -q g4 && mkdir -p g4/h && printf '#!/bin/sh\\nsh ../pay-hookspath.sh\\n' > g4/h/post-checkout && chmod +x g4/h/post-checkout && git -C g4 -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git -C g4 -c core.hooksPath=h checkout -q -b other",
        ),
        (
            "filter",
            "git init -q g5 && cd g5 && echo '* filter=evil' > .gitattributes && git config filter.evil.clean 'sh ../pay-filter.sh; cat' && echo a > f && git add f",
        ),
        (
            "textconv",
            "git init -q g6 && cd g6 && echo a > f && git add f && echo '* diff=evil' > .gitattributes && git config diff.evil.textconv 'sh ../pay-textconv.sh; cat' && echo b > f && git diff",
        ),
    ]
}

#[test]
fn git_directories_the_model_made_cannot_run_programs_outside() {
    if !namespaces_available() {
        return;
    }
    assert_payloads_stay_inside(&git_dir_cases());
}

/// What the model plants for the checks: (tag, planting command, the check's command).
fn check_cases() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        (
            "cfsmon",
            "git config core.fsmonitor 'sh pay-cfsmon.sh'",
            "git status",
        ),
        (
            "cdiff",
            "git config diff.external 'sh pay-cdiff.sh'",
            "echo changed >> seed.txt && git diff; git checkout -q seed.txt",
        ),
        (
            "chook",
            "printf '#!/bin/sh\\nsh pay-chook.sh\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
            "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m check",
        ),
        (
            "cmake",
            "printf 'all:\\n\\tsh pay-cmake.sh\\n' > Makefile",
            "make",
        ),
        (
            "cnpm",
            "printf '{\"name\":\"x\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"sh pay-cnpm.sh\"}}' > package.json",
            "npm test --silent",
        ),
        (
            "cfilter",
            "echo '*.txt filter=evil' > .gitattributes && git config filter.evil.clean 'sh pay-cfilter.sh; cat'",
            "touch seed.txt && git add -A && git status --short",
        ),
    ]
}

#[test]
fn checks_run_what_the_model_planted_inside_the_sandbox() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    crate::support::runner::write_files(&s.ws, &[("seed.txt", "seed\n")]);
    crate::support::runner::git_init(&s.ws);
    let mut calls = Vec::new();
    let mut checks = Vec::new();
    for (tag, plant, check) in check_cases() {
        calls.push(write(&format!("pay-{tag}.sh"), &s.payload(tag)));
        calls.push(bash(plant));
        checks.push(json!({"name": tag, "run": check}));
    }
    let r = s.run(&calls, &format!("checks: {}\n", Value::Array(checks)));
    s.assert_contained(&r);
    // `.git` is read-only to commands (containment_git_e2e): what would be planted there
    // never lands, so the check has nothing of it to run.
    let in_git = ["cfsmon", "cdiff", "chook", "cfilter"];
    let tags: Vec<&str> = check_cases()
        .iter()
        .map(|(t, _, _)| *t)
        .filter(|t| !in_git.contains(t))
        .collect();
    s.assert_ran_but_wrote_nothing_outside(&tags, &r);
    for tag in in_git {
        assert!(
            !s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} was planted"
        );
    }
}

/// Containment the run requires and cannot have is the environment: exit 6 (the README's
/// table, through `Status::exit_code`), with result.json and a session, and nothing run.
#[test]
fn require_sandbox_refuses_to_run_without_the_whole_profile() {
    let cases: [(&str, &[&str]); 3] = [
        ("tools: {bash: {sandbox: off}}\n", &["--require-sandbox"]),
        (
            "tools: {bash: {sandbox: off, require_sandbox: true}}\n",
            &[],
        ),
        (
            "tools: {bash: {sandbox: off, require_sandbox: true}}\n",
            &["--require-sandbox"],
        ),
    ];
    for (extra, args) in cases {
        let s = Scene::new();
        let calls = [bash(&s.payload("refused"))];
        let r = s.run_with(&calls, extra, args);
        assert_eq!(r.code, 6, "{extra} {args:?}: {r:#?}");
        assert!(
            !s.ws.join("ran-refused").exists(),
            "the command ran: {}",
            s.transcript(&r)
        );
        s.assert_nothing_outside(&r);
        let result = r.result();
        assert_eq!(result["status"], "internal_error", "{result}");
        assert!(
            result["reason"]
                .as_str()
                .unwrap_or("")
                .contains("require_sandbox"),
            "{result}"
        );
        let missing = result["sandbox"]["missing"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(missing.iter().any(|m| m == "pid-namespace"), "{result}");
        let out = r.out.as_ref().unwrap();
        assert!(out.join("session.jsonl").is_file(), "{extra}: no session");
    }
}

#[test]
fn sandbox_off_is_spelled_out_by_explain() {
    let s = Scene::new();
    // `explain` of the job the scene wrote for its last run.
    let explain = |s: &Scene| {
        let out = crate::support::runner::cn_run(&s.ws)
            .arg("explain")
            .arg(s.job_path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let _ = s.run(&[], "tools: {bash: {sandbox: off}}\n");
    let text = explain(&s);
    assert!(
        text.contains("sandbox: OFF") && text.contains("uncontained"),
        "{text}"
    );
    let _ = s.run(&[], "");
    let text = explain(&s);
    assert!(
        text.contains("sandbox: workspace-write (network: none)"),
        "{text}"
    );
}

#[test]
fn a_folder_the_job_names_is_writable_and_only_that_one() {
    if !namespaces_available() {
        return;
    }
    let s = Scene::new();
    let cache = s.home.join(".cache");
    std::fs::create_dir_all(&cache).unwrap();
    let calls = [bash(&format!(
        "echo c > ~/.cache/built; touch ran-cache; {}",
        s.payload("other")
    ))];
    let r = s.run(&calls, "tools: {bash: {writable: ['~/.cache']}}\n");
    s.assert_contained(&r);
    assert!(cache.join("built").exists(), "{}", s.transcript(&r));
    s.assert_ran_but_wrote_nothing_outside(&["other"], &r);
}
