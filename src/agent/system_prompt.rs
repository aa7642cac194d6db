//! The system message, rebuilt every turn from parts gathered once at the start of the
//! run: the environment (workspace, platform, date, git status), the repository's agent
//! file (AGENTS.md, AGENT.md, CLAUDE.md or CODEX.md), and the job's rules.

use std::path::Path;

use crate::job::Rule;
use crate::permissions::Mode;

/// Agent instruction files, the first one found in the workspace is used.
const AGENT_FILES: &[&str] = &["AGENTS.md", "AGENT.md", "CLAUDE.md", "CODEX.md"];

/// The first agent file `repo` has, as (name, text).
pub(crate) fn agent_file(repo: &crate::repo_files::RepoFiles) -> Option<(String, String)> {
    AGENT_FILES.iter().find_map(|name| {
        let text = repo.read(name)?;
        Some(((*name).to_owned(), text))
    })
}

/// Lines of git status shown before the rest is summarised.
const MAX_STATUS_LINES: usize = 100;

#[derive(Debug, Clone)]
pub struct SystemPrompt {
    base: String,
    agent_file: Option<(String, String)>,
    rules: Vec<Rule>,
    extra: Vec<String>,
}

impl SystemPrompt {
    /// Gather the parts for a run in `workspace`.
    /// `repo` is where repository instructions (the agent file) are read from: the
    /// workspace, or a trusted base commit for untrusted input.
    pub fn build(
        workspace: &Path,
        mode: Mode,
        rules: Vec<Rule>,
        json_output: bool,
        repo: &crate::repo_files::RepoFiles,
    ) -> Self {
        Self::build_with_status(
            workspace,
            mode,
            rules,
            json_output,
            repo,
            git_status(workspace),
        )
    }

    /// As [`build`](Self::build), with the git status already taken: whether the
    /// workspace is in a repository, and the status text.
    pub fn build_with_status(
        workspace: &Path,
        mode: Mode,
        rules: Vec<Rule>,
        json_output: bool,
        repo: &crate::repo_files::RepoFiles,
        (is_repo, status): (bool, String),
    ) -> Self {
        let mut base = String::from(
            "You are cn-run, a coding agent working on your own, without a human to ask. Use the \
             tools to inspect and change the workspace, run commands to check your work, and \
             finish with a short final answer that says what you did and what, if anything, is \
             left. If the task cannot be done, call ReportFailure with the reason.\n",
        );
        base.push_str(&format!(
            "\n<env>\nWorking directory: {}\nGit repository: {}\nPlatform: {}\nDate (UTC): {}\n</env>\n",
            workspace.display(),
            if is_repo { "yes" } else { "no" },
            std::env::consts::OS,
            jiff::Timestamp::now().strftime("%Y-%m-%d"),
        ));
        base.push_str(&format!(
            "\n<git-status note=\"taken when the run started; it does not update\">\n{status}\n</git-status>\n"
        ));
        if mode == Mode::Plan {
            base.push_str(
                "\nYou are in plan mode: do not change files. Investigate and answer with a plan.\n",
            );
        }
        base.push_str(
            "\nYou run headless: nobody reads intermediate messages. Put what the user needs in \
             your final answer, and keep it direct.\n",
        );
        if json_output {
            base.push_str(
                "\nYour final answer must be one valid JSON value and nothing else (no prose, \
                 no code fence).\n",
            );
        }
        let agent_file = agent_file(repo);
        SystemPrompt {
            base,
            agent_file,
            rules,
            extra: Vec::new(),
        }
    }

    /// Add text that applies from the next turn on (e.g. a rule whose glob matched).
    pub fn add(&mut self, text: String) {
        self.extra.push(text);
    }

    /// The agent file that was found, if any.
    pub fn agent_file(&self) -> Option<&str> {
        self.agent_file.as_ref().map(|(n, _)| n.as_str())
    }

