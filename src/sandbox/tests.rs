//! Unit tests of the parent side: the bubblewrap and launcher command lines, the
//! environment, the job-file spelling of the modes and the result.json record.

use std::ffi::OsStr;
use std::path::Path;

use super::*;

fn strings(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn with_bwrap(mut p: SandboxPolicy) -> SandboxPolicy {
    p.mechanism = Mechanism::Bubblewrap(PathBuf::from("/usr/bin/bwrap"));
    p
}

#[test]
fn bubblewrap_binds_the_workspace_over_a_read_only_root_with_private_temp() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().display().to_string();
    let p = with_bwrap(SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        false,
        dir.path(),
        &[],
    ));
    let (prog, args) = p.command_line(
        &[OsStr::new("bash"), OsStr::new("-c"), OsStr::new("x")],
        Path::new("/w"),
    );
    assert_eq!(prog, "/usr/bin/bwrap");
    let a = strings(&args);
    let at = |flag: &[&str]| a.windows(flag.len()).position(|w| w == flag);
    let root = at(&["--ro-bind", "/", "/"]).unwrap();
    let ws = at(&["--bind", &w, &w]).unwrap();
    assert!(
        root < ws,
        "the workspace bind must come after the read-only root: {a:?}"
    );
    for flag in ["--unshare-pid", "--unshare-net", "--die-with-parent"] {
        assert!(a.iter().any(|x| x == flag), "{flag}: {a:?}");
    }
    let size = p.limits.tmp_bytes.to_string();
    assert!(at(&["--size", &size, "--tmpfs", "/tmp"]).is_some(), "{a:?}");
    assert!(at(&["--cap-drop", "ALL"]).is_some(), "{a:?}");
    assert_eq!(a[a.len() - 4..], ["--", "bash", "-c", "x"]);
}

#[test]
fn network_true_and_read_only_change_the_profile() {
    let p = with_bwrap(SandboxPolicy::new(
        SandboxMode::ReadOnly,
        true,
        Path::new("/w"),
        &[],
    ));
    let a = strings(&p.command_line(&[OsStr::new("true")], Path::new("/w")).1);
    assert!(!a.iter().any(|x| x == "--unshare-net"), "{a:?}");
    assert!(!a.windows(3).any(|w| w == ["--bind", "/w", "/w"]), "{a:?}");
}

#[test]
fn off_runs_the_program_itself_with_the_whole_environment() {
    let p = SandboxPolicy::off();
    assert!(!p.is_active());
    let (prog, args) = p.command_line(
        &[OsStr::new("bash"), OsStr::new("-c"), OsStr::new("x")],
        Path::new("/"),
    );
    assert_eq!(prog, "bash");
    assert_eq!(args, ["-c", "x"]);
    let env = vec![("GITHUB_TOKEN".to_owned(), "t".to_owned())];
    assert_eq!(p.command_env(&env), env);
}

#[test]
fn contained_commands_get_the_allow_list_and_a_private_tmpdir() {
    let p = with_bwrap(SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        false,
        Path::new("/w"),
        &[],
    ));
    let env = vec![
        ("PATH".to_owned(), "/bin".to_owned()),
        ("GITHUB_TOKEN".to_owned(), "t".to_owned()),
        ("TMPDIR".to_owned(), "/host/tmp".to_owned()),
    ];
    let got = p.command_env(&env);
    assert!(got.contains(&("PATH".to_owned(), "/bin".to_owned())));
    assert!(
        got.contains(&("TMPDIR".to_owned(), "/tmp".to_owned())),
        "{got:?}"
    );
    assert!(!got.iter().any(|(k, _)| k == "GITHUB_TOKEN"), "{got:?}");
}

#[test]
fn the_fallback_launcher_gets_the_writable_folders() {
    let mut p = SandboxPolicy::new(SandboxMode::ReadOnly, false, Path::new("/w"), &[])
        .required(true)
        .with_launcher("/bin/cn-run");
    p.mechanism = Mechanism::Landlock;
    let (prog, args) = p.command_line(
        &[OsStr::new("bash"), OsStr::new("-c"), OsStr::new("x")],
        Path::new("/w"),
    );
    assert_eq!(prog, "/bin/cn-run");
    let args = strings(&args);
    assert_eq!(args[..3], ["__sandbox", "--mode", "read-only"]);
    assert!(args.contains(&"--no-network".to_owned()));
    assert!(args.contains(&"--require".to_owned()));
    assert!(args.windows(2).any(|w| w == ["--write", "/dev/null"]));
    assert!(
        !args.windows(2).any(|w| w == ["--write", "/w"]),
        "read-only: {args:?}"
    );
    assert_eq!(args[args.len() - 4..], ["--", "bash", "-c", "x"]);
}

