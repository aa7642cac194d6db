//! Every way a run can fail to start, and the outcome class it is given.

use super::super::extensions::McpConfigError;
use super::super::resume_moved::MoveError;
use super::super::setup::ModelSettingError;
use super::*;
use crate::job::Problem;
use crate::session::SessionError;
use crate::store::StoreError;

fn moved(e: MoveError) -> RunError {
    RunError::Moved(e)
}

fn io(kind: std::io::ErrorKind) -> std::io::Error {
    std::io::Error::new(kind, "refused")
}

fn session(e: SessionError) -> RunError {
    RunError::Session(e)
}

fn json_error() -> serde_json::Error {
    serde_json::from_str::<u8>("x").unwrap_err()
}

/// One value of every variant; the `match` fails to compile when a variant is added, so a
/// new failure cannot be left out of this walk.
fn every_variant() -> Vec<(RunError, Status)> {
    let all = vec![
        (
            RunError::Job(JobError::Invalid(vec![Problem {
                file: "job.yaml".into(),
                line: 3,
                column: 1,
                field: "limits".into(),
                message: "bad".into(),
            }])),
            Status::Invalid,
        ),
        (
            RunError::Usage("--allow: no such tool".into()),
            Status::Invalid,
        ),
        (
            RunError::ModelSetting(ModelSettingError::UnsetKey {
                name: "MY_KEY".into(),
            }),
            Status::Invalid,
        ),
        (
            RunError::ModelSetting(ModelSettingError::UnsetHeader {
                header: "X-Team".into(),
                var: "TEAM".into(),
            }),
            Status::Invalid,
        ),
        (
            RunError::Config(crate::config::ConfigError::Flag(
                "--timeout: `soon` is not a duration".into(),
            )),
            Status::Invalid,
        ),
        (
            RunError::Config(crate::config::ConfigError::Policy(
                "permissions file perms.yaml: not found".into(),
            )),
            Status::Invalid,
        ),
        (
            RunError::Config(crate::config::ConfigError::Workspace {
                path: "/nope".into(),
                source: io(std::io::ErrorKind::NotFound),
            }),
            Status::Invalid,
        ),
        (
            RunError::Config(crate::config::ConfigError::BaseRef(
                crate::repo_files::BaseRefError::Bare,
            )),
            Status::Invalid,
        ),
        (
            RunError::Mcp(McpConfigError::Unset {
                name: "TOKEN".into(),
            }),
            Status::Invalid,
        ),
        (
            RunError::run_folder(Path::new("/x"), io(std::io::ErrorKind::PermissionDenied)),
            Status::InternalError,
        ),
        (
            RunError::RunFiles {
                path: "/out/events.jsonl".into(),
                source: io(std::io::ErrorKind::IsADirectory),
            },
            Status::InternalError,
        ),
        (
            RunError::Workspace(crate::run::workspace::WorkspaceError::Copy {
                path: "/w/a".into(),
                source: io(std::io::ErrorKind::StorageFull),
            }),
            Status::InternalError,
        ),
        (
            RunError::Worktree {
                job: "j".into(),
                source: WorktreeError::NoRepository("/w".into()),
            },
            Status::Invalid,
        ),
        (
            RunError::Worktree {
                job: "j".into(),
                source: WorktreeError::Io(io(std::io::ErrorKind::NotADirectory)),
            },
            Status::InternalError,
        ),
        (RunError::Git("status".into()), Status::InternalError),
        (
            session(SessionError::NoSessions { root: "/r".into() }),
            Status::Invalid,
        ),
        (
            session(SessionError::NotFound {
                id: "x".into(),
                root: "/r".into(),
            }),
            Status::Invalid,
        ),
        (
            session(SessionError::Read {
                path: "/s".into(),
                source: io(std::io::ErrorKind::PermissionDenied),
            }),
            Status::InternalError,
        ),
        (
            session(SessionError::NotASession {
                path: "/s".into(),
                source: json_error(),
            }),
            Status::InternalError,
        ),
        (
            session(SessionError::Unsupported {
                path: "/s".into(),
                version: 7,
            }),
            Status::InternalError,
        ),
        (
            session(SessionError::BadItem {
                path: "/s".into(),
                line: 3,
                source: json_error(),
            }),
            Status::InternalError,
        ),
        (
            session(SessionError::NoFolder { path: "/s".into() }),
            Status::InternalError,
        ),
        (
            session(SessionError::NoMeta { path: "/s".into() }),
            Status::InternalError,
        ),
        (
            RunError::Client("no TLS roots".into()),
            Status::InternalError,
        ),
        (RunError::Panic("boom".into()), Status::InternalError),
        (moved(MoveError::Exists("/r".into())), Status::Invalid),
        (
            moved(MoveError::NoRunInUrl("s3://b".into())),
            Status::Invalid,
        ),
        (
            moved(MoveError::Workspace {
                run: "r".into(),
                workspace: "/w".into(),
                why: "differs".into(),
            }),
            Status::Invalid,
        ),
        (
            moved(MoveError::Store(StoreError::Url {
                url: "ftp://x".into(),
                why: "not a store".into(),
            })),
            Status::Invalid,
        ),
        (
            moved(MoveError::Store(StoreError::NoRun {
                store: "s3://b".into(),
                run: "r".into(),
            })),
            Status::Invalid,
        ),
        (
            moved(MoveError::Store(StoreError::Archive {
                path: "/a.tgz".into(),
                why: "bad".into(),
            })),
            Status::Invalid,
        ),
        (
            moved(MoveError::Store(StoreError::Local {
                path: "/r".into(),
                source: io(std::io::ErrorKind::PermissionDenied),
            })),
            Status::InternalError,
        ),
        (
            moved(MoveError::Store(StoreError::Backend {
                store: "s3://b".into(),
                source: object_store::Error::NotFound {
                    path: "r/x".into(),
                    source: "gone".into(),
                },
            })),
            Status::InternalError,
        ),
        (
            moved(MoveError::Git(crate::checkpoint::CheckpointError::Git {
                action: "read",
                source: git2::Error::from_str("broken"),
            })),
            Status::InternalError,
        ),
        (
            RunError::Busy {
                dir: "/out".into(),
                holder: "cn-run pid 7".into(),
            },
            Status::InternalError,
        ),
    ];
    for (e, _) in &all {
        match e {
            RunError::Config(e) => match e {
                crate::config::ConfigError::Flag(_)
                | crate::config::ConfigError::Policy(_)
                | crate::config::ConfigError::BaseRef(_)
                | crate::config::ConfigError::Workspace { .. } => {}
            },
            RunError::Job(_)
            | RunError::Usage(_)
            | RunError::ModelSetting(_)
            | RunError::Mcp(_)
            | RunError::RunFolder { .. }
            | RunError::Busy { .. }
            | RunError::RunFiles { .. }
            | RunError::Workspace(_)
            | RunError::Worktree { .. }
            | RunError::Git(_)
            | RunError::Client(_)
            | RunError::Panic(_) => {}
            RunError::Moved(e) => match e {
                MoveError::Store(e) => match e {
                    StoreError::Url { .. }
                    | StoreError::Backend { .. }
                    | StoreError::NoRun { .. }
                    | StoreError::Local { .. }
                    | StoreError::Archive { .. } => {}
                },
                MoveError::Exists(_)
                | MoveError::NoRunInUrl(_)
                | MoveError::Workspace { .. }
                | MoveError::Git(_) => {}
            },
            RunError::Session(e) => match e {
                SessionError::NoSessions { .. }
                | SessionError::NotFound { .. }
                | SessionError::Read { .. }
                | SessionError::NotASession { .. }
                | SessionError::Unsupported { .. }
                | SessionError::BadItem { .. }
                | SessionError::NoFolder { .. }
                | SessionError::NoMeta { .. } => {}
            },
        }
    }
    all
}

#[test]
fn each_failure_has_its_class_and_environment_failures_are_exit_6() {
    for (e, status) in every_variant() {
        assert_eq!(e.status(), status, "{e:?}");
        let reported = StartError::from(e);
        assert_eq!(reported.status, status);
        assert!(!reported.message.is_empty());
        let expected = if status == Status::Invalid { 2 } else { 6 };
        assert_eq!(
            reported.status.exit_code(),
            expected,
            "{}",
            reported.message
        );
    }
}

#[test]
fn a_job_error_keeps_its_location() {
    let (e, _) = every_variant().remove(0);
    assert!(
        e.to_string().starts_with("job.yaml:3:1: limits: bad"),
        "{e}"
    );
}

#[test]
fn a_run_folder_error_says_what_to_do() {
    let denied = RunError::run_folder(Path::new("/ro"), io(std::io::ErrorKind::PermissionDenied));
    assert!(denied.to_string().contains("may not write it"), "{denied}");
    let missing = RunError::run_folder(Path::new("/ro"), io(std::io::ErrorKind::NotADirectory));
    assert!(
        missing.to_string().contains("give --out a folder"),
        "{missing}"
    );
}