    pub fn render(&self) -> String {
        let mut out = self.base.clone();
        let has_rules =
            self.agent_file.is_some() || !self.rules.is_empty() || !self.extra.is_empty();
        if !has_rules {
            return out;
        }
        out.push_str("\n<rules>\n");
        if let Some((name, text)) = &self.agent_file {
            out.push_str(&format!(
                "<file name=\"{name}\">\n{}\n</file>\n",
                text.trim()
            ));
        }
        for rule in &self.rules {
            out.push_str(rule.text.trim());
            out.push_str("\n\n");
        }
        for text in &self.extra {
            out.push_str(text.trim());
            out.push_str("\n\n");
        }
        out.push_str("</rules>\n");
        out
    }
}

/// Whether `dir` is in a git repository, and its status in short form.
pub fn git_status(dir: &Path) -> (bool, String) {
    match git2::Repository::discover(dir) {
        Ok(repo) => (true, status_text(&repo)),
        Err(_) => (false, "Not a git repository".to_owned()),
    }
}

/// The status of `repo` in short form. Nothing is written to its index.
pub fn status_text(repo: &git2::Repository) -> String {
    match repo.statuses(Some(&mut status_options())) {
        Ok(statuses) => status_lines(&statuses),
        Err(_) => STATUS_UNAVAILABLE.to_owned(),
    }
}

/// What the prompt shows when the status cannot be taken.
pub const STATUS_UNAVAILABLE: &str = "(git status unavailable)";

/// The options of the prompt's status: untracked files, an untracked folder as one line.
pub fn status_options() -> git2::StatusOptions {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(false);
    opts
}

/// The status taken with [`status_options`], in short form.
pub fn status_lines(statuses: &git2::Statuses<'_>) -> String {
    // The default output folder (`.cn-run/`, which ignores itself) may show as untracked
    // while it is being created; it is the runner's, not a change in the workspace.
    let ours = |path: &str| path == ".cn-run/" || path.ends_with("/.cn-run/");
    let entries: Vec<git2::StatusEntry<'_>> = statuses
        .iter()
        .filter(|e| !e.path().is_ok_and(ours))
        .collect();
    if entries.is_empty() {
        return "Working tree clean".to_owned();
    }
    let mut lines: Vec<String> = entries
        .iter()
        .take(MAX_STATUS_LINES)
        .map(|e| format!("{} {}", short_code(e.status()), e.path().unwrap_or("?")))
        .collect();
    if entries.len() > MAX_STATUS_LINES {
        lines.push(format!("… and {} more", entries.len() - MAX_STATUS_LINES));
    }
    lines.join("\n")
}

fn short_code(s: git2::Status) -> &'static str {
    use git2::Status as S;
    if s.contains(S::WT_NEW) {
        "??"
    } else if s.intersects(S::INDEX_NEW) {
        "A "
    } else if s.intersects(S::INDEX_DELETED | S::WT_DELETED) {
        " D"
    } else if s.intersects(S::INDEX_RENAMED | S::WT_RENAMED) {
        " R"
    } else {
        " M"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_shows_changes_but_not_the_runners_own_output_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(tmp.path()).unwrap();
        std::fs::write(tmp.path().join("kept.txt"), "a\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("kept.txt")).unwrap();
        index.write().unwrap();
        assert_eq!(status_text(&repo), "A  kept.txt");
        // The output folder while it is being made: no `.gitignore` in it yet.
        std::fs::create_dir_all(tmp.path().join(".cn-run/run-1")).unwrap();
        std::fs::write(tmp.path().join(".cn-run/run-1/events.jsonl"), "{}\n").unwrap();
        std::fs::write(tmp.path().join("new.txt"), "b\n").unwrap();
        assert_eq!(status_text(&repo), "A  kept.txt\n?? new.txt");
        std::fs::remove_file(tmp.path().join("new.txt")).unwrap();
        index.remove_path(Path::new("kept.txt")).unwrap();
        index.write().unwrap();
        std::fs::remove_file(tmp.path().join("kept.txt")).unwrap();
        assert_eq!(status_text(&repo), "Working tree clean");
    }
}
