//! Every credential file the sandbox's hidden list names stays out of every output, read
//! by a contained command (`cat`) and by cn-run's file tools (Read, Search, List), as root
//! and as `nobody`. Data-driven: one secret planted per well-known credential file (rclone,
//! s3cmd, boto, composer, NuGet, sbt, ivy, helm, pulumi, …, and the files inside the listed
//! folders), so a new file of the same kind is one more line. The controls: the same files
//! planted outside the fake `$HOME` are read by the same calls, and with `sandbox: off` the
//! `cat` of the listed files shows every secret.

use std::path::Path;

use serde_json::{Value, json};

use super::containment_scene::{Scene, User, bash, user_available};
use cn_run::sandbox::hidden::CREDENTIALS_IN_HOME;

/// Credential files, relative to `$HOME`: each listed itself or inside a listed folder.
const FILES: &[&str] = &[
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".azure/msal_token_cache.json",
    ".config/gcloud/application_default_credentials.json",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/git/credentials",
    ".config/containers/auth.json",
    ".config/op/config",
    ".docker/config.json",
    ".kube/config",
    ".gnupg/private-keys-v1.d/key.key",
    ".password-store/github.gpg",
    ".local/share/keyrings/login.keyring",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".config/rclone/rclone.conf",
    ".s3cfg",
    ".boto",
    ".passwd-s3fs",
    ".mc/config.json",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".nuget/NuGet/NuGet.Config",
    ".config/NuGet/NuGet.Config",
    ".sbt/.credentials",
    ".sbt/1.0/credentials.sbt",
    ".ivy2/.credentials",
    ".m2/settings-security.xml",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".config/pypoetry/auth.toml",
    ".bundle/config",
    ".hex/hex.config",
    ".pub-cache/credentials.json",
    ".config/dart/pub-credentials.json",
    ".config/glab-cli/config.yml",
    ".config/tea/config.yml",
    ".config/helm/repositories.yaml",
    ".config/helm/registry/config.json",
    ".config/doctl/config.yaml",
    ".config/heroku/config.json",
    ".config/hcloud/cli.toml",
    ".config/openstack/clouds.yaml",
    ".config/snowflake/connections.toml",
    ".config/sops/age/keys.txt",
    ".config/netlify/config.json",
    ".netlify/config.json",
    ".local/share/com.vercel.cli/auth.json",
    ".vercel/auth.json",
    ".fly/config.yml",
    ".wrangler/config/default.toml",
    ".config/.wrangler/config/default.toml",
    ".config/configstore/firebase-tools.json",
    ".config/ngrok/ngrok.yml",
    ".ngrok2/ngrok.yml",
    ".circleci/cli.yml",
    ".sentryclirc",
    ".terraformrc",
    ".pulumi/credentials.json",
    ".oci/config",
    ".tsh/keys/proxy/user",
    ".dockercfg",
    ".databrickscfg",
    ".snowflake/connections.toml",
    ".dbt/profiles.yml",
    ".kaggle/kaggle.json",
    ".config/kaggle/kaggle.json",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".huggingface/token",
    ".local/share/kwalletd/kdewallet.kwl",
];

/// The secret planted in the `i`th file under the fake home.
fn secret(i: usize) -> String {
    format!("HIDDEN-{i:03}-cred-planted")
}

/// The secret planted in its copy outside the fake home (the control).
fn decoy(i: usize) -> String {
    format!("DECOY-{i:03}-cred-planted")
}

/// Plants every file under the home and its copy under `<outside>/decoy`.
fn plant(s: &Scene) {
    for (i, f) in FILES.iter().enumerate() {
        for (root, text) in [(s.home.clone(), secret(i)), (decoy_root(s), decoy(i))] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("value {text}\n")).unwrap();
        }
    }
}

fn decoy_root(s: &Scene) -> std::path::PathBuf {
    s.outside.join("decoy")
}

