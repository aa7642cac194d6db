//! Cost of containment per command (issue 16 target: at most 5 ms over bare, median of
//! 100 `true` calls): the Bash tool's own path (`run_command_sandboxed`, i.e. `bash -c
//! true` with pipes and a process group) bare, under the default profile (as root: the
//! run's one bubblewrap, entered per command; else a bubblewrap per command), with a host
//! list (the proxy), with the network allowed, with a bubblewrap per command in the run's
//! shared namespaces (the way before the run's one sandbox), and with network/IPC/UTS
//! namespaces made per command too (the first way). Calls are interleaved so load hits all
//! alike; the load average is printed with the figures. First, what the run's set-up costs
//! (`establish`: its cgroup, namespaces, holder and probe) and its removal as the run ends
//! (the policy dropped), median of 20: the cost issue 38 takes off the first request.

use std::time::{Duration, Instant};

use cn_run::sandbox::{SandboxMode, SandboxPolicy, establish};
use cn_run::tools::{CommandLimits, run_command_sandboxed};
use tokio_util::sync::CancellationToken;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

pub(crate) fn run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let env: Vec<(String, String)> = ["PATH", "HOME"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_owned(), v)))
        .collect();
    let make = |mode, network| {
        let (policy, probe) = establish(
            SandboxPolicy::new(mode, network, &ws, &env)
                .with_launcher(env!("CARGO_BIN_EXE_cn-run")),
        );
        println!(
            "  {} network={network}: mechanism {}, missing {:?}, {}",
            mode.as_str(),
            probe.mechanism,
            probe.missing,
            if policy.run_box.is_some() {
                "the run's one sandbox, entered per command"
            } else {
                "a bubblewrap per command"
            }
        );
        policy
    };
    set_up_and_removal(&ws, &env);
    let contained = make(SandboxMode::WorkspaceWrite, false);
    // The same profile with network, IPC and UTS namespaces made per command (as before
    // the run's shared ones): where the time went.
    let mut per_command = contained.clone();
    per_command.run_net = None;
    per_command.run_box = None;
    // A bubblewrap per command, in the run's shared namespaces.
    let mut bwrap_per_call = contained.clone();
    bwrap_per_call.run_box = None;
    let hosts = vec![cn_run::sandbox::HostRule::parse("example.com").unwrap()];
    let (with_hosts, _) = establish(
        SandboxPolicy::new(SandboxMode::WorkspaceWrite, false, &ws, &env)
            .with_launcher(env!("CARGO_BIN_EXE_cn-run"))
            .with_hosts(hosts),
    );
    println!(
        "  load average: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let policies = [
        ("bare", SandboxPolicy::off()),
        ("contained", contained),
        ("contained+hosts", with_hosts),
        ("contained+network", make(SandboxMode::WorkspaceWrite, true)),
        ("bwrap-per-command", bwrap_per_call),
        ("per-command-netns", per_command),
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let limits = CommandLimits {
        inactivity: Duration::from_secs(30),
        max_chars: 10_000,
        max_lines: 100,
    };
    let cancel = CancellationToken::new();
    let mut times = vec![Vec::new(); policies.len()];
    for _ in 0..100 {
        for (i, (_, policy)) in policies.iter().enumerate() {
            let t = Instant::now();
            let o = rt
                .block_on(run_command_sandboxed(
                    "true", &ws, &env, limits, &cancel, policy,
                ))
                .unwrap();
            times[i].push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(o.exit_code, Some(0), "{o:?}");
        }
    }
    let bare = median(times[0].clone());
    for ((name, _), t) in policies.iter().zip(times) {
        let m = median(t);
        println!(
            "  {name:<18} median {m:6.2} ms  (+{:.2} ms over bare)",
            m - bare
        );
    }
}

/// The run's set-up (`establish`) and its removal (the last copy of the policy dropped).
fn set_up_and_removal(ws: &std::path::Path, env: &[(String, String)]) {
    let (mut up, mut down) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, false, ws, env)
            .with_launcher(env!("CARGO_BIN_EXE_cn-run"));
        let t = Instant::now();
        let (established, _) = establish(policy);
        up.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        drop(established);
        down.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "  the run's set-up: median {:.2} ms; its removal: median {:.2} ms",
        median(up),
        median(down)
    );
}
