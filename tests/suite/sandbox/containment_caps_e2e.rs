//! No capability, ever (issue 29): as root, a contained command can do nothing that needs a
//! capability, whichever way it started — the run's one sandbox (the default), cn-run
//! installed under `/tmp` (which the private `/tmp` covers), or a bubblewrap per command.
//! Each payload proves it ran (`ran-TAG` in the workspace) and tries what root with
//! capabilities can do: read and write files of another owner, change owners and modes,
//! make a device node, remount or bind-mount to write outside (also from a new user
//! namespace). The control runs the same payloads uncontained (`sandbox: off`, in private
//! mount namespaces so the host's mounts stay as they are) and sees every one succeed.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use serde_json::Value;

use super::containment_scene::{Scene, bash, namespaces_available};

/// The owner of the planted files (not root, not the test user).
const OTHER: u32 = 4321;
/// The secret in the other owner's file outside the workspace.
const SECRET: &str = "SECRET-other-owner-3e7d";

/// Plant a file of another owner outside (mode 600) and three in the workspace, and a
/// folder to mount on.
fn plant(s: &Scene) {
    let secret = s.outside.join("private");
    std::fs::write(&secret, SECRET).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&secret, Some(OTHER), Some(OTHER)).unwrap();
    for name in ["locked", "owned", "moded"] {
        let p = s.ws.join(name);
        std::fs::write(&p, "original\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::os::unix::fs::chown(&p, Some(OTHER), Some(OTHER)).unwrap();
    }
    std::fs::create_dir_all(s.ws.join("m")).unwrap();
}

/// (tag, command): each needs a capability to do its harm.
fn cases(s: &Scene) -> Vec<(&'static str, String)> {
    let (ws, out) = (s.ws(), s.outside.display().to_string());
    let write_out = |tag: &str| format!("echo {tag} > '{out}/{tag}'");
    vec![
        (
            "dac-read",
            format!("cat '{out}/private' > '{ws}/got-dac-read'"),
        ),
        ("dac-write", format!("echo pwned >> '{ws}/locked'")),
        ("chown", format!("chown 1:1 '{ws}/owned'")),
        ("chmod", format!("chmod 777 '{ws}/moded'")),
        ("mknod", format!("mknod '{ws}/disk' b 8 0")),
        (
            "remount",
            format!(
                "unshare -m sh -c 'mount -o remount,rw / && {}'",
                write_out("remount")
            ),
        ),
        (
            "bind",
            format!("unshare -m sh -c 'mount --bind {out} {ws}/m && echo bind > {ws}/m/bind'"),
        ),
        (
            "bind-userns",
            format!(
                "unshare -Urm sh -c 'mount --bind {out} {ws}/m && echo bind-userns > {ws}/m/bind-userns'"
            ),
        ),
    ]
}

/// The calls: each case writes `ran-TAG` first.
fn calls(s: &Scene) -> Vec<Value> {
    cases(s)
        .iter()
        .map(|(tag, cmd)| bash(&format!("touch '{}/ran-{tag}'; {cmd}", s.ws())))
        .chain([bash("grep -E '^(Cap|NoNewPrivs|Groups)' /proc/self/status")])
        .collect()
}

/// What the payloads did: the tags that had their effect.
fn effects(s: &Scene) -> Vec<&'static str> {
    let ws = &s.ws;
    let mode = |n: &str| std::fs::metadata(ws.join(n)).unwrap().mode() & 0o777;
    let mut done = Vec::new();
    let read = std::fs::read_to_string(ws.join("got-dac-read")).unwrap_or_default();
    if read.contains(SECRET) {
        done.push("dac-read");
    }
    if std::fs::read_to_string(ws.join("locked")).unwrap() != "original\n" {
        done.push("dac-write");
    }
    if std::fs::metadata(ws.join("owned")).unwrap().uid() != OTHER {
        done.push("chown");
    }
    if mode("moded") != 0o444 {
        done.push("chmod");
    }
    if ws.join("disk").exists() {
        done.push("mknod");
    }
    for tag in ["remount", "bind", "bind-userns"] {
        if s.outside.join(tag).exists() {
            done.push(tag);
        }
    }
    done
}

