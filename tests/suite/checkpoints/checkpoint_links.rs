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
