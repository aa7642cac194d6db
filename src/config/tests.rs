//! The resolution decides each value once, with its source; the stored flags come back on
//! resume with only the flags given then laid over them.

use super::PolicyArgs;
use super::*;
use crate::job::{self, LoadOptions};

/// A script file the jobs name (a job naming a missing one does not load).
fn script() -> String {
    let path = std::env::temp_dir().join("cn-run-config-tests-script.yaml");
    std::fs::write(&path, "turns:\n  - text: hi\n").unwrap();
    path.display().to_string()
}

fn job(yaml: &str) -> Job {
    let s = script();
    let text = format!(
        "version: 1\nname: t\nmodel: {{provider: script, name: m, script: '{s}'}}\nprompt: go\n{yaml}"
    );
    job::load_str(&text, "job.yaml", None, &LoadOptions::default()).unwrap()
}

fn resolve(yaml: &str, settings: Settings) -> RunConfig {
    RunConfig::resolve(job(yaml), settings, Call::default()).unwrap()
}

#[test]
fn the_context_length_is_decided_once_with_its_source() {
    let c = resolve("", Settings::default());
    assert_eq!(
        (c.context_length, c.context_length_source),
        (128_000, "model family")
    );
    let c = resolve(
        "",
        Settings {
            model: Some("claude-sonnet-4".into()),
            ..Settings::default()
        },
    );
    assert_eq!(
        (c.context_length, c.context_length_source),
        (200_000, "model family")
    );
    let job_set = format!(
        "model: {{provider: script, name: gpt-4.1, script: '{}', context_length: 9000}}\n",
        script()
    );
    let text = format!("version: 1\nname: t\nprompt: go\n{job_set}");
    let j = job::load_str(&text, "job.yaml", None, &LoadOptions::default()).unwrap();
    let c = RunConfig::resolve(j, Settings::default(), Call::default()).unwrap();
    assert_eq!((c.context_length, c.context_length_source), (9000, "job"));
    assert_eq!(c.view().model.context_length, 9000);
}

#[test]
fn a_flag_wins_over_the_job_and_says_so() {
    let flags = Settings {
        timeout: Some("2m".into()),
        max_turns: Some(3),
        on_ask: Some(crate::job::OnAsk::Fail),
        ..Settings::default()
    };
    let c = resolve("limits: {timeout: 10m, max_turns: 9}\n", flags);
    assert_eq!((c.timeout.as_secs(), c.timeout_source), (120, "flag"));
    assert_eq!(c.job.limits.max_turns, Some(3));
    assert_eq!(c.agent.on_ask, crate::job::OnAsk::Fail);
    assert_eq!(c.view().on_ask_source, "flag");
    let c = resolve("limits: {timeout: 10m}\n", Settings::default());
    assert_eq!((c.timeout.as_secs(), c.timeout_source), (600, "job"));
    let c = resolve("", Settings::default());
    assert_eq!(c.timeout_source, "default");
}

#[test]
fn bad_flags_are_config_errors() {
    for flags in [
        Settings {
            timeout: Some("soon".into()),
            ..Settings::default()
        },
        Settings {
            policy: PolicyArgs {
                allow: vec!["Bsh(ls)".into()],
                ..PolicyArgs::default()
            },
            ..Settings::default()
        },
        Settings {
            policy: PolicyArgs {
                workspace: Some("/no/such/dir/here".into()),
                ..PolicyArgs::default()
            },
            ..Settings::default()
        },
    ] {
        let e = RunConfig::resolve(job(""), flags.clone(), Call::default());
        assert!(e.is_err(), "{flags:?}");
    }
}

#[test]
fn trust_comes_from_the_flag_or_the_job_and_the_base_ref_is_resolved() {
    let c = resolve(
        "",
        Settings {
            policy: PolicyArgs {
                untrusted: true,
                base_ref: Some("main".into()),
                ..PolicyArgs::default()
            },
            ..Settings::default()
        },
    );
    assert!(c.trust.untrusted && c.trust.paths.is_empty());
    assert_eq!(c.base_ref.as_deref(), Some("main"));
    let c = resolve(
        "untrusted_paths: ['src/**']\nbase_ref: origin/main\n",
        Settings::default(),
    );
    assert!(c.trust.untrusted);
    assert_eq!(c.base_ref.as_deref(), Some("origin/main"));
    assert_eq!(c.view().trust.untrusted_paths, ["src/**"]);
}

#[test]
fn the_upload_url_is_never_stored() {
    let flags = Settings {
        upload_url: Some("https://up.example/secret-token".into()),
        upload_url_given: true,
        ..Settings::default()
    };
    let c = resolve("", flags);
    let text = serde_json::to_string(&c.view()).unwrap();
    assert!(!text.contains("secret-token"), "{text}");
    let back: ConfigView = serde_json::from_str(&text).unwrap();
    assert!(back.flags.upload_url_given && back.flags.upload_url.is_none());
    assert!(back.trust.upload_url);
}

