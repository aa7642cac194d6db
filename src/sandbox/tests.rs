//! Unit tests of the parent side: the policy's writable folders, the launcher command line,
//! the job-file spelling of the modes and the result.json record.

use std::ffi::OsStr;
use std::path::Path;

use super::*;

fn env(tmpdir: &str) -> Vec<(String, String)> {
    vec![("TMPDIR".to_owned(), tmpdir.to_owned())]
}

#[test]
fn workspace_write_allows_the_workspace_and_temp_dirs_only() {
    let p = SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        true,
        Path::new("/w"),
        &env("/scratch"),
    );
    for dir in ["/w", "/tmp", "/scratch", "/dev/null"] {
        assert!(p.writable.contains(&PathBuf::from(dir)), "{dir}: {p:?}");
    }
    assert!(!p.writable.contains(&PathBuf::from("/")));
}

#[test]
fn read_only_allows_device_sinks_only() {
    let p = SandboxPolicy::new(SandboxMode::ReadOnly, true, Path::new("/w"), &env("/s"));
    assert!(p.writable.contains(&PathBuf::from("/dev/null")));
    for dir in ["/w", "/tmp", "/s"] {
        assert!(!p.writable.contains(&PathBuf::from(dir)), "{dir}");
    }
}

#[test]
fn off_runs_the_program_itself() {
    let p = SandboxPolicy::off();
    assert!(!p.is_active());
    let (prog, args) = p.command_line(&[OsStr::new("bash"), OsStr::new("-c"), OsStr::new("x")]);
    assert_eq!(prog, "bash");
    assert_eq!(args, ["-c", "x"]);
}

#[test]
fn active_policy_goes_through_the_launcher() {
    let p = SandboxPolicy::new(SandboxMode::ReadOnly, false, Path::new("/w"), &[])
        .required(true)
        .with_launcher("/bin/cn-run");
    let (prog, args) = p.command_line(&[OsStr::new("bash"), OsStr::new("-c"), OsStr::new("x")]);
    assert_eq!(prog, "/bin/cn-run");
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_eq!(args[..3], ["__sandbox", "--mode", "read-only"]);
    assert!(args.contains(&"--no-network".to_owned()));
    assert!(args.contains(&"--require".to_owned()));
    assert!(args.windows(2).any(|w| w == ["--write", "/dev/null"]));
    assert_eq!(args[args.len() - 4..], ["--", "bash", "-c", "x"]);
}

#[test]
fn network_off_alone_activates_the_launcher() {
    let p = SandboxPolicy::new(SandboxMode::Off, false, Path::new("/w"), &[]);
    assert!(p.is_active());
    let args = p.launcher_args(&[]);
    assert!(!args.iter().any(|a| a == "--write"), "{args:?}");
}

#[test]
fn modes_are_spelled_as_in_the_job_file() {
    for (mode, text) in [
        (SandboxMode::Off, "off"),
        (SandboxMode::WorkspaceWrite, "workspace-write"),
        (SandboxMode::ReadOnly, "read-only"),
    ] {
        assert_eq!(serde_json::to_value(mode).unwrap(), text);
        assert_eq!(mode.as_str(), text);
        let back: SandboxMode = serde_json::from_value(text.into()).unwrap();
        assert_eq!(back, mode);
    }
    assert!(serde_json::from_value::<SandboxMode>("workspace".into()).is_err());
}

#[test]
fn shortfall_explains_what_is_missing() {
    let mut probe = Probe::off();
    assert!(probe.fully_enforced() && probe.shortfall().is_none());
    probe.filesystem = Enforcement::Full;
    probe.network = Enforcement::Partial;
    probe.notes.push("no user namespaces".to_owned());
    let why = probe.shortfall().unwrap();
    assert!(why.contains("network: partial") && why.contains("no user namespaces"));
}

#[test]
fn describe_reports_the_policy_and_what_was_enforced() {
    let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, false, Path::new("/w"), &[]);
    let probe = Probe {
        filesystem: Enforcement::Full,
        network: Enforcement::Full,
        landlock_abi: Some(6),
        network_method: Some("netns".to_owned()),
        notes: Vec::new(),
    };
    let v = serde_json::to_value(describe(&probe, &policy)).unwrap();
    assert_eq!(v["mode"], "workspace-write");
    assert_eq!(v["network"], false);
    assert_eq!(v["filesystem_enforcement"], "full");
    assert_eq!(v["landlock_abi"], 6);
    assert!(v["writable"].as_array().unwrap().iter().any(|w| w == "/w"));
}

#[test]
fn a_missing_launcher_is_reported_not_enforced() {
    let policy = SandboxPolicy::new(SandboxMode::ReadOnly, false, Path::new("/w"), &[])
        .with_launcher("/nonexistent/cn-run");
    let probe = probe(&policy);
    assert_eq!(probe.filesystem, Enforcement::None);
    assert_eq!(probe.network, Enforcement::None);
    assert!(probe.notes[0].contains("/nonexistent/cn-run"), "{probe:?}");
}
