//! Read on files too large to load, by effect: a 200 MB file that is one line (sparse, and
//! streamed behind normal lines) is refused with its size and a way to page it, and cn-run's
//! peak memory stays far below the file's size; lines over the character limit in a file
//! under the byte limit are refused too, and `offset`/`limit` arguments do not load it.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use crate::support::runner::write_files;

const BIG: u64 = 200 * 1024 * 1024;
/// Peak resident memory allowed to cn-run while the model asks for 200 MB files.
const MAX_RSS_KB: u64 = 100 * 1024;

/// A file of `BIG` bytes with no newline: a hole the filesystem stores as nothing.
fn sparse_line(path: &Path) {
    std::fs::File::create(path).unwrap().set_len(BIG).unwrap();
}

/// Normal lines, then one `BIG`-byte line, then normal lines again.
fn huge_line_inside(path: &Path) {
    let mut f = std::fs::File::create(path).unwrap();
    for i in 0..50 {
        writeln!(f, "line {i}").unwrap();
    }
    f.seek(SeekFrom::Current(BIG as i64)).unwrap();
    f.write_all(b"x\nafter 1\nafter 2\n").unwrap();
}

fn read_call(args: &serde_json::Value) -> String {
    format!("  - tool_calls: [{{name: Read, arguments: {args}}}]\n")
}

#[test]
fn a_huge_one_line_file_is_refused_without_being_loaded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    sparse_line(&dir.join("one-line.bin"));
    huge_line_inside(&dir.join("inside.log"));
    write_files(
        dir,
        &[
            ("wide.txt", &"a".repeat(350_000)),
            ("wide-utf8.txt", &"é".repeat(150_000)),
            ("small.txt", "SMALL-CONTENT\n"),
        ],
    );
    let calls: String = [
        serde_json::json!({"filepath": "one-line.bin"}),
        serde_json::json!({"filepath": "inside.log"}),
        serde_json::json!({"filepath": "one-line.bin", "offset": 1, "limit": 10}),
        serde_json::json!({"filepath": "inside.log", "offset": 40, "limit": 5}),
        serde_json::json!({"filepath": "wide.txt"}),
        serde_json::json!({"filepath": "wide-utf8.txt"}),
        serde_json::json!({"filepath": "small.txt"}),
    ]
    .iter()
    .map(read_call)
    .collect();
    let script = format!("turns:\n{calls}  - text: done\n");
    let job = "version: 1\nname: bigread\nmodel: {provider: script, name: s, script: script.yaml}\nprompt: go\nlimits: {max_turns: 10, timeout: 5m}\n";
    write_files(dir, &[("job.yaml", job), ("script.yaml", &script)]);
    let (r, peak, _) = super::resources::run_measured(dir, &dir.join("job.yaml"));
    assert_eq!(r.code, 0, "{r:#?}");
    let outputs: Vec<String> = r
        .events_of("tool.finished")
        .iter()
        .map(|e| e["output"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(outputs.len(), 7, "{outputs:#?}");
    for (i, out) in outputs[..6].iter().enumerate() {
        assert!(out.contains("too large to read at once"), "call {i}: {out}");
        assert!(
            out.contains("sed -n"),
            "call {i} names no way to page: {out}"
        );
        assert!(
            out.len() < 2_000,
            "call {i} returned content: {} bytes",
            out.len()
        );
    }
    for out in &outputs[..4] {
        assert!(out.contains(" bytes"), "{out}");
    }
    assert!(
        outputs[0].contains(&format!("{BIG} bytes")),
        "{}",
        outputs[0]
    );
    assert!(outputs[6].contains("SMALL-CONTENT"), "{}", outputs[6]);
    if let Some(kb) = peak {
        assert!(kb < MAX_RSS_KB, "peak memory {kb} kB for 200 MB files");
    }
}
