//! Every change a run makes is in diff.patch, or named as left out with the reason: file
//! names that are not UTF-8 come out byte for byte (`git apply` of the patch onto the
//! start gives the run's tree exactly), a file cn-run cannot read is listed with why, a
//! git directory that cannot be written and a private-index place that is full are said
//! as such — and the second is passed over, so the diff is still there.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::mounts::{Mount, can_mount};
use crate::support::runner::{cn_run, files_under, git, git_init, run, write_files};

fn job(rest: &str) -> String {
    format!(
        "version: 1\nname: bytes\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: change\npermissions: {{mode: auto, allow: ['Bash(bash changes.sh)']}}\n{rest}"
    )
}

const SCRIPT: &str = "turns:\n  - tool_calls: [{name: Bash, arguments: {command: bash changes.sh}}]\n  - text: changed\n";

/// The result.json of run folder `out`.
fn result_of(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap()
}

fn name(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

/// Files under `dir` (not `.git`, `out`, the job's own) with their bytes, by raw name.
fn tree(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut files: Vec<(Vec<u8>, Vec<u8>)> = files_under(dir)
        .into_iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(dir).ok()?.to_path_buf();
            let first = rel.components().next()?.as_os_str().to_owned();
            let skip = [".git", ".cn-run", "out", "job.yaml", "s.yaml", "changes.sh"];
            (!skip.iter().any(|s| first == OsStr::new(s))).then(|| {
                (
                    rel.as_os_str().as_bytes().to_vec(),
                    std::fs::read(&f).unwrap(),
                )
            })
        })
        .collect();
    files.sort();
    files
}

#[test]
fn file_names_that_are_not_utf8_are_in_the_patch_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // Tracked at the start: a Latin-1 name to modify, one to delete, one kept.
    for (n, body) in [
        (&b"caf\xe9.txt"[..], "old\n"),
        (b"gone \xff.txt", "bye\n"),
        (b"kept\xfe", "k\n"),
    ] {
        std::fs::write(ws.join(name(n)), body).unwrap();
    }
    std::fs::create_dir(ws.join(name(b"d\xe8s"))).unwrap();
    std::fs::write(ws.join(name(b"d\xe8s/inner.txt")), "in\n").unwrap();
    // The run: modify, delete, add files (Latin-1, invalid bytes beside valid UTF-8,
    // a new folder with such a name), rename one.
    let changes = concat!(
        "printf 'new\\n' > \"$(printf 'caf\\351.txt')\"\n",
        "rm \"$(printf 'gone \\377.txt')\"\n",
        "printf 'latin\\n' > \"$(printf 'na\\357ve.txt')\"\n",
        "printf 'mixed\\n' > \"$(printf '\\303\\251t\\351 \\200.txt')\"\n",
        "mkdir \"$(printf 'n\\366u')\"; printf 'x\\n' > \"$(printf 'n\\366u/\\344.txt')\"\n",
        "mv \"$(printf 'd\\350s/inner.txt')\" \"$(printf 'd\\350s/\\304nner.txt')\"\n",
    );
    write_files(
        &ws,
        &[
            ("job.yaml", &job("")),
            ("s.yaml", SCRIPT),
            ("changes.sh", changes),
        ],
    );
    git_init(&ws);
    let start = tmp.path().join("start");
    git(
        tmp.path(),
        &["clone", "-q", ws.to_str().unwrap(), start.to_str().unwrap()],
    );
    let mut cmd = cn_run(&ws);
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&ws.join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let result = result_of(&ws.join("out"));
    assert_eq!(result["diff"]["files"], 7, "{result}");
    // The patch applied to the start gives exactly the run's tree, names byte for byte.
    let patch = ws.join("out/diff.patch");
    git(
        &start,
        &["apply", "--whitespace=nowarn", patch.to_str().unwrap()],
    );
    assert_eq!(tree(&start), tree(&ws));
    assert!(tree(&ws).iter().any(|(n, _)| n == b"na\xefve.txt"));
}

