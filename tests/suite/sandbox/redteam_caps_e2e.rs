//! Red-team round (issue 29, capabilities): powers the first round did not try. As root in
//! the run's sandbox: become another user (`setpriv`, python's and perl's `setuid`) to read
//! that user's file, make a workspace file immutable
//! (`chattr +i`, which the workflow's cleanup then cannot remove), give a workspace binary
//! file capabilities (`setcap`) for a later step to run. As an ordinary user: run a
//! setuid-root binary and a binary with file capabilities that the machine has, to read a
//! root-only file. As either: leave a setuid or setgid shell (or `su`) in the workspace for
//! whoever runs it after the run (python, perl, `install -m`, `open` with the mode, `cp -p`,
//! `tar xp`). Each payload first proves it ran (`ran-TAG`); the outside secrets are in
//! no output. The controls run the same payloads uncontained and each has its effect.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::containment_scene::{Scene, User, bash, user_available};

/// Another user's (not root's, not the test's) file outside the workspace.
const OTHER: u32 = 4322;
const OTHER_SECRET: &str = "SECRET-rt-other-5b1e";
/// A root-only file outside the workspace.
const ROOT_SECRET: &str = "SECRET-rt-rootonly-7c2f";

fn put(path: &Path, text: &str, mode: u32, owner: u32) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    std::os::unix::fs::chown(path, Some(owner), Some(owner)).unwrap();
}

/// The planted files, in a root-owned folder of their own (a run as `nobody` is given the
/// scene's folders): the other user's and root's secrets, a setuid-root and a
/// file-capable copy of `cat` (what a machine may have); in the workspace a
/// world-writable drop folder and a file to make immutable.
fn plant(s: &Scene) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = dir.path();
    std::fs::set_permissions(out, std::fs::Permissions::from_mode(0o755)).unwrap();
    put(&out.join("other"), OTHER_SECRET, 0o600, OTHER);
    put(&out.join("rootonly"), ROOT_SECRET, 0o600, 0);
    let suid = out.join("suid-cat");
    std::fs::copy("/bin/cat", &suid).unwrap();
    std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let fcap = out.join("fcap-cat");
    std::fs::copy("/bin/cat", &fcap).unwrap();
    let ok = Command::new("setcap")
        .arg("cap_dac_read_search+ep")
        .arg(&fcap)
        .status()
        .unwrap();
    assert!(ok.success());
    let drop = s.ws.join("drop");
    std::fs::create_dir_all(&drop).unwrap();
    std::fs::set_permissions(&drop, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(s.ws.join("immutable"), "x\n").unwrap();
    dir
}

/// (tag, command) for `user`.
fn cases(s: &Scene, out: &Path, user: User) -> Vec<(&'static str, String)> {
    let (ws, out) = (s.ws(), out.display().to_string());
    let other = format!("{out}/other");
    match user {
        User::Root => [
            (
                "setpriv",
                format!(
                    "setpriv --reuid={OTHER} --regid={OTHER} --clear-groups cat {other} > {ws}/drop/got-setpriv"
                ),
            ),
            (
                "py-setuid",
                format!(
                    "python3 -c \"import os;os.setgid({OTHER});os.setuid({OTHER});open('{ws}/drop/got-py-setuid','w').write(open('{other}').read())\""
                ),
            ),
            (
                "perl-setuid",
                format!(
                    "perl -e '$( = $) = {OTHER}; $< = $> = {OTHER}; open(F, \"<\", \"{other}\") or die; open(O, \">\", \"{ws}/drop/got-perl-setuid\"); print O <F>'"
                ),
            ),
            ("chattr", format!("chattr +i {ws}/immutable")),
            (
                "setcap",
                format!("cp /bin/cat {ws}/capcat && setcap cap_dac_read_search+ep {ws}/capcat"),
            ),
        ]
        .into_iter()
        .chain(setid_cases(&ws, true))
        .collect(),
        User::Nobody => [
            (
                "suid",
                format!("{out}/suid-cat {out}/rootonly > {ws}/drop/got-suid"),
            ),
            (
                "fcap",
                format!("{out}/fcap-cat {out}/rootonly > {ws}/drop/got-fcap"),
            ),
        ]
        .into_iter()
        .chain(setid_cases(&ws, false))
        .collect(),
    }
}

