//! The checkpointer never reads through a folder swapped for a symlink: a tracked folder
//! replaced by a link to an outside credential folder (the `~/.config/gh` shape) leaves the
//! outside token out of every checkpoint, diff.patch and the repository's objects; the
//! folder counts as deleted, as git itself would say. The control: the link does reach the
//! token, so a snapshot that followed it would store it.

use serde_json::json;

use crate::support::runner::{cn_run, git, git_init, run, write_files};

const TOKEN: &str = "gho_CheckpointLinkTokenPlanted42";

#[test]
fn a_folder_swapped_for_a_link_out_of_the_tree_is_never_snapshotted() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, gh) = (root.join("ws"), root.join("home/.config/gh"));
    std::fs::create_dir_all(&gh).unwrap();
    std::fs::write(gh.join("hosts.yml"), format!("oauth_token: {TOKEN}\n")).unwrap();
    write_files(
        &ws,
        &[
            ("cfg/hosts.yml", "placeholder: true\n"),
            ("cfg/deep/x.yml", "x: 1\n"),
            (".gitignore", "out/\njob.yaml\ns.json\n"),
        ],
    );
    git_init(&ws);
    let swap = format!("rm -rf cfg && ln -s {} cfg", gh.display());
    let script = json!({"turns": [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": swap}}]},
        {"tool_calls": [{"name": "Write", "arguments": {"filepath": "a.txt", "content": "a\n"}}]},
        {"text": "done"}
    ]})
    .to_string();
    let job = "version: 1\nname: links\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\ntools: {bash: {sandbox: off}}\ngit: {checkpoints: true}\n";
    write_files(&ws, &[("job.yaml", job), ("s.json", &script)]);
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml").arg("--auto");
    let r = run(cmd, Some(&ws.join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let patch = std::fs::read_to_string(ws.join("out/diff.patch")).unwrap();
    assert!(
        !patch.contains(TOKEN),
        "the token is in diff.patch:\n{patch}"
    );
    assert!(patch.contains("deleted file mode"), "{patch}");
    let history = git(&ws, &["log", "--all", "-p", "--format=%H"]);
    assert!(!history.contains(TOKEN), "the token is in a checkpoint");
    // The control: the link reaches the token.
    let through = std::fs::read_to_string(ws.join("cfg/hosts.yml")).unwrap();
    assert!(through.contains(TOKEN));
}

#[test]
fn a_rollback_through_a_folder_swapped_for_a_link_touches_nothing_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, outside) = (root.join("ws"), root.join("outside"));
    std::fs::create_dir_all(&outside).unwrap();
    for f in ["new.txt", "hosts.yml", "other.txt"] {
        std::fs::write(outside.join(f), format!("outside {f}\n")).unwrap();
    }
    write_files(
        &ws,
        &[
            ("cfg/hosts.yml", "inside\n"),
            (".gitignore", "out/\njob.yaml\ns.json\n"),
        ],
    );
    git_init(&ws);
    let swap = format!("mv cfg cfg.real && ln -s {} cfg", outside.display());
    let script = json!({"turns": [
        {"tool_calls": [{"name": "Write", "arguments": {"filepath": "cfg/new.txt", "content": "made in the run\n"}}]},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": swap}}]},
        {"text": "done"}
    ]})
    .to_string();
    let job = "version: 1\nname: links\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\ntools: {bash: {sandbox: off}}\ngit: {checkpoints: true, rollback_on_failure: true}\nchecks: [{name: fails, run: 'false'}]\n";
    write_files(&ws, &[("job.yaml", job), ("s.json", &script)]);
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml").arg("--auto");
    let r = run(cmd, Some(&ws.join("out")));
    assert_eq!(r.code, 1, "{r:#?}");
    for f in ["new.txt", "hosts.yml", "other.txt"] {
        let text = std::fs::read_to_string(outside.join(f)).unwrap_or_default();
        assert_eq!(
            text,
            format!("outside {f}\n"),
            "{f} outside was changed by the rollback"
        );
    }
    // The rollback put the folder back as it was at the start.
    assert!(ws.join("cfg").symlink_metadata().unwrap().is_dir());
    assert_eq!(
        std::fs::read_to_string(ws.join("cfg/hosts.yml")).unwrap(),
        "inside\n"
    );
    // The control: through such a link, a removal by name lands outside.
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    std::fs::remove_file(root.join("link/other.txt")).unwrap();
    assert!(!outside.join("other.txt").exists());
}