#[test]
fn a_file_the_run_cannot_read_is_named_with_why() {
    if !can_mount("a_file_the_run_cannot_read") {
        return; // (needs root to run the run as another user)
    }
    for locked in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let mode = if locked { "000" } else { "644" };
        let changes = format!(
            "echo secret > new.txt; chmod {mode} new.txt\necho changed > a.txt; chmod {mode} a.txt\necho ok > fine.txt\n"
        );
        let job = job("tools: {bash: {sandbox: off}}\n");
        write_files(
            &ws,
            &[
                ("job.yaml", &job),
                ("s.yaml", SCRIPT),
                ("changes.sh", &changes),
                ("a.txt", "a\n"),
            ],
        );
        git_init(&ws);
        // The run as a user who is not root (root reads any file).
        let status = std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(tmp.path())
            .status()
            .unwrap();
        assert!(status.success());
        let mut cmd = cn_run(&ws);
        std::os::unix::process::CommandExt::uid(&mut cmd, 65534);
        std::os::unix::process::CommandExt::gid(&mut cmd, 65534);
        cmd.args(["job.yaml", "--out", "out"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "locked {locked}: {r:#?}");
        let out = ws.join("out");
        let result = result_of(&out);
        let patch = std::fs::read_to_string(out.join("diff.patch")).unwrap();
        assert!(patch.contains("+ok"), "{patch}");
        let skipped: Vec<(String, String)> = result["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["path"].as_str().unwrap().to_owned(),
                    s["reason"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        if locked {
            for f in ["a.txt", "new.txt"] {
                assert!(
                    skipped.iter().any(|(p, why)| p == f
                        && why.contains("cannot be read")
                        && why.contains("Permission denied")),
                    "{f}: {skipped:?}"
                );
                assert!(
                    patch.contains(&format!("  {f} (cannot be read: Permission denied")),
                    "{patch}"
                );
            }
        } else {
            // Control: readable, both changes are in the patch and nothing is left out.
            assert!(skipped.is_empty(), "{skipped:?}");
            assert!(
                patch.contains("+secret") && patch.contains("+changed"),
                "{patch}"
            );
        }
    }
}

/// A repository in `dir/ws` with `tracked` files besides the job, whose run adds `c.txt`.
fn one_new_file(dir: &Path, tracked: usize) -> PathBuf {
    let ws = dir.join("ws");
    let files = [
        ("job.yaml", job("")),
        ("s.yaml", SCRIPT.to_owned()),
        ("changes.sh", "echo c > c.txt\n".to_owned()),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, b)| (*n, b.as_str())).collect();
    write_files(&ws, &files);
    for i in 0..tracked {
        write_files(&ws, &[(&format!("src/f{i}.txt"), "tracked\n")]);
    }
    git_init(&ws);
    ws
}

#[test]
fn a_git_directory_that_cannot_be_written_is_said_as_such() {
    if !can_mount("a_git_directory_that_cannot_be_written") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ws = one_new_file(tmp.path(), 0);
    let warnings = |out: &str| -> Vec<String> {
        let result = result_of(&ws.join(out));
        result["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_owned())
            .collect()
    };
    {
        let Some(_ro) = Mount::read_only(&ws.join(".git")) else {
            return;
        };
        let mut cmd = cn_run(&ws);
        cmd.args(["job.yaml", "--out", "out"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{r:#?}");
    }
    let said = warnings("out");
    assert!(
        said.iter().any(
            |w| w.contains("the repository's git directory cannot be written")
                && w.contains(".git/objects: Read-only file system")
        ),
        "{said:?}"
    );
    assert!(!said.iter().any(|w| w.contains("target OID")), "{said:?}");
    // Control: writable, the checkpoints and the diff are there.
    std::fs::remove_file(ws.join("c.txt")).unwrap();
    let mut cmd = cn_run(&ws);
    cmd.args(["job.yaml", "--out", "out2"]);
    assert_eq!(run(cmd, None).code, 0);
    assert!(
        warnings("out2")
            .iter()
            .all(|w| !w.contains("checkpoints and diff are off"))
    );
    assert!(
        std::fs::read_to_string(ws.join("out2/diff.patch"))
            .unwrap()
            .contains("+c")
    );
}

#[test]
fn a_full_or_read_only_runtime_dir_is_passed_over_and_the_diff_is_whole() {
    if !can_mount("a_full_or_read_only_runtime_dir") {
        return;
    }
    for read_only in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let ws = one_new_file(tmp.path(), 40);
        let runtime = tmp.path().join("runtime");
        let Some(disk) = Mount::tmpfs(&runtime, "64k") else {
            return;
        };
        disk.fill(0);
        let _ro = if read_only {
            Mount::read_only(&runtime)
        } else {
            None
        };
        let mut cmd = cn_run(&ws);
        cmd.env("XDG_RUNTIME_DIR", &runtime)
            .args(["job.yaml", "--out", "out"]);
        let r = run(cmd, None);
        assert_eq!(r.code, 0, "{r:#?}");
        let result = result_of(&ws.join("out"));
        let said = result["warnings"].to_string();
        assert!(!said.contains("checkpoints and diff are off"), "{said}");
        assert!(!said.contains("no longer exists"), "{said}");
        let patch = std::fs::read_to_string(ws.join("out/diff.patch")).unwrap();
        assert!(
            patch.contains("+++ b/c.txt"),
            "read-only {read_only}: {patch}"
        );
    }
}