#[test]
fn network_off_alone_uses_the_launcher_without_writes() {
    let p = with_bwrap(SandboxPolicy::new(
        SandboxMode::Off,
        false,
        Path::new("/w"),
        &[],
    ));
    assert!(p.is_active());
    let (prog, args) = p.command_line(&[OsStr::new("true")], Path::new("/w"));
    assert_eq!(prog, "/proc/self/exe");
    assert!(!args.iter().any(|a| a == "--write"), "{args:?}");
}

#[test]
fn modes_are_spelled_as_in_the_job_file_and_workspace_write_is_the_default() {
    assert_eq!(SandboxMode::default(), SandboxMode::WorkspaceWrite);
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
fn shortfall_names_what_is_missing_and_off_is_never_fully_enforced() {
    let off = probe(&SandboxPolicy::off());
    assert!(!off.fully_enforced());
    assert!(off.missing.contains(&Protection::PidNamespace), "{off:?}");
    let mut p = Probe::off();
    p.mechanism = ContainedBy::Landlock;
    p.enforced = vec![Protection::ReadOnlyOutsideWorkspace];
    p.missing = vec![Protection::PidNamespace];
    p.notes.push("bubblewrap is not installed".to_owned());
    let why = p.shortfall().unwrap();
    assert!(
        why.contains("missing: pid-namespace") && why.contains("not installed"),
        "{why}"
    );
    p.missing.clear();
    assert!(p.fully_enforced() && p.shortfall().is_none());
}

#[test]
fn describe_reports_mechanism_enforced_and_missing() {
    let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, false, Path::new("/w"), &[]);
    let mut probe = Probe::off();
    probe.mechanism = ContainedBy::Bubblewrap;
    probe.enforced = vec![Protection::PrivateTmp, Protection::NoNetwork];
    let v = serde_json::to_value(describe(&probe, &policy)).unwrap();
    assert_eq!(v["mode"], "workspace-write");
    assert_eq!(v["network"], false);
    assert_eq!(v["mechanism"], "bubblewrap");
    assert_eq!(
        v["enforced"],
        serde_json::json!(["private-tmp", "no-network"])
    );
    assert_eq!(v["missing"], serde_json::json!([]));
    assert!(v["writable"].as_array().unwrap().iter().any(|w| w == "/w"));
}

#[test]
fn a_missing_launcher_is_reported_not_enforced() {
    let mut policy = SandboxPolicy::new(SandboxMode::ReadOnly, false, Path::new("/w"), &[])
        .with_launcher("/nonexistent/cn-run");
    policy.mechanism = Mechanism::Landlock;
    let probe = probe(&policy);
    assert_eq!(probe.filesystem, Enforcement::None);
    assert_eq!(probe.network, Enforcement::None);
    assert!(probe.missing.contains(&Protection::NoNetwork), "{probe:?}");
    assert!(
        probe.enforced.contains(&Protection::EnvAllowList),
        "{probe:?}"
    );
    assert!(probe.notes[0].contains("/nonexistent/cn-run"), "{probe:?}");
}

#[test]
fn a_failing_bubblewrap_falls_back_and_says_why() {
    let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, false, Path::new("/"), &[])
        .with_launcher("/nonexistent/cn-run");
    policy.mechanism = Mechanism::Bubblewrap(PathBuf::from("/bin/false"));
    let (policy, probe) = establish(policy);
    assert!(!policy.fully_enforced());
    assert_eq!(policy.mechanism, Mechanism::Landlock);
    assert_eq!(probe.mechanism, ContainedBy::Landlock);
    assert!(
        probe.missing.contains(&Protection::PidNamespace),
        "{probe:?}"
    );
    assert!(probe.notes[0].contains("/bin/false"), "{probe:?}");
}
