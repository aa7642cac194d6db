use clap::ValueEnum;

use super::*;

fn settings(model: &str) -> ClientSettings {
    ClientSettings {
        connection: Connection::new("", model),
        stream_usage: true,
        thinking_budget: None,
        deployment: None,
        api_version: None,
        script: None,
    }
}

#[test]
fn every_kind_has_its_own_row_named_as_the_job_file_names_it() {
    assert_eq!(ProviderKind::ALL, ProviderKind::value_variants());
    for kind in ProviderKind::ALL {
        let word = serde_json::to_value(kind).unwrap();
        assert_eq!(word, kind.family().name, "{kind:?}");
    }
}

#[test]
fn settings_only_some_families_take_are_named_from_the_rows() {
    assert_eq!(Family::accepting(|a| a.thinking), "`provider: anthropic`");
    assert_eq!(Family::accepting(|a| a.deployment), "`provider: azure`");
    assert_eq!(Family::accepting(|a| a.script), "`provider: script`");
}

#[test]
fn each_family_builds_its_client_or_says_which_setting_is_missing() {
    let openai = (ProviderKind::Openai.family().build)(&settings("gpt-4.1")).unwrap();
    assert_eq!(openai.info().model, "gpt-4.1");
    let no_key = (ProviderKind::Anthropic.family().build)(&settings("claude"));
    assert!(matches!(no_key, Err(FamilyError::Usage(m)) if m.contains("ANTHROPIC_API_KEY")));
    let no_script = (ProviderKind::Script.family().build)(&settings("m"));
    assert!(matches!(no_script, Err(FamilyError::Usage(m)) if m.contains("script file")));
    let mut azure = settings("gpt-4o");
    azure.connection.api_base = "https://res.openai.azure.com".to_owned();
    assert!((ProviderKind::Azure.family().build)(&azure).is_ok());
}

#[test]
fn only_network_families_need_keys_or_cost() {
    for kind in ProviderKind::ALL {
        let f = kind.family();
        assert_eq!(f.network, f.key_env.is_some(), "{kind:?}");
        assert!(!f.needs_key || f.network, "{kind:?}");
    }
}
