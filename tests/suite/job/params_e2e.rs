//! Parameters are data: a value substituted into a check's shell text arrives as one word,
//! whatever it holds (`;`, `$(…)`, backticks, newlines, quotes), and the commands inside it
//! never run (their marker file is not written). `| raw` opts out, and `validate` warns.

use crate::support::runner::{cn_run, run, write_files};

fn job(run_line: &str) -> String {
    format!(
        "version: 1\nname: p\nmodel: {{provider: script, name: m, script: s.yaml}}\nprompt: go\nparams:\n  v: {{default: x}}\nchecks:\n  - {{name: words, run: '{run_line}'}}\n"
    )
}

#[test]
fn a_parameter_reaches_a_check_as_one_word() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("marker");
    let m = marker.display().to_string();
    let values = [
        format!(". ; touch {m}"),
        format!("$(touch {m})"),
        format!("`touch {m}`"),
        format!("a\ntouch {m}"),
        format!("x && touch {m} || touch {m}"),
        format!("it's \"q\" | touch {m}"),
        format!("$((1+1)) > {m}"),
    ];
    write_files(
        tmp.path(),
        &[
            // The check's script writes its argument count and first argument.
            ("job.yaml", &job("sh count.sh {{ params.v }}")),
            ("count.sh", "printf '%s|%s' \"$#\" \"$1\" > out.txt\n"),
            ("s.yaml", "turns:\n  - text: done\n"),
        ],
    );
    for value in &values {
        let mut cmd = cn_run(tmp.path());
        cmd.arg("job.yaml").arg("--param").arg(format!("v={value}"));
        let r = run(cmd, Some(&tmp.path().join("out")));
        assert_eq!(r.code, 0, "{value:?}: {r:#?}");
        let got = std::fs::read_to_string(tmp.path().join("out.txt")).unwrap_or_default();
        assert_eq!(got, format!("1|{value}"), "{value:?}");
        assert!(!marker.exists(), "{value:?} ran as code");
    }
}

#[test]
fn raw_opts_out_and_validate_warns() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("job.yaml", &job("echo {{ params.v | raw }} > out.txt")),
            ("s.yaml", "turns:\n  - text: done\n"),
        ],
    );
    let mut cmd = cn_run(tmp.path());
    cmd.args(["validate", "job.yaml"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(r.stderr.contains("`| raw`"), "{}", r.stderr);
    let mut cmd = cn_run(tmp.path());
    cmd.arg("job.yaml").args(["--param", "v=a; echo b"]);
    let r = run(cmd, Some(&tmp.path().join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let got = std::fs::read_to_string(tmp.path().join("out.txt")).unwrap_or_default();
    assert_eq!(
        got, "b\n",
        "raw text is shell text: `echo a; echo b > out.txt`"
    );
}
