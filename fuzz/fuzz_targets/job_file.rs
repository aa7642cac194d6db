//! Fuzz target: the job file loader on arbitrary text.
//!
//! A job file is YAML a user (or a pull request) writes; loading it must end in a job or in
//! located problems — never a panic or a hang — whatever the text. Relative paths in the
//! file resolve inside an empty temporary directory, so the fuzzer does not read the repo.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use cn_run::job::{LoadOptions, load_str};
use libfuzzer_sys::fuzz_target;

static BASE: LazyLock<PathBuf> = LazyLock::new(|| {
    let dir = std::env::temp_dir().join(format!("cn-run-fuzz-job-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir.join("job.yaml")
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let opts = LoadOptions {
        params: vec![("path".to_owned(), "src/".to_owned())],
    };
    if let Err(err) = load_str(text, "fuzz.yaml", Some(BASE.as_path()), &opts) {
        // Every problem must be printable (the CLI prints them all).
        let _ = err.to_string();
        for problem in err.problems() {
            assert!(problem.line >= 1, "{problem:?}");
        }
    }
});