fn assert_all_ran(s: &Scene, transcript: &str) {
    for (tag, _) in cases(s) {
        assert!(
            s.ws.join(format!("ran-{tag}")).exists(),
            "{tag} did not run\n{transcript}"
        );
    }
}

/// Run the cases with the build's binary.
fn run_cases(s: &Scene) -> crate::support::runner::Run {
    plant(s);
    let turns = calls(s)
        .into_iter()
        .map(|c| serde_json::json!({"tool_calls": [c]}))
        .collect();
    let cmd = s.command(turns, "", &[]);
    crate::support::runner::run(cmd, Some(&s.out))
}

fn root_with_namespaces() -> bool {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: the capability tests are about root");
        return false;
    }
    namespaces_available()
}

#[test]
fn root_commands_in_the_runs_sandbox_can_do_nothing_that_needs_a_capability() {
    if !root_with_namespaces() {
        return;
    }
    let s = Scene::new();
    let r = run_cases(&s);
    s.assert_contained(&r);
    assert_all_ran(&s, &s.transcript(&r));
    assert_eq!(effects(&s), Vec::<&str>::new(), "{}", s.transcript(&r));
    let status = s.tool_outputs();
    assert!(
        status.contains("CapEff:\t0000000000000000") && status.contains("NoNewPrivs:\t1"),
        "{status}"
    );
    // Root's supplementary groups are gone too.
    assert!(
        status.lines().any(|l| l.trim_end() == "Groups:"),
        "{status}"
    );
    let enforced = &r.result()["sandbox"]["enforced"];
    assert!(
        enforced
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "no-capabilities"),
        "{enforced}"
    );
}

/// cn-run installed under `/tmp` (the private `/tmp` covers the folder it came from, which
/// once sent every command to a bubblewrap of its own with every capability), and that
/// folder made writable by the job: commands try to replace the supervisor (overwrite it in
/// place, copy over it, move it away) before the capability payloads run.
#[test]
fn root_commands_hold_no_capability_when_cn_run_is_installed_under_tmp() {
    if !root_with_namespaces() {
        return;
    }
    let install = tempfile::Builder::new()
        .prefix("cn-run-installed-")
        .tempdir_in("/tmp")
        .unwrap();
    let dir = install.path().canonicalize().unwrap();
    // The supervisor is copied (the payloads write to it); cn-run is only linked.
    let cn_run = dir.join("cn-run");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_cn-run"), &cn_run).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_cn-run"), &cn_run).unwrap();
    }
    let call = dir.join("cn-run-call");
    std::fs::copy(env!("CARGO_BIN_EXE_cn-run-call"), &call).unwrap();
    let before = std::fs::read(&call).unwrap();
    let s = Scene::new();
    plant(&s);
    let c = call.display();
    let mut turns: Vec<Value> = [
        format!("echo '#!/bin/sh' > {c}"),
        format!("cp /bin/true {c}"),
        format!("mv {c} {c}.old && cp /bin/true {c}"),
    ]
    .iter()
    .map(|cmd| serde_json::json!({"tool_calls": [bash(cmd)]}))
    .collect();
    turns.extend(
        calls(&s)
            .into_iter()
            .map(|c| serde_json::json!({"tool_calls": [c]})),
    );
    let extra = format!("tools: {{bash: {{writable: ['{}']}}}}\n", dir.display());
    let mut cmd = s.command(turns, &extra, &[]);
    let args: Vec<_> = cmd.get_args().map(|a| a.to_os_string()).collect();
    let envs: Vec<_> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_os_string(), v?.to_os_string())))
        .collect();
    cmd = std::process::Command::new(&cn_run);
    cmd.args(args)
        .env_clear()
        .envs(envs)
        .current_dir(&s.ws)
        .stdin(std::process::Stdio::null());
    let r = crate::support::runner::run(cmd, Some(&s.out));
    s.assert_contained(&r);
    assert_all_ran(&s, &s.transcript(&r));
    assert_eq!(effects(&s), Vec::<&str>::new(), "{}", s.tool_outputs());
    assert!(
        std::fs::read(&call).unwrap() == before,
        "the supervisor was replaced"
    );
    assert!(!dir.join("cn-run-call.old").exists());
}