/// Payloads that leave a setuid or setgid copy of a shell (or of `su`) in the workspace,
/// for whoever runs it after the run; each names its file after its tag. `chmod` itself
/// the evaluator refuses with those bits, so other programs set them.
fn setid_cases(ws: &str, root: bool) -> Vec<(&'static str, String)> {
    let py_chmod = |tag: &str, mode: &str| {
        format!("cp /bin/sh {ws}/{tag} && python3 -c \"import os;os.chmod('{ws}/{tag}',{mode})\"")
    };
    let mut v = vec![
        ("suid-python", py_chmod("suid-python", "0o4755")),
        ("sgid-python", py_chmod("sgid-python", "0o2755")),
        (
            "suid-perl",
            format!("cp /bin/sh {ws}/suid-perl && perl -e 'chmod 04755, \"{ws}/suid-perl\"'"),
        ),
        (
            "suid-install",
            format!("install -m 4755 /bin/sh {ws}/suid-install"),
        ),
        (
            "suid-creat",
            format!(
                "python3 -c \"import os;os.close(os.open('{ws}/suid-creat',os.O_CREAT|os.O_WRONLY,0o4755))\""
            ),
        ),
    ];
    if root {
        v.extend([
            ("suid-cp-p", format!("cp -p /usr/bin/su {ws}/suid-cp-p")),
            (
                "suid-tar",
                format!(
                    "tar cf /tmp/t.tar -C /usr/bin su && mkdir -p {ws}/t && tar xpf /tmp/t.tar -C {ws}/t && mv {ws}/t/su {ws}/suid-tar"
                ),
            ),
        ]);
    }
    v
}

/// The tags whose payload had its effect.
fn effects(s: &Scene) -> Vec<String> {
    let mut done: Vec<String> = std::fs::read_dir(s.ws.join("drop"))
        .unwrap()
        .flatten()
        .filter(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            text.contains(OTHER_SECRET) || text.contains(ROOT_SECRET)
        })
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_start_matches("got-")
                .to_owned()
        })
        .collect();
    let attrs = Command::new("lsattr")
        .arg(s.ws.join("immutable"))
        .output()
        .unwrap();
    let flags = String::from_utf8_lossy(&attrs.stdout);
    if flags
        .split_whitespace()
        .next()
        .is_some_and(|f| f.contains('i'))
    {
        done.push("chattr".to_owned());
        // Let the test's folder be removed.
        let _ = Command::new("chattr")
            .arg("-i")
            .arg(s.ws.join("immutable"))
            .status();
    }
    let caps = Command::new("getcap")
        .arg(s.ws.join("capcat"))
        .output()
        .unwrap();
    if String::from_utf8_lossy(&caps.stdout).contains("cap_dac_read_search") {
        done.push("setcap".to_owned());
    }
    for (tag, _) in setid_cases("", true) {
        let mode = std::fs::metadata(s.ws.join(tag)).map_or(0, |m| m.permissions().mode());
        if mode & 0o6000 != 0 {
            done.push(tag.to_owned());
        }
    }
    done.sort();
    done
}

fn run_as(user: User, extra: &str) -> Option<(Scene, Vec<String>, Vec<String>)> {
    if !user_available(user) {
        return None;
    }
    let s = Scene::for_user(user, &[]);
    let planted = plant(&s);
    let cases = cases(&s, planted.path(), user);
    let calls: Vec<Value> = cases
        .iter()
        .map(|(t, c)| bash(&format!("touch '{}/ran-{t}'; {c}", s.ws())))
        .collect();
    let r = s.run(&calls, extra);
    assert_eq!(r.code, 0, "{}", s.transcript(&r));
    for (t, _) in &cases {
        assert!(
            s.ws.join(format!("ran-{t}")).exists(),
            "{t} did not run\n{}",
            s.transcript(&r)
        );
    }
    if !extra.contains("sandbox: off") {
        s.assert_contained(&r);
        s.assert_in_no_output(&[OTHER_SECRET, ROOT_SECRET], &r);
    }
    let mut want: Vec<String> = cases.iter().map(|(t, _)| (*t).to_owned()).collect();
    want.sort();
    let got = effects(&s);
    Some((s, got, want))
}

#[test]
fn root_commands_cannot_become_another_user_or_mark_files_for_later() {
    let Some((s, got, _)) = run_as(User::Root, "") else {
        return;
    };
    assert_eq!(got, Vec::<String>::new(), "{}", s.tool_outputs());
}

#[test]
fn an_ordinary_users_commands_gain_nothing_from_setuid_or_file_capabilities() {
    let Some((s, got, _)) = run_as(User::Nobody, "") else {
        return;
    };
    assert_eq!(got, Vec::<String>::new(), "{}", s.tool_outputs());
}

#[test]
fn control_uncontained_every_payload_has_its_effect() {
    for user in [User::Root, User::Nobody] {
        let Some((s, got, want)) = run_as(user, "tools: {bash: {sandbox: off}}\n") else {
            continue;
        };
        assert_eq!(got, want, "{user:?}: {}", s.tool_outputs());
    }
}
