//! The run store: the run folder copied into S3 (moto's server on loopback, from PyPI,
//! pinned by .ci/install-fleet-tools) or a local path while the run goes and at its end,
//! masked; a run killed with SIGKILL leaves everything up to its last event there and
//! resumes from it in another checkout; an unreachable store is a warning, never a lost
//! local copy; `cn-run runs --store` lists the runs with their outcome and cost.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::fleet_tools::{Azurite, Moto, SECRET_KEY, StoreServer, all_bytes, tool};
use crate::support::ports::Port;
use crate::support::procs;
use crate::support::runner::{cn_run, git, git_init, run, run_folder, write_files};

const JOB: &str = "version: 1\nname: stored\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: count\npermissions: {allow: ['Bash(echo *)']}\n";
const SCRIPT: &str = "turns:
  - tool_calls: [{name: Bash, id: a, arguments: {command: 'echo one >> log.txt'}}]
  - tool_calls: [{name: Bash, id: b, arguments: {command: 'echo two >> log.txt; sleep 29'}}]
  - tool_calls: [{name: Bash, id: c, arguments: {command: 'echo three >> log.txt'}}]
  - text: counted to three
";

/// A repository with the job committed.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    write_files(dir, &[("job.yaml", JOB), ("s.yaml", SCRIPT)]);
    git_init(dir);
}

