//! The evaluation context every rule is handed (`Cx`): where findings go, where the command
//! runs, what it reads, how deep the walk is; and the check of a file a command writes. The
//! walk (`walk.rs`) adds the methods that evaluate nested commands, so the rules depend on
//! this file and not on the walk that calls them.

use super::catalog::{self, Rule};
use super::finding::Acc;
use super::paths::{self, WriteTarget};

/// Evaluation context handed to every rule.
pub(crate) struct Cx<'s> {
    pub(super) acc: &'s mut Acc,
    pub(super) depth: u8,
    pub(super) nesting: u8,
    /// The command reads the output of a pipe.
    pub(crate) after_pipe: bool,
    /// Text fed to the command's standard input by a here-document or here-string.
    pub(crate) stdin: Option<&'s str>,
    /// How many directories below the workspace root earlier `cd`s of this text have gone.
    pub(crate) cd_depth: i32,
    /// An earlier `cd` of this text may have entered a `.git` directory (its path names one,
    /// or is only known when the shell runs it), so relative writes may land in it.
    pub(crate) in_git: bool,
    /// The command is part of a pipeline or runs in the background, so its `cd` does not last.
    pub(crate) detached: bool,
    /// `cd_depth` at each open `(` (a subshell's `cd` does not outlast it).
    pub(super) subshells: [i32; 4],
    pub(super) open_subshells: usize,
}

impl Cx<'_> {
    pub(crate) fn note(&mut self, rule: &'static Rule, subject: &str) {
        self.acc.note(rule, subject);
    }

    /// Where the command runs.
    pub(crate) fn context(&self) -> super::Context {
        self.acc.context
    }

    /// Notes a finding whose subject is a tool and its sub-command (`cargo test`).
    pub(crate) fn note_sub(&mut self, rule: &'static Rule, tool: &str, sub: &str) {
        self.acc.note_parts(rule, &[tool, sub]);
    }
}

/// Judges a file the command writes (a redirection, `tee FILE`, `sort -o FILE`).
pub(crate) fn check_write(path: &str, cx: &mut Cx<'_>) {
    let path = paths::without_expansions(path);
    let target = match paths::write_target(&path) {
        WriteTarget::Workspace | WriteTarget::Harmless
            if cx.in_git && !paths::leaves_workspace(&path) =>
        {
            WriteTarget::GitInternals
        }
        target => target,
    };
    match target {
        WriteTarget::Workspace if cx.context().read_only => {
            cx.note(&catalog::READONLY_WRITE, &path)
        }
        WriteTarget::Workspace | WriteTarget::Harmless => {}
        WriteTarget::GitInternals => cx.note(&catalog::WRITE_GIT, &path),
        WriteTarget::Device => cx.note(&catalog::DEVICE_WRITE, &path),
        WriteTarget::Outside => cx.note(&catalog::WRITE_OUTSIDE, &path),
    }
}