#[test]
fn a_resume_keeps_the_stored_flags_and_lays_the_given_ones_over() {
    let stored = Settings {
        policy: PolicyArgs {
            untrusted: true,
            base_ref: Some("v1".into()),
            allow: vec!["Read".into()],
            readonly: true,
            params: vec![("a".into(), "1".into()), ("b".into(), "2".into())],
            ..PolicyArgs::default()
        },
        max_turns: Some(4),
        upload_url_given: true,
        ..Settings::default()
    };
    // Nothing given: everything comes back.
    let same = stored.clone().overlay(Settings::default());
    assert_eq!(same, stored);
    // Given values win; lists grow; trust cannot be lowered.
    let given = Settings {
        policy: PolicyArgs {
            base_ref: Some("v2".into()),
            allow: vec!["Write".into(), "Read".into()],
            auto: true,
            params: vec![("b".into(), "3".into())],
            ..PolicyArgs::default()
        },
        max_turns: Some(8),
        upload_url: Some("https://u".into()),
        upload_url_given: true,
        ..Settings::default()
    };
    let m = stored.overlay(given);
    assert!(m.policy.untrusted, "trust kept");
    assert_eq!(m.policy.base_ref.as_deref(), Some("v2"));
    assert_eq!(m.policy.allow, ["Read", "Write"]);
    assert!(
        m.policy.auto && !m.policy.readonly,
        "a mode given replaces the stored one"
    );
    assert_eq!(m.max_turns, Some(8));
    assert_eq!(
        m.policy.params,
        [
            ("a".to_owned(), "1".to_owned()),
            ("b".to_owned(), "3".to_owned())
        ]
    );
    assert_eq!(m.upload_url.as_deref(), Some("https://u"));
}

#[test]
fn an_old_session_s_recorded_words_still_resume() {
    let words: Vec<String> = [
        "--untrusted",
        "--base-ref",
        "main",
        "--max-turns",
        "3",
        "--allow",
        "Read",
    ]
    .map(str::to_owned)
    .to_vec();
    let s = Settings::from_recorded_args(&words).unwrap();
    assert!(s.policy.untrusted);
    assert_eq!(s.policy.base_ref.as_deref(), Some("main"));
    assert_eq!(s.max_turns, Some(3));
    assert_eq!(s.policy.allow, ["Read"]);
}

#[test]
fn untrusted_mode_turns_auto_off_with_a_warning() {
    let c = resolve(
        "permissions: {mode: auto}\n",
        Settings {
            policy: PolicyArgs {
                untrusted: true,
                ..PolicyArgs::default()
            },
            ..Settings::default()
        },
    );
    let (policy, _, note) = c.enforced_policy(&c.workspace).unwrap();
    assert_eq!(policy.mode(), crate::permissions::Mode::Headless);
    assert!(
        note.is_some(),
        "no base ref: the note says repository files are not used"
    );
    assert_eq!(c.policy_warnings().len(), 1);
    let c = resolve("permissions: {mode: auto}\n", Settings::default());
    let (policy, _, _) = c.enforced_policy(&c.workspace).unwrap();
    assert_eq!(policy.mode(), crate::permissions::Mode::Auto);
    assert!(c.policy_warnings().is_empty());
}

#[test]
fn config_resolved_names_every_flag_and_writes_the_same_bytes_as_the_settings() {
    // Every field set (no `..Default`): a new flag fails to compile here until it is set,
    // and then fails below until `events::ResolvedFlags` names it.
    let all = Settings {
        provider: Some(job::ProviderKind::Anthropic),
        api_base: Some("https://api.example".into()),
        model: Some("m2".into()),
        api_key_env: Some("KEY".into()),
        script: Some("/s.yaml".into()),
        max_turns: Some(3),
        max_tokens: Some(900),
        timeout: Some("15m".into()),
        max_cost_usd: Some(0.25),
        on_ask: Some(job::OnAsk::Deny),
        policy: PolicyArgs {
            params: vec![("a".into(), "1".into())],
            allow: vec!["Read".into()],
            ask: vec!["Bash".into()],
            exclude: vec!["Fetch".into()],
            auto: true,
            readonly: true,
            untrusted: true,
            base_ref: Some("v1".into()),
            workspace: Some("/w".into()),
        },
        require_sandbox: true,
        upload_url_given: true,
        upload_url: Some("https://up.example/secret-token".into()),
        store: Some("s3://b/p".into()),
    };
    let view = ConfigView {
        flags: all.clone(),
        ..resolve("", Settings::default()).view()
    };
    let given = serde_json::to_string(&view.flags).unwrap();
    let event = view.into_event();
    assert_eq!(serde_json::to_string(&event.flags).unwrap(), given);
    assert!(!given.contains("secret-token"), "{given}");
    let back: Settings = serde_json::from_str(&given).unwrap();
    assert_eq!(
        back,
        Settings {
            upload_url: None,
            ..all
        }
    );
}
