//! The one list of credential locations a contained command must not read: the user's keys,
//! tokens and logins that live outside the workspace. Under bubblewrap each one that exists
//! is covered (an empty folder over a folder, `/dev/null` over a file); a job can give back
//! one it needs with `tools.bash.readable`.

use std::path::{Path, PathBuf};

/// Credential locations, relative to `$HOME`.
pub const CREDENTIALS_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/git/credentials",
    ".config/containers/auth.json",
    ".config/op",
    ".docker",
    ".kube",
    ".gnupg",
    ".password-store",
    ".local/share/keyrings",
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
    // Object stores and sync tools.
    ".config/rclone/rclone.conf",
    ".s3cfg",
    ".boto",
    ".passwd-s3fs",
    ".mc/config.json",
    // Package registries and build tools: the credential file only, never the folder a
    // build writes to (caches, installed tools).
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
    // Forges, clouds and deployment CLIs.
    ".config/glab-cli",
    ".config/tea",
    ".config/helm",
    ".config/doctl",
    ".config/heroku",
    ".config/hcloud",
    ".config/openstack/clouds.yaml",
    ".config/snowflake",
    ".config/sops",
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
    ".oci",
    ".tsh",
    ".dockercfg",
    ".databrickscfg",
    ".snowflake",
    ".dbt/profiles.yml",
    ".kaggle/kaggle.json",
    ".config/kaggle/kaggle.json",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".huggingface/token",
    ".local/share/kwalletd",
];

/// Credential locations outside any home folder.
pub const CREDENTIALS_ELSEWHERE: &[&str] = &["/run/secrets", "/var/run/secrets"];

/// Every credential location of the list for `home` (and `/root`, when cn-run runs as
/// root with another `$HOME`), whether it exists or not: what cn-run's own file tools
/// refuse (`tools::view`), so they see what a contained command sees.
pub fn locations(home: Option<&Path>) -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = home.map(Path::to_path_buf).into_iter().collect();
    if rustix::process::geteuid().is_root() && !homes.iter().any(|h| h == Path::new("/root")) {
        homes.push(PathBuf::from("/root"));
    }
    let in_homes = homes
        .iter()
        .flat_map(|h| CREDENTIALS_IN_HOME.iter().map(move |c| h.join(c)));
    let elsewhere = CREDENTIALS_ELSEWHERE.iter().map(PathBuf::from);
    in_homes.chain(elsewhere).collect()
}

/// The credential locations that exist for `home` (and `/root`, when cn-run runs as root
/// with another `$HOME`), minus the ones the job gives back in `readable`.
pub fn existing(home: Option<&Path>, readable: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = locations(home)
        .into_iter()
        .filter(|p| p.symlink_metadata().is_ok())
        .filter(|p| {
            !readable
                .iter()
                .any(|r| p.starts_with(r) || r.starts_with(p))
        })
        .collect();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_existing_locations_not_given_back_are_listed() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        std::fs::create_dir_all(home.path().join(".aws")).unwrap();
        std::fs::write(home.path().join(".netrc"), "machine x").unwrap();
        let back = [home.path().join(".aws")];
        let found = existing(Some(home.path()), &back);
        assert!(found.contains(&home.path().join(".ssh")), "{found:?}");
        assert!(found.contains(&home.path().join(".netrc")), "{found:?}");
        assert!(!found.contains(&home.path().join(".aws")), "{found:?}");
        assert!(!found.contains(&home.path().join(".docker")), "{found:?}");
    }
}