#[test]
fn control_uncontained_root_does_all_of_it() {
    if !root_with_namespaces() {
        return;
    }
    let s = Scene::new();
    plant(&s);
    let turns: Vec<Value> = calls(&s);
    let r = s.run(&turns, "tools: {bash: {sandbox: off}}\n");
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    assert_all_ran(&s, &s.transcript(&r));
    let mut want: Vec<&str> = cases(&s).iter().map(|(t, _)| *t).collect();
    want.sort_unstable();
    let mut got = effects(&s);
    got.sort_unstable();
    assert_eq!(got, want, "{}", s.tool_outputs());
}

/// The same payloads through the Bash tool with a bubblewrap per command (the path taken
/// when the run's one sandbox cannot be entered), outside the run's shared namespaces too.
#[tokio::test]
async fn root_commands_in_a_bubblewrap_per_command_can_do_nothing_that_needs_a_capability() {
    use cn_run::sandbox::{SandboxMode, SandboxPolicy, establish};
    if !root_with_namespaces() {
        return;
    }
    let s = Scene::new();
    plant(&s);
    let (mut policy, probe) = establish(
        SandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            false,
            &s.ws,
            &super::sandbox::env(),
        )
        .with_launcher(env!("CARGO_BIN_EXE_cn-run")),
    );
    assert_eq!(probe.missing, vec![], "{probe:?}");
    policy.run_box = None;
    policy.run_net = None;
    assert_nothing_needing_a_capability(&s, policy).await;
}

/// Without bubblewrap (the Landlock launcher, cn-run's fallback) a command as root holds no
/// capability either, and the record says so: `no-capabilities` and `no-host-sockets` are
/// enforced (the launcher reads its own status back). Fails without the launcher's drop:
/// `dac-read`, `dac-write`, `chown`, `chmod` and `mknod` had their effect.
#[tokio::test]
async fn root_commands_under_the_landlock_fallback_can_do_nothing_that_needs_a_capability() {
    use cn_run::sandbox::{Mechanism, Protection, SandboxMode, SandboxPolicy, establish};
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: the capability tests are about root");
        return;
    }
    let s = Scene::new();
    plant(&s);
    let mut policy = SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        false,
        &s.ws,
        &super::sandbox::env(),
    )
    .with_launcher(env!("CARGO_BIN_EXE_cn-run"));
    policy.mechanism = Mechanism::Landlock;
    let (policy, probe) = establish(policy);
    assert_eq!(probe.mechanism.as_str(), "landlock", "{probe:?}");
    for p in [Protection::NoCapabilities, Protection::NoHostSockets] {
        assert!(probe.enforced.contains(&p), "{p:?} not enforced: {probe:?}");
    }
    assert_nothing_needing_a_capability(&s, policy).await;
}

/// Runs the cases with the Bash tool under `policy`: each ran, none had its effect, and
/// the command's own status shows no capability and `no_new_privs`.
async fn assert_nothing_needing_a_capability(s: &Scene, policy: cn_run::sandbox::SandboxPolicy) {
    use cn_run::tools::{Bash, Tool};
    let ctx = super::sandbox::ctx(&s.ws, policy);
    let mut outputs = String::new();
    for call in calls(s) {
        let out = match Bash.run(call["arguments"].clone(), &ctx).await {
            Ok(o) => o.content,
            Err(e) => format!("{e:?}"),
        };
        outputs.push_str(&out);
    }
    assert_all_ran(s, &outputs);
    assert_eq!(effects(s), Vec::<&str>::new(), "{outputs}");
    assert!(
        outputs.contains("CapEff:\t0000000000000000") && outputs.contains("NoNewPrivs:\t1"),
        "{outputs}"
    );
}