fn with_env(mut cmd: Command, env: &[(String, String)]) -> Command {
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Polls `check` every half second (it starts a process) until it holds or two minutes pass.
fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let give_up = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < give_up {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

fn runs(dir: &Path, store: &str, env: &[(String, String)]) -> Vec<Value> {
    let mut cmd = with_env(cn_run(dir), env);
    cmd.args(["runs", "--store", store, "--json"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    serde_json::from_str::<Value>(&r.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// Runs the job in `a` with the store until its second call sleeps and the store holds
/// every event written so far, then kills it with SIGKILL; its run id.
fn kill_mid_way(server: &dyn StoreServer, a: &Path, store: &str) -> String {
    let mut cmd = with_env(cn_run(a), &server.env());
    cmd.args(["job.yaml", "--store", store])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let log = a.join("log.txt");
    let started =
        procs::wait_for(|| std::fs::read_to_string(&log).is_ok_and(|l| l.contains("two")));
    assert!(started, "the run never reached its second call");
    let folder = run_folder(a);
    let id = folder.file_name().unwrap().to_string_lossy().into_owned();
    let key = format!("fleet/{id}/events.jsonl");
    // While the call sleeps, the store catches up with every event written so far.
    let caught_up = eventually(|| {
        let local = std::fs::read(folder.join("events.jsonl")).unwrap_or_default();
        local.ends_with(b"\n")
            && String::from_utf8_lossy(&local).contains("\"call_id\":\"b\"")
            && server.keys(&key).len() == 1
            && server.get(&key) == local
    });
    assert!(caught_up, "the store never held the run's events");
    child.kill().unwrap(); // SIGKILL: nothing of cn-run's runs after it
    child.wait().unwrap();
    procs::kill_in_dir(a);
    id
}

/// A run killed mid-way is in the store (`server`) up to its last event, is listed as
/// unfinished, and resumes from the store in a fresh clone, writing to the same store.
fn killed_and_resumed_through(server: &dyn StoreServer) {
    let env = server.env();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    repo(&a);
    let store = server.url("fleet");
    let id = kill_mid_way(server, &a, &store);
    let folder = a.join(".cn-run").join(&id);
    let key = |name: &str| format!("fleet/{id}/{name}");

    // Everything up to the last event is in the store: events and session whole, the diff so far.
    let local_events = std::fs::read(folder.join("events.jsonl")).unwrap();
    assert_eq!(server.get(&key("events.jsonl")), local_events);
    assert_eq!(
        server.get(&key("session.jsonl")),
        std::fs::read(folder.join("session.jsonl")).unwrap()
    );
    let diff = String::from_utf8(server.get(&key("diff.patch"))).unwrap();
    assert!(diff.contains("+one"), "{diff}");
    assert!(
        server.keys(&key("result.json")).is_empty(),
        "killed: no result yet"
    );
    let listed = runs(tmp.path(), &store, &env);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["run_id"], id.as_str());
    assert_eq!(listed[0]["finished"], false);
    assert_eq!(listed[0]["status"], "internal_error");

    // Another checkout of the same commit, clean: the resume downloads the run, writes its
    // diff into the checkout, and goes on from the call that was killed.
    git(
        tmp.path(),
        &["clone", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    let mut cmd = with_env(cn_run(&b), &env);
    cmd.args(["--resume", &format!("{store}/{id}"), "-C"])
        .arg(&b)
        .args(["--format", "json"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let result: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(result["run_id"], id.as_str());
    assert_eq!(result["result"], "counted to three");
    assert!(r.stderr.contains("re-rooted"), "{}", r.stderr);
    // The killed call is not run again; the first call's change came with the diff.
    assert_eq!(
        std::fs::read_to_string(b.join("log.txt")).unwrap(),
        "one\nthree\n"
    );
    assert_eq!(
        std::fs::read_to_string(a.join("log.txt")).unwrap(),
        "one\ntwo\n",
        "the first checkout is untouched"
    );
    let moved = b.join(".cn-run").join(&id);
    let patch = std::fs::read_to_string(moved.join("diff.patch")).unwrap();
    assert!(
        patch.contains("+one") && patch.contains("+three"),
        "the whole run's diff: {patch}"
    );
    // The resumed run went on writing to the same store, whole at its end.
    assert_eq!(
        server.get(&key("events.jsonl")),
        std::fs::read(moved.join("events.jsonl")).unwrap()
    );
    assert_eq!(server.keys(&key("result.json")).len(), 1);
    let listed = runs(tmp.path(), &store, &env);
    assert_eq!(listed[0]["finished"], true);
    assert_eq!(listed[0]["status"], "success");
    assert_eq!(listed[0]["exit_code"], 0);
    // The store's credentials are in nothing the store holds.
    for k in server.keys("fleet/") {
        let body = String::from_utf8_lossy(&server.get(&k)).into_owned();
        for (name, value) in &env {
            let secret = name.contains("SECRET") || name.contains("KEY");
            assert!(!(secret && body.contains(value.as_str())), "{name} in {k}");
        }
    }
}

#[test]
fn a_killed_run_is_in_the_store_to_its_last_event_and_resumes_from_it_in_another_checkout() {
    let Some(moto) = Moto::start("runs") else {
        return;
    };
    killed_and_resumed_through(&moto);
}

#[test]
fn a_killed_run_in_azure_blob_storage_resumes_from_it_in_another_checkout() {
    let Some(azurite) = Azurite::start("runs") else {
        return;
    };
    killed_and_resumed_through(&azurite);
}

#[test]
fn a_store_that_comes_back_mid_run_gets_the_whole_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    repo(&ws);
    // The call waits until the test says go (the store is up by then).
    let script = "turns:\n  - tool_calls: [{name: Bash, id: a, arguments: {command: 'sh wait.sh'}}]\n  - text: done\n";
    let wait = "echo one >> log.txt\ni=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done\n";
    let job = JOB.replace("'Bash(echo *)'", "'Bash(sh wait.sh)'");
    write_files(
        &ws,
        &[("s.yaml", script), ("wait.sh", wait), ("job.yaml", &job)],
    );
    // Held (bound, not listening: refused) until moto takes it over.
    let reserved = Port::reserve();
    let port = reserved.port();
    if tool("moto_server").is_none() {
        return;
    }
    let out = tmp.path().join("out");
    let env = [
        ("AWS_ACCESS_KEY_ID".to_owned(), "k".to_owned()),
        ("AWS_SECRET_ACCESS_KEY".to_owned(), SECRET_KEY.to_owned()),
        ("AWS_DEFAULT_REGION".to_owned(), "us-east-1".to_owned()),
        (
            "AWS_ENDPOINT_URL".to_owned(),
            format!("http://127.0.0.1:{port}"),
        ),
    ];
    let mut cmd = with_env(cn_run(&ws), &env);
    cmd.args(["job.yaml", "--store", "s3://late/runs", "--out"])
        .arg(&out)
        .args(["--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    // The store is down while the run starts: a warning, and the run goes on.
    let warned = eventually(|| {
        std::fs::read_to_string(out.join("events.jsonl")).is_ok_and(|e| e.contains("retrying"))
    });
    assert!(warned, "no warning of the store being down");
    let moto = Moto::start_on(reserved, "late").expect("moto_server is installed");
    let id = run_folder_id(&out);
    let live = eventually(|| moto.keys(&format!("runs/{id}/events.jsonl")).len() == 1);
    assert!(
        live,
        "the live copies never reached the store once it was up"
    );
    std::fs::write(ws.join("go"), "").unwrap();
    let done = child.wait_with_output().unwrap();
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let events = std::fs::read(out.join("events.jsonl")).unwrap();
    assert!(String::from_utf8_lossy(&events).contains("reachable again"));
    // Whole at the end: every file of the folder, events byte for byte.
    assert_eq!(moto.get(&format!("runs/{id}/events.jsonl")), events);
    for name in ["result.json", "session.jsonl", "junit.xml", "diff.patch"] {
        assert_eq!(moto.keys(&format!("runs/{id}/{name}")).len(), 1, "{name}");
    }
}

/// The run id of the run writing into `out` (from its first event).
fn run_folder_id(out: &Path) -> String {
    let events = std::fs::read_to_string(out.join("events.jsonl")).unwrap();
    let first: Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
    first["run_id"].as_str().unwrap().to_owned()
}

#[test]
fn a_path_store_holds_the_whole_folder_masked_and_runs_lists_it_with_its_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let planted = "planted-store-secret-93f0";
    let script = format!(
        "turns:\n  - tool_calls: [{{name: Bash, id: a, arguments: {{command: 'echo {planted} > note.txt'}}}}]\n  - text: wrote the note\n"
    );
    let job = "version: 1\nname: masked\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: write\nredact: [PLANTED]\npermissions: {allow: ['Bash(echo *)']}\n";
    write_files(&ws, &[("job.yaml", job), ("s.yaml", &script)]);
    git_init(&ws);
    let store = tmp.path().join("store");
    let mut cmd = cn_run(&ws);
    cmd.env("PLANTED", planted)
        .args(["job.yaml", "--store"])
        .arg(&store)
        .args(["--out"])
        .arg(tmp.path().join("out"));
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let id = r.result()["run_id"].as_str().unwrap().to_owned();
    let kept = store.join(&id);
    for name in [
        "result.json",
        "events.jsonl",
        "session.jsonl",
        "junit.xml",
        "origin.json",
    ] {
        assert!(kept.join(name).is_file(), "{name} not in the store");
    }
    assert!(
        !kept.join("git-start.json").exists(),
        "this machine's .git record stays here"
    );
    // diff.patch stays exact on disk (it must apply); masked it would apply wrongly
    // elsewhere, so it is not in the store, and the run says so.
    let local_diff = std::fs::read_to_string(tmp.path().join("out/diff.patch")).unwrap();
    assert!(local_diff.contains(planted));
    assert!(!kept.join("diff.patch").exists());
    assert!(
        r.stderr.contains("diff.patch holds a secret"),
        "{}",
        r.stderr
    );
    for (path, body) in all_bytes(&store) {
        assert!(
            !String::from_utf8_lossy(&body).contains(planted),
            "{}",
            path.display()
        );
    }
    let listed = runs(tmp.path(), store.to_str().unwrap(), &[]);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["status"], "success");
    assert_eq!(listed[0]["job"], "masked");
    assert_eq!(listed[0]["num_turns"], 2);
    assert_eq!(listed[0]["total_cost_usd"], r.result()["total_cost_usd"]);
    // The control: without --store nothing goes there.
    let mut cmd = cn_run(&ws);
    cmd.env("PLANTED", planted).arg("job.yaml");
    assert_eq!(run(cmd, None).code, 0);
    assert_eq!(std::fs::read_dir(&store).unwrap().count(), 1);
}

#[test]
fn an_unreachable_store_is_a_warning_and_the_local_folder_is_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    repo(&ws);
    // A call that lasts a few seconds: the live copies try (and fail) meanwhile.
    let script = "turns:\n  - tool_calls: [{name: Bash, id: a, arguments: {command: 'echo one >> log.txt; sleep 3'}}]\n  - text: done\n";
    write_files(&ws, &[("s.yaml", script)]);
    // A loopback port nothing listens on, held for the whole run.
    let reserved = Port::reserve();
    let port = reserved.port();
    let out = tmp.path().join("out");
    let mut cmd = cn_run(&ws);
    cmd.env("AWS_ACCESS_KEY_ID", "k")
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .args(["job.yaml", "--store", "s3://nowhere/runs", "--out"])
        .arg(&out);
    let r = run(cmd, Some(&out));
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(r.result()["status"], "success");
    let warned = r.events_of("warning").iter().any(|w| {
        let m = w["message"].as_str().unwrap_or_default();
        m.contains("s3://nowhere/runs") && m.contains("retrying")
    });
    assert!(warned, "{:#?}", r.events_of("warning"));
    assert!(r.stderr.contains("whole locally"), "{}", r.stderr);
    for name in ["result.json", "events.jsonl", "session.jsonl", "junit.xml"] {
        assert!(out.join(name).is_file(), "{name}");
    }
    assert!(!r.stderr.contains(SECRET_KEY));
}

#[test]
fn a_store_url_with_a_credential_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    repo(tmp.path());
    for url in [
        "s3://AKIAEXAMPLE:hunter2@bucket/runs",
        "s3://bucket/runs?secret=hunter2",
    ] {
        let mut cmd = cn_run(tmp.path());
        cmd.args(["job.yaml", "--store", url]);
        let r = run(cmd, None);
        assert_eq!(r.code, 2, "{url}: {r:#?}");
        assert!(r.stderr.contains("credential"), "{}", r.stderr);
        assert!(
            !tmp.path().join(".cn-run").exists()
                || std::fs::read_dir(tmp.path().join(".cn-run"))
                    .unwrap()
                    .count()
                    <= 1
        );
    }
    // In the job file: a located error.
    let job = format!("{JOB}store: 's3://k:hunter2@bucket/x'\n");
    write_files(tmp.path(), &[("bad.yaml", &job)]);
    let mut cmd = cn_run(tmp.path());
    cmd.args(["validate", "bad.yaml"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("store") && !r.stderr.contains("hunter2"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_file_url_store_named_in_the_job_is_written_listed_and_resumed_from() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let store = format!("file://{}/kept/runs/", tmp.path().display());
    std::fs::create_dir_all(&a).unwrap();
    let job = format!("{JOB}store: '{store}'\nlimits: {{max_turns: 1}}\n");
    let script = "turns:\n  - tool_calls: [{name: Bash, id: a, arguments: {command: 'echo one >> log.txt'}}]\n  - text: finished later\n";
    write_files(&a, &[("job.yaml", &job), ("s.yaml", script)]);
    git_init(&a);
    // The first run stops at its turn limit (exit 4); its folder is in the store.
    let mut cmd = cn_run(&a);
    cmd.args(["job.yaml", "--format", "json"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 4, "{r:#?}");
    let id = serde_json::from_str::<Value>(&r.stdout).unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let kept = tmp.path().join("kept/runs").join(&id);
    assert!(kept.join("result.json").is_file() && kept.join("diff.patch").is_file());
    let listed = runs(tmp.path(), &store, &[]);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["status"], "limit_reached");
    assert_eq!(listed[0]["exit_code"], 4);
    assert_eq!(listed[0]["finished"], true);
    // Resumed from the store's URL (a trailing slash too) in a clean clone, with more turns.
    git(
        tmp.path(),
        &["clone", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    let mut cmd = cn_run(&b);
    cmd.args([
        "--resume",
        &format!("{store}{id}/"),
        "-C",
        b.to_str().unwrap(),
        "--max-turns",
        "5",
        "--format",
        "json",
    ]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap()["result"],
        "finished later"
    );
    assert_eq!(std::fs::read_to_string(b.join("log.txt")).unwrap(), "one\n");
    // The resumed run wrote on to the store the job names.
    let listed = runs(tmp.path(), &store, &[]);
    assert_eq!(listed[0]["status"], "success", "{listed:?}");
}
