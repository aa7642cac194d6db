//! Running the real cn-run binary in a temp dir and reading what it left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The repository root (where Cargo.toml is).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `cn-run` command with a clean, key-free environment (PATH and HOME kept).
pub fn cn_run(cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cn-run"));
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", cwd)
        .stdin(Stdio::null());
    cmd
}

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// The `--out` folder the test passed (if any).
    pub out: Option<PathBuf>,
}

impl Run {
    pub fn result(&self) -> Value {
        let path = self
            .out
            .as_ref()
            .expect("run had no --out")
            .join("result.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{self:#?}", path.display()));
        serde_json::from_str(&text).unwrap()
    }

    pub fn events(&self) -> Vec<Value> {
        let path = self
            .out
            .as_ref()
            .expect("run had no --out")
            .join("events.jsonl");
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Events of one type.
    pub fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["type"] == kind)
            .collect()
    }
}

/// Run `cmd`, appending `--out OUT` when `out` is given.
pub fn run(mut cmd: Command, out: Option<&Path>) -> Run {
    if let Some(o) = out {
        cmd.arg("--out").arg(o);
    }
    let output = cmd.output().expect("spawn cn-run");
    if let Some(o) = out {
        super::outputs_replay::assert_replays(o);
        assert_no_checkout_refs(o);
    }
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        out: out.map(Path::to_path_buf),
    }
}

/// The folder of the run made in `workspace` without `--out` (`.cn-run/<run-id>`; the
/// first one found when there are several).
pub fn run_folder(workspace: &Path) -> PathBuf {
    let folder = std::fs::read_dir(workspace.join(".cn-run"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("a run folder");
    super::outputs_replay::assert_replays(&folder);
    folder
}

/// Makes `dir` the repository that a run in a non-git folder below it finds: an empty one
/// that ignores every file. A temp dir inside the checkout (under target/) would otherwise
/// find the checkout's own repository, snapshot it and leave `refs/cn-run/*` there; with
/// this the run sees what it saw before (its files ignored, nothing to snapshot) in a
/// repository of its own.
pub fn own_repo_boundary(dir: &Path) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join(".git/info/exclude"), "*\n").unwrap();
}

/// The checkout's own git folder for shared refs (a worktree's common dir).
fn checkout_common_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let root = repo_root();
        let dir = Command::new("git")
            .args(["rev-parse", "--git-common-dir"])
            .current_dir(&root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        root.join(dir)
    })
}

/// Fails when the run of `out` left checkpoint refs in the checkout's own repository (a
/// test whose workspace has no repository of its own inside the checkout: see
/// [`own_repo_boundary`]). New refs are loose files, so one `stat` per run tells.
fn assert_no_checkout_refs(out: &Path) {
    let Some(id) = std::fs::read_to_string(out.join("result.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|r| r["run_id"].as_str().map(str::to_owned))
    else {
        return;
    };
    let refs = checkout_common_dir().join("refs/cn-run").join(&id);
    assert!(
        !refs.exists(),
        "run {id} made checkpoints in the checkout's own repository ({}): give the test a \
         workspace outside the checkout or a repository of its own (runner::own_repo_boundary)",
        refs.display()
    );
}

/// Write `files` (path, content) under `dir`.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

/// Runs `git` in `dir` as a test identity, ignoring the machine's git configuration, and
/// returns its stdout; a failing command fails the test with git's message.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(["-c", "init.defaultBranch=main", "-c", "core.autocrlf=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Make `dir` a git repository with everything committed.
pub fn git_init(dir: &Path) {
    let git = |args: &[&str]| git(dir, args);
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "start", "--allow-empty"]);
}

/// The session a run folder holds (session.jsonl folded back, in the shape of the
/// whole-file session.json of earlier versions: `history`, `state`, `in_flight`, …).
pub fn session_of(run_dir: &Path) -> Value {
    let path = run_dir.join("session.jsonl");
    let s =
        cn_run::session::Session::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::to_value(s).unwrap()
}

/// Every file under `dir`, recursively (none when `dir` is not there).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Bytes under the `.git/objects` of the repository in `ws`.
pub fn git_objects_bytes(ws: &Path) -> u64 {
    files_under(&ws.join(".git/objects"))
        .iter()
        .map(|f| f.metadata().unwrap().len())
        .sum()
}

/// Runs cn-run with `args` in `dir` where bubblewrap cannot start, as on a runner whose
/// kernel refuses unprivileged user namespaces (Ubuntu 24.04's AppArmor): inside a user
/// namespace that allows no further ones, every capability dropped (util-linux `unshare`
/// and `setpriv`), with `env` added. None (said on stderr) where that cannot be set up here.
pub fn without_user_namespaces(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Option<Run> {
    let script = format!(
        "echo 0 > /proc/sys/user/max_user_namespaces && \
         exec setpriv --bounding-set=-all --inh-caps=-all '{}' \"$@\"",
        env!("CARGO_BIN_EXE_cn-run")
    );
    let out = Command::new("unshare")
        .args(["-U", "-r", "sh", "-c", &script, "sh"])
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .ok()?;
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        out: None,
    };
    if !r.stderr.contains("cn-run") && !r.stderr.contains('[') && r.stdout.is_empty() {
        eprintln!(
            "SKIPPED (no unshare/setpriv or user namespaces): {}",
            r.stderr
        );
        return None;
    }
    Some(r)
}

/// A scripted job (`job.yaml` named `name`, prompt `prompt`, script `s.yaml`, `a.txt`
/// holding `a`) run in `dir` (a git repository) with `extra` flags, its folder `dir/out`.
pub fn run_scripted(
    dir: &Path,
    name: &str,
    prompt: &str,
    job_rest: &str,
    script: &str,
    extra: &[&str],
) -> Run {
    let job = format!(
        "version: 1\nname: {name}\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: {prompt}\n{job_rest}"
    );
    write_files(
        dir,
        &[("job.yaml", &job), ("s.yaml", script), ("a.txt", "a\n")],
    );
    if !dir.join(".git").exists() {
        git_init(dir);
    }
    let mut cmd = cn_run(dir);
    cmd.arg("job.yaml").args(extra);
    run(cmd, Some(&dir.join("out")))
}

/// `jobs` scripted jobs (`job<n>` answering `job <n> done`) run with `--parallel` in
/// `dir` (made a git repository), into `dir/out`; their run folders, sorted.
pub fn run_parallel_jobs(dir: &Path, jobs: usize) -> Vec<PathBuf> {
    let mut names = Vec::new();
    for n in 1..=jobs {
        let job = format!(
            "version: 1\nname: job{n}\nmodel: {{provider: script, name: m, script: s{n}.yaml}}\nprompt: p\n"
        );
        let script = format!("turns:\n  - text: job {n} done\n");
        write_files(
            dir,
            &[
                (&format!("job{n}.yaml"), &job),
                (&format!("s{n}.yaml"), &script),
            ],
        );
        names.push(format!("job{n}.yaml"));
    }
    git_init(dir);
    let mut cmd = cn_run(dir);
    cmd.arg("--parallel").arg(jobs.to_string()).args(&names);
    let r = run(cmd, Some(&dir.join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("events.jsonl").is_file())
        .collect();
    folders.sort();
    assert_eq!(folders.len(), jobs);
    folders
}