/// A swapper that, until stopped, replaces the folder `cfg` of `ws` by a link to `outside`
/// and puts it back, in a tight loop.
fn swapper(
    ws: &std::path::Path,
    outside: &std::path::Path,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let (cfg, real, outside) = (ws.join("cfg"), ws.join("cfg.real"), outside.to_path_buf());
    std::thread::spawn(move || {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            if std::fs::rename(&cfg, &real).is_ok() {
                let _ = std::os::unix::fs::symlink(&outside, &cfg);
                std::thread::yield_now();
                let _ = std::fs::remove_file(&cfg);
                let _ = std::fs::rename(&real, &cfg);
            }
        }
    })
}

/// Whether any object of the repository at `ws` holds `needle`.
fn any_object_holds(ws: &std::path::Path, needle: &str) -> bool {
    let repo = git2::Repository::open(ws).unwrap();
    let odb = repo.odb().unwrap();
    let mut ids = Vec::new();
    odb.foreach(|id| {
        ids.push(*id);
        true
    })
    .unwrap();
    ids.iter().any(|id| {
        odb.read(*id).is_ok_and(|o| {
            o.data()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
        })
    })
}

/// A race tree: `ws/cfg/hosts.yml` tracked, the token in `outside/hosts.yml`.
fn race_tree() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, outside) = (root.join("ws"), root.join("outside"));
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("hosts.yml"), format!("oauth_token: {TOKEN}\n")).unwrap();
    std::fs::write(outside.join("other.yml"), format!("second: {TOKEN}\n")).unwrap();
    write_files(
        &ws,
        &[
            ("cfg/hosts.yml", "placeholder: 0\n"),
            ("cfg/other.yml", "o\n"),
        ],
    );
    git_init(&ws);
    (tmp, ws, outside)
}

/// The checkpointer reads a file through the descriptors it checked: while another thread
/// swaps the folder for a link to the token's folder in a tight loop, 600 snapshots (of
/// the named files and of the whole tree) put the token in no object, no checkpoint and
/// no patch. Fails without `checkpoint::beneath` (libgit2 read the file by path after the
/// check); the control below shows the same race reaches the token that way.
#[test]
fn a_folder_swapped_in_a_tight_loop_never_brings_an_outside_file_into_a_snapshot() {
    use cn_run::checkpoint::{Checkpointer, GitCheckpointer};
    let (_tmp, ws, outside) = race_tree();
    let cp = GitCheckpointer::start(&ws, "race", &[]).unwrap().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swap = swapper(&ws, &outside, stop.clone());
    let named = [
        std::path::PathBuf::from("cfg/hosts.yml"),
        std::path::PathBuf::from("cfg/other.yml"),
    ];
    for i in 0..600 {
        let _ = if i % 10 == 0 {
            cp.checkpoint("scan")
        } else {
            cp.checkpoint_paths("named", &named)
        };
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swap.join().unwrap();
    let _ = cp.checkpoint("end");
    let (patch, _) = cp.patch_since_start(false).unwrap();
    assert!(!String::from_utf8_lossy(&patch).contains(TOKEN));
    let history = git(&ws, &["log", "--all", "-p", "--format=%H"]);
    assert!(!history.contains(TOKEN), "the token is in a checkpoint");
    assert!(!any_object_holds(&ws, TOKEN), "the token is in an object");
}

/// The control: a check of the folder and then libgit2's read by path, with the swap
/// falling between the two (placed there, not raced), stores the token.
#[test]
fn control_a_check_then_a_read_by_path_stores_the_token_when_the_swap_falls_between() {
    let (_tmp, ws, outside) = race_tree();
    let repo = git2::Repository::open(&ws).unwrap();
    let mut index = repo.index().unwrap();
    let checked = std::fs::symlink_metadata(ws.join("cfg")).is_ok_and(|m| m.is_dir());
    assert!(checked);
    std::fs::rename(ws.join("cfg"), ws.join("cfg.real")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("cfg")).unwrap();
    index
        .add_path(std::path::Path::new("cfg/hosts.yml"))
        .unwrap();
    assert!(
        any_object_holds(&ws, TOKEN),
        "add_path did not follow the link"
    );
}