/// One `cat` of every file under `root`, then a Read and a Search of each, and a List of
/// `.config`.
fn calls(root: &Path) -> Vec<Value> {
    let r = root.display();
    let files: Vec<String> = FILES.iter().map(|f| format!("'{r}/{f}'")).collect();
    let mut calls = vec![bash(&format!("cat {} 2>&1; true", files.join(" ")))];
    for f in FILES {
        let path = format!("{r}/{f}");
        calls.push(json!({"name": "Read", "arguments": {"filepath": path}}));
        // Search skips dotfiles in a walk: each file is searched by its own path.
        calls.push(
            json!({"name": "Search", "arguments": {"pattern": "cred-planted", "path": path}}),
        );
    }
    calls.push(json!({"name": "List", "arguments": {"dirpath": format!("{r}/.config")}}));
    calls
}

/// The outputs of the run's `tool` calls, joined.
fn outputs_of(s: &Scene, tool: &str) -> String {
    let events = std::fs::read_to_string(s.out.join("events.jsonl")).unwrap_or_default();
    events
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool.finished" && e["tool"] == tool)
        .map(|e| e["output"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn hidden_files_stay_out_of_every_output(user: User) {
    if !user_available(user) {
        return;
    }
    let s = Scene::for_user(user, &[]);
    plant(&s);
    let mut turns = calls(&s.home);
    turns.extend(calls(&decoy_root(&s)));
    let r = s.run_with(&turns, "", &["--auto"]);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    s.assert_contained(&r);
    let all = s.all_output(&r);
    let leaked: Vec<&str> = (0..FILES.len())
        .filter(|i| all.contains(&secret(*i)))
        .map(|i| FILES[i])
        .collect();
    assert!(leaked.is_empty(), "read by {user:?}: {leaked:?}");
    // The controls: the same calls read every copy outside the home, per tool.
    for tool in ["Bash", "Read", "Search"] {
        let out = outputs_of(&s, tool);
        let unread: Vec<&str> = (0..FILES.len())
            .filter(|i| !out.contains(&decoy(*i)))
            .map(|i| FILES[i])
            .collect();
        assert!(
            unread.is_empty(),
            "{tool} did not read the copies {unread:?}"
        );
    }
}

#[test]
fn every_listed_credential_file_is_hidden_from_commands_and_file_tools_as_root() {
    hidden_files_stay_out_of_every_output(User::Root);
}

#[test]
fn every_listed_credential_file_is_hidden_from_commands_and_file_tools_as_nobody() {
    hidden_files_stay_out_of_every_output(User::Nobody);
}

/// The control for the commands: uncontained, the same `cat` shows every planted secret.
#[test]
fn control_uncontained_cat_reads_every_listed_file() {
    if !user_available(User::Root) {
        return;
    }
    let s = Scene::new();
    plant(&s);
    let r = s.run_with(
        &calls(&s.home)[..1],
        "tools: {bash: {sandbox: off}}\n",
        &["--auto"],
    );
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    let out = outputs_of(&s, "Bash");
    let unread: Vec<&str> = (0..FILES.len())
        .filter(|i| !out.contains(&secret(*i)))
        .map(|i| FILES[i])
        .collect();
    assert!(unread.is_empty(), "not read uncontained: {unread:?}");
}

/// Every location of the list has a planted file in it here, so a location added to the
/// list is tested, and every planted file lies in a listed location.
#[test]
fn the_planted_files_and_the_list_cover_each_other() {
    let listed = |f: &str| {
        CREDENTIALS_IN_HOME
            .iter()
            .any(|c| Path::new(f).starts_with(c))
    };
    let unlisted: Vec<&&str> = FILES.iter().filter(|f| !listed(f)).collect();
    assert!(unlisted.is_empty(), "planted but not listed: {unlisted:?}");
    let untested: Vec<&&str> = CREDENTIALS_IN_HOME
        .iter()
        .filter(|c| !FILES.iter().any(|f| Path::new(f).starts_with(c)))
        .collect();
    assert!(untested.is_empty(), "listed but not planted: {untested:?}");
}
