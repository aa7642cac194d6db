//! The stage for the containment tests: a workspace, a fake `$HOME` with planted
//! credentials, two places outside the workspace a payload tries to write (one under the
//! host's `/tmp`, one elsewhere), a scripted model, and a check of every output afterwards.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::runner::{Run, cn_run, own_repo_boundary, run};

/// Credentials planted in the fake `$HOME`: (path under it, the secret inside).
pub(crate) const CREDENTIALS: &[(&str, &str)] = &[
    (".ssh/id_ed25519", "SECRET-ssh-key-7f3a"),
    (".aws/credentials", "SECRET-aws-9b1c"),
    (".netrc", "SECRET-netrc-2d4e"),
    (".git-credentials", "SECRET-gitcred-5a6b"),
    (".config/gh/hosts.yml", "SECRET-gh-8c9d"),
    (".docker/config.json", "SECRET-docker-1e2f"),
];

/// A value planted in cn-run's own environment under a name no redaction rule knows, so
/// only containment can keep it out of the outputs.
pub(crate) const PLANTED: &str = "planted-env-value-4c17e9";
/// A provider-key-like variable planted too.
pub(crate) const PLANTED_KEY: &str = "sk-planted-key-0a9b8c7d";

pub(crate) struct Scene {
    _base: tempfile::TempDir,
    _host_tmp: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) home: PathBuf,
    /// Outside the workspace, not under any temporary folder.
    pub(crate) outside: PathBuf,
    /// Outside the workspace, under the host's /tmp.
    pub(crate) host_tmp: PathBuf,
    pub(crate) out: PathBuf,
    base: PathBuf,
    /// `Some(groups)`: cn-run runs as the ordinary user `nobody` with these supplementary
    /// groups (see [`Scene::as_nobody`]).
    nobody: Option<Vec<u32>>,
}

/// Who runs cn-run in a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum User {
    Root,
    /// `nobody` (65534), an ordinary user.
    Nobody,
}

/// Whether tests can run cn-run as `user` here (root: bubblewrap makes namespaces; nobody:
/// see [`nobody_available`]); prints why not.
pub(crate) fn user_available(user: User) -> bool {
    match user {
        User::Root => rustix::process::geteuid().is_root() && namespaces_available(),
        User::Nobody => nobody_available(),
    }
}

/// Whether cn-run can run as `nobody` here with an unprivileged bubblewrap (needs root to
/// change user); prints why not.
pub(crate) fn nobody_available() -> bool {
    let ok = rustix::process::geteuid().is_root()
        && namespaces_available()
        && Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .args(["bwrap", "--unshare-net", "--ro-bind", "/", "/", "true"])
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: needs root to become nobody, and bubblewrap for an ordinary user");
    }
    ok
}

/// Whether bubblewrap can make the namespaces the profile needs here; prints why not.
pub(crate) fn namespaces_available() -> bool {
    let ok = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net"])
        .args(["--proc", "/proc", "--dev", "/dev", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "SKIPPED: bubblewrap cannot create namespaces here (not installed, or user namespaces refused)"
        );
    }
    ok
}

impl Scene {
    pub(crate) fn new() -> Scene {
        let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let host_tmp = tempfile::Builder::new()
            .prefix("cn-run-escape-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = base.path().canonicalize().unwrap();
        // Inside the checkout (target/tmp): a repository of the scene's own, so runs do
        // not snapshot the checkout or leave refs/cn-run/* in it.
        own_repo_boundary(&root);
        let dirs = ["ws", "home", "outside"].map(|d| root.join(d));
        for d in &dirs {
            std::fs::create_dir_all(d).unwrap();
        }
        let [ws, home, outside] = dirs;
        for (path, secret) in CREDENTIALS {
            let p = home.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("token = {secret}\n")).unwrap();
        }
        Scene {
            ws,
            home,
            outside,
            host_tmp: host_tmp.path().canonicalize().unwrap(),
            out: root.join("out"),
            base: root,
            _base: base,
            _host_tmp: host_tmp,
            nobody: None,
        }
    }

    /// A scene whose runs are `user`'s (`nobody` with `groups` besides its own).
    pub(crate) fn for_user(user: User, groups: &[u32]) -> Scene {
        let mut s = Scene::new();
        if user == User::Nobody {
            s.nobody = Some(groups.to_vec());
        }
        s
    }

    /// A shell command that proves it ran (`ran-TAG` in the workspace) and tries to write
    /// `TAG` in both outside places.
    pub(crate) fn payload(&self, tag: &str) -> String {
        format!(
            "touch '{ws}/ran-{tag}'; echo {tag} > '{o}/{tag}'; echo {tag} > '{t}/{tag}'",
            ws = self.ws.display(),
            o = self.outside.display(),
            t = self.host_tmp.display(),
        )
    }

    /// Run cn-run with the job `extra` (YAML lines after the basics) and a script of one
    /// tool call per turn, then a final answer. The default policy, plus `mode: auto` so
    /// the commands really run and only containment stands in their way.
    pub(crate) fn run(&self, calls: &[Value], extra: &str) -> Run {
        self.run_with(calls, extra, &[])
    }

    /// [`Scene::run`] with more command-line arguments.
    pub(crate) fn run_with(&self, calls: &[Value], extra: &str, args: &[&str]) -> Run {
        let turns: Vec<Value> = calls.iter().map(|c| json!({"tool_calls": [c]})).collect();
        run(self.command(turns, extra, args), Some(&self.out))
    }

