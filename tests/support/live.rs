//! A cn-run process a test drives while it runs: started with its output in files, held
//! at a gate (a Bash call that waits for a file the test makes), signalled by its own pid,
//! and killed if the test ends first (a failed assertion never leaves it running).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::runner::Run;

/// A Bash call (script YAML, one line) that waits for `file` in the workspace to exist.
pub fn gate(file: &str) -> String {
    format!(
        "  - tool_calls: [{{name: Bash, arguments: {{command: 'while [ ! -e {file} ]; do sleep 0.05; done'}}}}]\n"
    )
}

/// The running process.
pub struct Live {
    child: Option<Child>,
    stdout: PathBuf,
    stderr: PathBuf,
    out: Option<PathBuf>,
}

impl Live {
    /// Starts `cmd` with its output kept in files of `logs` (a folder the test owns);
    /// `out` is the run folder the test gave, if any.
    pub fn start(mut cmd: Command, logs: &Path, out: Option<&Path>) -> Live {
        let n = fastrand::u32(..);
        let (stdout, stderr) = (
            logs.join(format!("stdout-{n}.txt")),
            logs.join(format!("stderr-{n}.txt")),
        );
        cmd.stdout(Stdio::from(std::fs::File::create(&stdout).unwrap()))
            .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
        Live {
            child: Some(cmd.spawn().expect("spawn cn-run")),
            stdout,
            stderr,
            out: out.map(Path::to_path_buf),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Sends `signal` (`TERM`, `INT`, `KILL`) to the process (its pid, nothing else).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal} {}", self.pid());
    }

    /// Whether it has ended.
    pub fn ended(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| c.try_wait().ok().flatten().is_some())
    }

    /// Waits for its end; what it printed and its exit code (-1 for a signal).
    pub fn wait(mut self) -> Run {
        let status = self.child.take().map(|mut c| c.wait().unwrap());
        Run {
            code: status.and_then(|s| s.code()).unwrap_or(-1),
            stdout: std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.stderr).unwrap_or_default(),
            out: self.out.clone(),
        }
    }

    /// What it has written to stderr so far.
    pub fn stderr_so_far(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Waits until `path` holds `needle` (false after the give-up of `procs::wait_for`).
pub fn wait_for_text(path: &Path, needle: &str) -> bool {
    super::procs::wait_for(|| {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .contains(needle)
    })
}

/// Every line of a JSON-lines file parses (no torn or glued line anywhere).
pub fn assert_whole_lines(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "{}: a torn last line",
        path.display()
    );
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{} line {}: {e}: {l}", path.display(), i + 1))
        })
        .collect()
}
