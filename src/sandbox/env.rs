//! The environment of a contained command: built from an allow-list (the one list here)
//! plus the names the job gives in `tools.bash.env`, never the runner's whole environment,
//! so tokens and keys that CI puts in cn-run's environment do not reach commands.

/// Variables passed through by name.
pub const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "CI",
    "NO_COLOR",
    "COLORTERM",
    "DEBIAN_FRONTEND",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    // Tool locations and caches.
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "JAVA_HOME",
    "NVM_DIR",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "PIP_CACHE_DIR",
    "npm_config_cache",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "RUNNER_TOOL_CACHE",
    "AGENT_TOOLSDIRECTORY",
    // Set by cn-run for its commands.
    "CN_RUN",
    "CN_RUN_RUN_ID",
    "GIT_TERMINAL_PROMPT",
    "GIT_PAGER",
    "PAGER",
];

/// Variables passed through by prefix.
pub const ALLOWED_PREFIXES: &[&str] = &["LC_"];

/// Whether `name` is passed: on the list, or named by the job (`NAME`, or `PREFIX*`).
pub fn allowed(name: &str, job_names: &[String]) -> bool {
    ALLOWED.contains(&name)
        || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
        || job_names.iter().any(|n| match n.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => n == name,
        })
}

/// Where commands find cn-run's proxy (`network: [hosts]`): the usual variables in both
/// cases, loopback left out so servers a command starts stay reachable.
pub fn proxy_vars(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let direct = "localhost,127.0.0.1,::1".to_owned();
    let mut vars = Vec::new();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        vars.push((name.to_owned(), url.clone()));
        vars.push((name.to_ascii_lowercase(), url.clone()));
    }
    vars.push(("NO_PROXY".to_owned(), direct.clone()));
    vars.push(("no_proxy".to_owned(), direct));
    vars
}

/// The allowed part of `env`.
pub fn filter(env: &[(String, String)], job_names: &[String]) -> Vec<(String, String)> {
    env.iter()
        .filter(|(k, _)| allowed(k, job_names))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_and_job_named_variables_pass() {
        let env: Vec<(String, String)> = [
            ("PATH", "/bin"),
            ("LC_ALL", "C"),
            ("GITHUB_TOKEN", "ghs_x"),
            ("AWS_SECRET_ACCESS_KEY", "k"),
            ("MY_FLAG", "1"),
            ("NPM_X", "2"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let names = vec!["MY_FLAG".to_owned(), "NPM_*".to_owned()];
        let kept: Vec<String> = filter(&env, &names).into_iter().map(|(k, _)| k).collect();
        assert_eq!(kept, ["PATH", "LC_ALL", "MY_FLAG", "NPM_X"]);
    }
}
