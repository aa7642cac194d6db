//! File tools meet rules with their real paths: a symlink inside the workspace that points out
//! of it is not named by a workspace rule (`Write(src/**)`), whichever spelling reaches it, and a
//! path inside `.git` needs a rule that names `.git` (`Edit(**)` is not enough).

use cn_run::permissions::{GIT_INTERNALS_RULE, Permission, Policy, PolicyInput, RuleSpec, Tighten};
use serde_json::json;

fn policy(ws: &std::path::Path, allow: &[&str]) -> Policy {
    let input = PolicyInput {
        job: allow
            .iter()
            .map(|p| RuleSpec::new(*p, Permission::Allow))
            .collect(),
        ..PolicyInput::default()
    };
    Policy::build(input, ws).unwrap()
}

#[test]
fn a_symlink_out_of_the_workspace_is_not_named_by_a_workspace_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(ws.join("src/deep")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("src/link")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("src/deep/up")).unwrap();
    std::os::unix::fs::symlink(outside.join("f.txt"), ws.join("src/file_link")).unwrap();
    let p = policy(&ws, &["Write(src/**)", "Edit(src/**)"]);
    let decide = |tool: &str, path: &str| {
        let key = if tool == "Write" {
            "filepath"
        } else {
            "file_path"
        };
        p.check(tool, &json!({ key: path, "content": "" }), None)
            .permission
    };
    assert_eq!(
        decide("Write", "src/ok.rs"),
        Permission::Allow,
        "the control"
    );
    for path in [
        "src/link/x.sh",
        "src/deep/up/x.sh",
        "src/file_link",
        "./src/link/new/x",
        "src/deep/../link/x",
    ] {
        assert_ne!(decide("Write", path), Permission::Allow, "Write {path}");
        assert_ne!(decide("Edit", path), Permission::Allow, "Edit {path}");
    }
}

#[test]
fn git_internals_need_a_rule_that_names_git() {
    let tmp = tempfile::tempdir().unwrap();
    let git = Tighten {
        permission: Permission::Ask,
        rule: GIT_INTERNALS_RULE,
        reason: "inside .git".to_owned(),
    };
    for broad in ["Edit(**)", "Edit(*/**)", "Write(**)"] {
        let p = policy(tmp.path(), &[broad]);
        for path in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".git/info/attributes",
            "sub/.git/config",
            ".git/modules/x/config",
        ] {
            let tool = if broad.starts_with("Write") {
                "Write"
            } else {
                "Edit"
            };
            let args = json!({ "file_path": path, "filepath": path, "content": "" });
            let d = p.check(tool, &args, Some(git.clone()));
            assert_ne!(d.permission, Permission::Allow, "{broad} {path}: {d:?}");
        }
    }
    let p = policy(tmp.path(), &["Edit(.git/**)"]);
    let d = p.check("Edit", &json!({ "file_path": ".git/config" }), Some(git));
    assert_eq!(d.permission, Permission::Allow, "{d:?}");
}
