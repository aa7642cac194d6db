//! Job YAML that the value parser would accept silently: a key given twice is a located
//! error (exit 2, nothing runs), and so is nesting past the limit, found in one pass.

use crate::support::runner::{cn_run, run, write_files};

const HEAD: &str = "version: 1\nname: j\nmodel: {provider: script, name: m, script: s.yaml}\n";

fn validate(body: &str) -> (i32, String) {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("job.yaml", &format!("{HEAD}{body}")),
            ("s.yaml", "turns:\n  - text: hi\n"),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["validate", "job.yaml"]);
    let r = run(cmd, None);
    (r.code, r.stderr + &r.stdout)
}

#[test]
fn duplicate_keys_are_located_errors() {
    let cases = [
        (
            "prompt: a\npermissions: {exclude: [Bash]}\npermissions: {allow: [Bash]}\n",
            6,
            "permissions",
        ),
        ("prompt: a\nprompt: b\n", 5, "prompt"),
        (
            "prompt: a\nlimits:\n  max_turns: 1\n  max_turns: 99\n",
            7,
            "max_turns",
        ),
        (
            "prompt: a\nchecks:\n  - {name: t, run: 'true', run: 'rm -rf x'}\n",
            6,
            "run",
        ),
        (
            "prompt: a\npermissions:\n  allow: [Read]\n  allow: [Bash]\n",
            7,
            "allow",
        ),
        ("prompt: a\n\"prompt\": b\n", 5, "prompt"),
    ];
    for (body, line, key) in cases {
        let (code, out) = validate(body);
        assert_eq!(code, 2, "{body}\n{out}");
        assert!(out.contains(&format!("job.yaml:{line}:")), "{body}\n{out}");
        assert!(
            out.contains(&format!("duplicate key `{key}`")),
            "{body}\n{out}"
        );
    }
    let (code, out) =
        validate("prompt: a\nchecks:\n  - {name: a, run: 'true'}\n  - {name: b, run: 'true'}\n");
    assert_eq!(code, 0, "same keys in sibling mappings are fine: {out}");
}

#[test]
fn nesting_past_the_limit_is_a_located_error() {
    let n = 100_000;
    for body in [
        format!("prompt: {}{}\n", "[".repeat(n), "]".repeat(n)),
        format!("prompt: a\nparams: {}{}\n", "{a: ".repeat(n), "}".repeat(n)),
        format!(
            "prompt: a\nrules: {}x{}\n",
            "[".repeat(200),
            "]".repeat(200)
        ),
        format!(
            "prompt: a\nrules:\n{}",
            (0..100)
                .map(|i| format!("{}- \n", "  ".repeat(i)))
                .collect::<String>()
        ),
        format!(
            "prompt: a\nparams: {}1{}\n",
            "{a: [".repeat(50),
            "]}".repeat(50)
        ),
    ] {
        let (code, out) = validate(&body);
        assert_eq!(code, 2, "{out}");
        assert!(out.contains("nested deeper than"), "{out}");
        assert!(out.contains("job.yaml:"), "{out}");
    }
}