    /// The cn-run command of [`Scene::run_with`] for these model `turns` (a final answer
    /// is added), not started.
    pub(crate) fn command(&self, mut turns: Vec<Value>, extra: &str, args: &[&str]) -> Command {
        turns.push(json!({"text": "done"}));
        let script = self.base.join("script.yaml");
        std::fs::write(&script, json!({ "turns": turns }).to_string()).unwrap();
        let job = format!(
            "version: 1\nmodel: {{provider: script, name: m, script: '{}'}}\nprompt: go\n\
             permissions: {{mode: auto}}\n{extra}",
            script.display()
        );
        let job_path = self.base.join("job.yaml");
        std::fs::write(&job_path, job).unwrap();
        let mut cmd = match &self.nobody {
            None => cn_run(&self.ws),
            Some(groups) => self.as_nobody(groups),
        };
        cmd.arg(&job_path)
            .args(args)
            .arg("-C")
            .arg(&self.ws)
            .env("HOME", &self.home)
            // The scene lies inside the checkout: an uncontained git command in a workspace
            // whose `.git` a payload moved must not find the checkout's repository.
            .env("GIT_CEILING_DIRECTORIES", &self.base)
            .env("CN_RUN_TEST_PLANTED", PLANTED)
            .env("OPENAI_API_KEY", PLANTED_KEY);
        for var in ["RUSTUP_HOME", "CARGO_HOME"] {
            if let Some(v) = std::env::var_os(var) {
                cmd.env(var, v);
            }
        }
        cmd
    }

    /// cn-run as `nobody` with `groups`, every file of the scene given to it first.
    fn as_nobody(&self, groups: &[u32]) -> Command {
        let chown = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(&self.base)
            .status()
            .unwrap();
        assert!(chown.success());
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534"]);
        match groups {
            [] => cmd.arg("--clear-groups"),
            g => cmd.arg(format!(
                "--groups={}",
                g.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
            )),
        };
        cmd.arg("--")
            .arg(env!("CARGO_BIN_EXE_cn-run"))
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// The output of every tool call of the last run, in order.
    pub(crate) fn tool_outputs(&self) -> String {
        let events = std::fs::read_to_string(self.out.join("events.jsonl")).unwrap_or_default();
        events
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == "tool.finished")
            .map(|e| e["output"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Assert the run contained its commands with the whole profile.
    pub(crate) fn assert_contained(&self, r: &Run) {
        let sandbox = &r.result()["sandbox"];
        assert_eq!(sandbox["mechanism"], "bubblewrap", "{sandbox}\n{r:#?}");
        assert_eq!(sandbox["missing"], json!([]), "{sandbox}");
    }

    /// Assert every payload `tags` ran (inside) and none wrote outside.
    pub(crate) fn assert_ran_but_wrote_nothing_outside(&self, tags: &[&str], r: &Run) {
        for tag in tags {
            assert!(
                self.ws.join(format!("ran-{tag}")).exists(),
                "payload {tag} did not run, so this case proves nothing\n{}",
                self.transcript(r)
            );
        }
        self.assert_nothing_outside(r);
    }

    /// Assert nothing was written in either outside place.
    pub(crate) fn assert_nothing_outside(&self, r: &Run) {
        for dir in [&self.outside, &self.host_tmp] {
            let found: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            assert!(
                found.is_empty(),
                "written outside: {found:?}\n{}",
                self.transcript(r)
            );
        }
    }

    /// Every byte the run left: stdout, stderr, the output folder and the workspace.
    pub(crate) fn all_output(&self, r: &Run) -> String {
        let mut text = format!("{}\n{}\n", r.stdout, r.stderr);
        for dir in [&self.out, &self.ws] {
            for entry in walk(dir) {
                text.push_str(&String::from_utf8_lossy(
                    &std::fs::read(entry).unwrap_or_default(),
                ));
            }
        }
        text
    }

    /// Assert none of `secrets` appears in any output.
    pub(crate) fn assert_in_no_output(&self, secrets: &[&str], r: &Run) {
        let all = self.all_output(r);
        for s in secrets {
            assert!(!all.contains(s), "{s} leaked\n{}", self.transcript(r));
        }
    }

    /// The tool results of the run, for failure messages.
    pub(crate) fn transcript(&self, r: &Run) -> String {
        let session = std::fs::read_to_string(self.out.join("session.jsonl")).unwrap_or_default();
        format!("stderr:\n{}\nsession:\n{session}", r.stderr)
    }

    /// The job file of the last run.
    pub(crate) fn job_path(&self) -> PathBuf {
        self.base.join("job.yaml")
    }

    /// The workspace path as a string.
    pub(crate) fn ws(&self) -> String {
        self.ws.display().to_string()
    }
}

/// A Bash tool call.
pub(crate) fn bash(command: &str) -> Value {
    json!({"name": "Bash", "arguments": {"command": command}})
}

/// A Write tool call (a file the model writes, relative to the workspace).
pub(crate) fn write(path: &str, content: &str) -> Value {
    json!({"name": "Write", "arguments": {"filepath": path, "content": content}})
}

/// Every file beneath `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => files.push(p),
                _ => {}
            }
        }
    }
    files
}
