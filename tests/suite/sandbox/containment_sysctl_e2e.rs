//! The machine's sysctls (issue 29, the capability class tried again): the kernel lets any
//! process whose effective uid is 0 write `/proc/sys`, no capability needed, and
//! bubblewrap started as root left the sandbox's `/proc/sys` writable. A contained root
//! command could so set `kernel.core_pattern` (a program of its choice run as root on the
//! host at the next crash) or raise the run's process bound. Here contained root commands
//! try, in many spellings, to change a harmless sysctl (`kernel.printk_ratelimit`): in the
//! run's one sandbox and in a bubblewrap per command, the host's value stays. The control,
//! uncontained, changes it (and the test puts it back).

use std::path::Path;

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};

const KNOB: &str = "/proc/sys/kernel/printk_ratelimit";

fn knob() -> u64 {
    std::fs::read_to_string(KNOB)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The tests of this file change and read one sysctl of the machine: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Puts the knob back to `value` when dropped (whatever the test found).
struct PutBack(u64);

impl Drop for PutBack {
    fn drop(&mut self) {
        let _ = std::fs::write(KNOB, self.0.to_string());
    }
}

/// Ways to write `value` into the knob, each printing `wrote-N` when its write succeeded.
fn spellings(value: u64) -> Vec<String> {
    let k = KNOB;
    vec![
        format!("echo {value} > {k} && echo wrote-1"),
        format!("sysctl -q -w kernel.printk_ratelimit={value} && echo wrote-2"),
        format!("printf {value} | tee {k} >/dev/null && echo wrote-3"),
        format!("echo {value} > /proc/self/root{k} && echo wrote-4"),
        format!("echo {value} > /proc/1/root{k} && echo wrote-5"),
        format!("python3 -c \"open('{k}', 'w').write('{value}')\" && echo wrote-6"),
        format!("cd /proc/sys/kernel && echo {value} > printk_ratelimit && echo wrote-7"),
        format!("dd of={k} 2>/dev/null <<< {value} && echo wrote-8"),
        format!("unshare -Urm sh -c 'echo {value} > {k}' 2>/dev/null && echo wrote-9"),
        format!(
            "perl -e 'open(F, \">{k}\") or exit 1; print F \"{value}\"; close(F) or exit 1' && echo wrote-10"
        ),
        "echo h > /proc/sysrq-trigger && echo wrote-sysrq".to_owned(),
    ]
}

fn calls(value: u64) -> Vec<Value> {
    spellings(value).iter().map(|c| bash(c)).collect()
}

#[test]
fn root_commands_in_the_runs_sandbox_change_no_sysctl_of_the_machine() {
    if !user_available(User::Root) || !Path::new(KNOB).exists() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scene::new();
    let start = knob();
    let _back = PutBack(start);
    let r = s.run(&calls(start + 7), "");
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let out = s.tool_outputs();
    assert_eq!(
        knob(),
        start,
        "a contained command changed the sysctl:\n{out}"
    );
    assert!(!out.contains("wrote-"), "{out}");
    let enforced = r.result()["sandbox"]["enforced"].to_string();
    assert!(
        enforced.contains("read-only-outside-workspace"),
        "{enforced}"
    );
}

#[tokio::test]
#[allow(clippy::await_holding_lock)] // one test at a time, the lock held for its whole body
async fn root_commands_in_a_bubblewrap_per_command_change_no_sysctl_of_the_machine() {
    use cn_run::sandbox::{SandboxMode, SandboxPolicy, establish};
    use cn_run::tools::{Bash, Tool};
    if !user_available(User::Root) || !Path::new(KNOB).exists() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scene::new();
    let start = knob();
    let _back = PutBack(start);
    let env = super::sandbox::env();
    let (mut policy, probe) = establish(
        SandboxPolicy::new(SandboxMode::WorkspaceWrite, false, &s.ws, &env)
            .with_launcher(env!("CARGO_BIN_EXE_cn-run")),
    );
    assert_eq!(probe.missing, vec![], "{probe:?}");
    policy.run_box = None;
    policy.run_net = None;
    let ctx = super::sandbox::ctx(&s.ws, policy);
    let mut out = String::new();
    for call in calls(start + 7) {
        match Bash.run(call["arguments"].clone(), &ctx).await {
            Ok(o) => out.push_str(&o.content),
            Err(e) => out.push_str(&format!("{e:?}")),
        }
    }
    assert_eq!(
        knob(),
        start,
        "a contained command changed the sysctl:\n{out}"
    );
    assert!(!out.contains("wrote-"), "{out}");
}

#[test]
fn control_uncontained_root_changes_the_sysctl() {
    if !user_available(User::Root) || !Path::new(KNOB).exists() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scene::new();
    let start = knob();
    let _back = PutBack(start);
    let r = s.run(&calls(start + 7)[..1], "tools: {bash: {sandbox: off}}\n");
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    assert_eq!(knob(), start + 7, "{}", s.tool_outputs());
}
