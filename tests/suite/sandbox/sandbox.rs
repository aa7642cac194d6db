//! The Bash sandbox (`tools.bash.sandbox`, `tools.bash.network`): through the real Bash tool
//! and the real cn-run binary as launcher, a write outside the workspace and a TCP
//! connection fail inside the sandbox and succeed outside it; a write inside the workspace
//! succeeds under `workspace-write` and fails under `read-only`; background jobs are
//! sandboxed too. Where the kernel cannot enforce a part (no Landlock, no namespaces) that
//! part is skipped with the probe's reason printed.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cn_run::sandbox::{self, Enforcement, Protection, SandboxMode, SandboxPolicy};
use cn_run::tools::{
    Bash, CheckBackgroundJob, Tool, ToolContext, ToolError, ToolLimits, ToolShared,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A workspace and an "outside" folder, both under the target dir — not under /tmp, which
/// the sandbox leaves writable on purpose.
struct Dirs {
    _base: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

/// A temporary folder outside every folder the sandbox leaves writable (/tmp, /var/tmp,
/// /dev/shm, $TMPDIR): in the target dir, or in $HOME when the checkout itself is under /tmp.
fn outside_temp_dirs() -> tempfile::TempDir {
    let writable = [
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
        std::env::temp_dir(),
    ];
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        std::env::var_os("HOME").map(PathBuf::from),
    ];
    let base = candidates
        .into_iter()
        .flatten()
        .filter_map(|p| p.canonicalize().ok())
        .find(|p| !writable.iter().any(|w| p.starts_with(w)))
        .expect("the sandbox tests need a folder outside /tmp: the target dir or $HOME");
    tempfile::tempdir_in(base).unwrap()
}

fn dirs() -> Dirs {
    let base = outside_temp_dirs();
    let ws = base.path().join("ws");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    Dirs {
        ws: ws.canonicalize().unwrap(),
        outside: outside.canonicalize().unwrap(),
        _base: base,
    }
}

/// The environment the sandbox tests give a command: `PATH` only.
pub(super) fn env() -> Vec<(String, String)> {
    vec![("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())]
}

fn policy(ws: &Path, mode: SandboxMode, network: bool) -> SandboxPolicy {
    SandboxPolicy::new(mode, network, ws, &env()).with_launcher(env!("CARGO_BIN_EXE_cn-run"))
}

/// A Bash tool context in `ws` under `policy`, with [`env`].
pub(super) fn ctx(ws: &Path, policy: SandboxPolicy) -> ToolContext {
    let shared = ToolShared::new(
        ws.to_path_buf(),
        env(),
        CancellationToken::new(),
        ToolLimits::default(),
        ws.join(".artifacts"),
    )
    .with_sandbox(policy);
    ToolContext {
        shared: Arc::new(shared),
        parallel_calls: 1,
        call_id: "call-1".into(),
        grant: cn_run::tools::Grant::default(),
    }
}

/// Run `command` with the Bash tool: `Ok(output)` on exit 0, `Err(output)` otherwise.
async fn bash(ctx: &ToolContext, command: &str) -> Result<String, String> {
    match Bash.run(json!({ "command": command }), ctx).await {
        Ok(out) => Ok(out.content),
        Err(ToolError::RespondToModel(text)) => Err(text),
        Err(ToolError::Fatal(text)) => panic!("fatal: {text}"),
    }
}

/// A write refused by Landlock or by bubblewrap's read-only binds.
fn refused(err: &str) -> bool {
    err.contains("Permission denied") || err.contains("Read-only file system")
}

/// Whether the kernel enforces the filesystem part; prints why not.
fn fs_enforced(probe: &sandbox::Probe) -> bool {
    let ok = probe
        .enforced
        .contains(&Protection::ReadOnlyOutsideWorkspace);
    if !ok {
        eprintln!("SKIPPED (filesystem sandbox): {}", probe.notes.join("; "));
    }
    ok
}

#[tokio::test]
async fn writes_outside_the_workspace_fail_only_inside_the_sandbox() {
    let d = dirs();
    let write = |dir: &Path, name: &str| format!("echo data > '{}'", dir.join(name).display());

    let off = ctx(&d.ws, policy(&d.ws, SandboxMode::Off, true));
    bash(&off, &write(&d.outside, "off")).await.unwrap();
    assert!(d.outside.join("off").exists());

    let p = policy(&d.ws, SandboxMode::WorkspaceWrite, true);
    let probe = sandbox::probe(&p);
    println!("probe on this kernel: {probe:?}");
    if !fs_enforced(&probe) {
        return;
    }
    let ww = ctx(&d.ws, p);
    let err = bash(&ww, &write(&d.outside, "ww")).await.unwrap_err();
    assert!(refused(&err), "{err}");
    assert!(!d.outside.join("ww").exists());
    // Inside the workspace, and in the temporary folder, writing works.
    bash(
        &ww,
        &format!("{} && mkdir sub && mv ww sub/", write(&d.ws, "ww")),
    )
    .await
    .unwrap();
    assert!(d.ws.join("sub/ww").exists());
    let tmp = tempfile::NamedTempFile::new().unwrap();
    bash(&ww, &format!("echo t > '{}'", tmp.path().display()))
        .await
        .unwrap();
    // Reading outside still works; the sandbox is about writes.
    let out = bash(&ww, &format!("cat '{}'", d.outside.join("off").display()))
        .await
        .unwrap();
    assert_eq!(out.trim(), "data");
    // Nor can a child escape by deleting or renaming what is outside.
    let rm = format!("rm -f '{}'", d.outside.join("off").display());
    assert!(bash(&ww, &format!("bash -c \"{rm}\"")).await.is_err());
    assert!(d.outside.join("off").exists());
}

#[tokio::test]
async fn read_only_refuses_writes_even_in_the_workspace() {
    let d = dirs();
    let p = policy(&d.ws, SandboxMode::ReadOnly, true);
    if !fs_enforced(&sandbox::probe(&p)) {
        return;
    }
    let ro = ctx(&d.ws, p);
    let err = bash(&ro, "echo x > inside").await.unwrap_err();
    assert!(refused(&err), "{err}");
    assert!(!d.ws.join("inside").exists());
    // The host's /tmp is not written either (bubblewrap gives a private one; the fallback
    // launcher refuses the write).
    let tmp = tempfile::NamedTempFile::new().unwrap();
    let _ = bash(&ro, &format!("echo t > '{}'", tmp.path().display())).await;
    assert_eq!(std::fs::read_to_string(tmp.path()).unwrap(), "");
    // Output to /dev/null and the tool's own pipes still works.
    let out = bash(&ro, "echo hidden > /dev/null; echo shown > /dev/stdout; ls")
        .await
        .unwrap();
    assert!(out.contains("shown") && !out.contains("hidden"), "{out}");
}

#[tokio::test]
async fn network_false_blocks_a_connection_that_works_otherwise() {
    let d = dirs();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let open = ctx(&d.ws, policy(&d.ws, SandboxMode::WorkspaceWrite, true));
    let out = bash(&open, &connect).await.unwrap();
    assert!(out.contains("connected"), "{out}");

    let p = policy(&d.ws, SandboxMode::Off, false);
    let probe = sandbox::probe(&p);
    println!("probe on this kernel: {probe:?}");
    if probe.network == Enforcement::None {
        eprintln!("SKIPPED (network sandbox): {}", probe.notes.join("; "));
        return;
    }
    let closed = ctx(&d.ws, p);
    let err = bash(&closed, &connect).await.unwrap_err();
    assert!(!err.contains("connected"), "{err}");
    // The network namespace does not change who the command runs as.
    let uid = bash(&closed, "id -u").await.unwrap();
    assert_eq!(uid.trim(), own_uid().to_string());
}

/// The run's network namespace, which cn-run makes itself (`unshare`, then its loopback
/// device up over rtnetlink), has a loopback of its own that is up: a server a command
/// starts on 127.0.0.1 or on ::1 is reachable inside, while a listener on the host's
/// loopback is not (the control: the namespace is not the host's).
#[tokio::test]
async fn commands_reach_their_own_loopback_servers_but_not_the_hosts() {
    let d = dirs();
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    let host_port = host.local_addr().unwrap().port();
    let (p, probe) = sandbox::establish(policy(&d.ws, SandboxMode::WorkspaceWrite, false));
    if p.run_net.is_none() {
        eprintln!("SKIPPED (no shared namespaces): {}", probe.notes.join("; "));
        return;
    }
    let c = ctx(&d.ws, p);
    let own = r#"python3 -c '
import socket
for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    server = socket.socket(family)
    server.bind((address, 0))
    server.listen()
    client = socket.create_connection(server.getsockname()[:2], timeout=5)
    accepted, _ = server.accept()
    client.sendall(b"ping")
    print(address, accepted.recv(4).decode())
'"#;
    let out = bash(&c, own).await.unwrap();
    assert!(
        out.contains("127.0.0.1 ping") && out.contains("::1 ping"),
        "{out}"
    );
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{host_port} && echo connected");
    let err = bash(&c, &connect).await.unwrap_err();
    assert!(!err.contains("connected"), "{err}");
}

fn own_uid() -> u32 {
    // The test's own uid, as `id -u` prints it.
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap()
}

async fn wait_job(ctx: &ToolContext, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = CheckBackgroundJob
            .run(json!({ "job_id": id }), ctx)
            .await
            .unwrap()
            .content;
        let job: Value = serde_json::from_str(&out).unwrap();
        if job["status"] != "running" || Instant::now() > deadline {
            return job;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn background_jobs_run_in_the_sandbox_and_are_still_killed() {
    let d = dirs();
    let p = policy(&d.ws, SandboxMode::WorkspaceWrite, true);
    if !fs_enforced(&sandbox::probe(&p)) {
        return;
    }
    let ctx = ctx(&d.ws, p);
    let start = |command: String| {
        let ctx = ctx.clone();
        async move {
            let args = json!({ "command": command, "run_in_background": true });
            let out = Bash.run(args, &ctx).await.unwrap().content;
            let id = out
                .split_whitespace()
                .find(|w| w.starts_with("bg-"))
                .unwrap();
            id.trim_end_matches([',', '.']).to_owned()
        }
    };
    let target = d.outside.join("bg");
    let id = start(format!("echo x > '{}'", target.display())).await;
    let job = wait_job(&ctx, &id).await;
    assert_eq!(job["status"], "failed", "{job}");
    assert!(!target.exists());

    let id = start("echo $$ > pid; sleep 300".to_owned()).await;
    let pid_file = d.ws.join("pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pid_file.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    wait_job_running(&ctx, &id).await;
    ctx.shared.background().kill_all().await;
    let job = wait_job(&ctx, &id).await;
    assert_eq!(job["status"], "killed", "{job}");
}

async fn wait_job_running(ctx: &ToolContext, id: &str) -> Value {
    let out = CheckBackgroundJob
        .run(json!({ "job_id": id }), ctx)
        .await
        .unwrap()
        .content;
    let job: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(job["status"], "running", "{job}");
    job
}

#[test]
fn the_job_file_sets_the_sandbox() {
    let text = "version: 1\nprompt: hi\nmodel: {provider: openai, name: m}\n\
                tools:\n  bash:\n    sandbox: workspace-write\n    network: false\n    require_sandbox: true\n";
    let job =
        cn_run::job::load_str(text, "t.yaml", None, &cn_run::job::LoadOptions::default()).unwrap();
    assert_eq!(job.tools.bash_sandbox, SandboxMode::WorkspaceWrite);
    assert_eq!(job.tools.bash_network, Some(false));
    assert!(job.tools.bash_require_sandbox);

    let plain = "version: 1\nprompt: hi\nmodel: {provider: openai, name: m}\n";
    let job =
        cn_run::job::load_str(plain, "t.yaml", None, &cn_run::job::LoadOptions::default()).unwrap();
    assert_eq!(job.tools.bash_sandbox, SandboxMode::WorkspaceWrite);
    assert_eq!(job.tools.bash_network, None);

    let hosts = "version: 1\nprompt: hi\nmodel: {provider: openai, name: m}\n\
                 tools:\n  bash:\n    network: [github.com, \"*.example.com\"]\n";
    let job =
        cn_run::job::load_str(hosts, "t.yaml", None, &cn_run::job::LoadOptions::default()).unwrap();
    assert_eq!(job.tools.bash_network, Some(false));
    let hosts: Vec<String> = job
        .tools
        .bash_network_hosts
        .iter()
        .map(|h| h.to_string())
        .collect();
    assert_eq!(hosts, ["github.com", "*.example.com"]);
    let bad = "version: 1\nprompt: hi\nmodel: {provider: openai, name: m}\n\
               tools:\n  bash:\n    network: [github.com, \"http://x.org/\"]\n";
    let err = cn_run::job::load_str(bad, "t.yaml", None, &cn_run::job::LoadOptions::default())
        .unwrap_err();
    let err = err.to_string();
    assert!(
        err.contains("tools.bash.network[1]") && err.contains("http://x.org/"),
        "{err}"
    );

    let bad = "version: 1\nprompt: hi\nmodel: {provider: openai, name: m}\n\
               tools:\n  bash:\n    sandbox: strict\n";
    let err = cn_run::job::load_str(bad, "t.yaml", None, &cn_run::job::LoadOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("sandbox"), "{err}");
}

/// Run the launcher where no namespace can be made: inside a user namespace that allows no
/// further ones, with every capability dropped (needs util-linux `unshare` and `setpriv`).
fn launcher_without_namespaces(args: &[&str]) -> Option<std::process::Output> {
    let script = format!(
        "echo 0 > /proc/sys/user/max_user_namespaces && \
         exec setpriv --bounding-set=-all --inh-caps=-all '{}' __sandbox \"$@\"",
        env!("CARGO_BIN_EXE_cn-run")
    );
    let out = std::process::Command::new("unshare")
        .args(["-U", "-r", "sh", "-c", &script, "sh"])
        .args(args)
        .output();
    match out {
        // The launcher ran: it printed its probe, or said why it refused.
        Ok(o) if o.stdout.starts_with(b"{") || o.stderr.starts_with(b"cn-run sandbox:") => Some(o),
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr);
            eprintln!(
                "SKIPPED (no unshare/setpriv or user namespaces): {}",
                why.trim()
            );
            None
        }
        Err(e) => {
            eprintln!("SKIPPED: cannot run unshare: {e}");
            None
        }
    }
}

#[test]
fn without_namespaces_tcp_is_blocked_by_landlock_and_require_refuses() {
    let Some(probe) = launcher_without_namespaces(&["--probe", "--no-network", "--"]) else {
        return;
    };
    let probe: Value = serde_json::from_slice(&probe.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&probe.stderr)));
    println!("probe without namespaces: {probe}");
    if probe["network"] == "none" {
        eprintln!(
            "SKIPPED (Landlock TCP rules need ABI 4): {}",
            probe["notes"]
        );
    } else {
        assert_eq!(probe["network"], "partial", "{probe}");
        assert_eq!(probe["network_method"], "landlock-tcp", "{probe}");
    }
    let refused = launcher_without_namespaces(&["--require", "--no-network", "--", "true"])
        .unwrap_or_else(|| panic!("ran once, not twice"));
    assert_eq!(
        refused.status.code(),
        Some(sandbox::REFUSED_EXIT),
        "{refused:?}"
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("not fully enforced"), "{stderr}");
}

#[test]
fn a_job_with_a_sandbox_runs_its_commands_inside_it() {
    use crate::support::runner::{cn_run, run, write_files};
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    // Not under /tmp: temp folders stay writable inside the sandbox by design.
    let outside_root = outside_temp_dirs();
    let outside = outside_root.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let job = "version: 1\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: write\npermissions: {mode: auto}\ntools: {bash: {sandbox: workspace-write, network: false}}\n";
    let script = format!(
        "turns:\n  - tool_calls: [{{name: Bash, arguments: {{command: 'echo in > inside.txt; echo out > {}/x.txt'}}}}]\n  - text: done\n",
        outside.display()
    );
    write_files(&ws, &[("job.yaml", job), ("s.yaml", &script)]);
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = r.result();
    assert_eq!(result["sandbox"]["mode"], "workspace-write", "{result}");
    assert_eq!(result["sandbox"]["network"], false);
    assert!(ws.join("inside.txt").exists());
    let enforced = result["sandbox"]["enforced"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if enforced.iter().any(|p| p == "read-only-outside-workspace") {
        assert!(
            !outside.join("x.txt").exists(),
            "the write outside the workspace got through"
        );
    } else {
        println!("skipped the enforcement check: {}", result["sandbox"]);
    }
}

/// Through the run's one sandbox (as root) or a bubblewrap per command, a command keeps what
/// the shell would give it: its exit code, a death by signal, its two streams apart, the
/// workspace as its folder, its caller's uid, and no capability at all (as root either).
#[tokio::test]
async fn a_contained_command_keeps_its_status_streams_folder_and_no_capabilities() {
    let d = dirs();
    let (p, probe) = sandbox::establish(policy(&d.ws, SandboxMode::WorkspaceWrite, false));
    if !fs_enforced(&probe) {
        return;
    }
    let entered = p.run_box.is_some();
    eprintln!("entered per command: {entered}");
    let c = ctx(&d.ws, p);
    if entered {
        // The supervisor (the command's parent) is not dumpable: its environment and memory
        // in /proc are closed to the command.
        for file in ["environ", "mem", "maps"] {
            let err = bash(&c, &format!("head -c 64 /proc/$PPID/{file}"))
                .await
                .unwrap_err();
            assert!(err.contains("Permission denied"), "{file}: {err}");
        }
    }
    let err = bash(&c, "echo out; echo err >&2; exit 7")
        .await
        .unwrap_err();
    assert!(
        err.contains("out") && err.contains("err") && err.contains("[exit code: 7]"),
        "{err}"
    );
    // Mirrored as the signal (the run's one sandbox) or as bubblewrap's 128 + 9.
    let err = bash(&c, "kill -9 $$").await.unwrap_err();
    assert!(
        err.contains("killed by a signal") || err.contains("[exit code: 137]"),
        "{err}"
    );
    let out = bash(&c, "pwd; id -u").await.unwrap();
    let ws = d.ws.canonicalize().unwrap();
    assert!(out.contains(&ws.display().to_string()), "{out}");
    assert!(out.contains(&own_uid().to_string()), "{out}");
    let caps = bash(&c, "grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status")
        .await
        .unwrap();
    for line in caps.lines().filter(|l| l.starts_with("Cap")) {
        assert!(
            line.ends_with("0000000000000000"),
            "a capability is left: {caps}"
        );
    }
    let nnp = bash(&c, "grep NoNewPrivs /proc/self/status").await.unwrap();
    assert!(nnp.contains('1'), "{nnp}");
}
