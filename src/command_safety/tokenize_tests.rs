//! Scanner tests: words, operators, redirections, substitutions and here-documents, with
//! `shell-words` as the reference for word splitting and quote removal.

use super::*;

fn words(src: &str) -> Vec<String> {
    let scan = scan(src).unwrap_or_else(|rule| panic!("{src:?}: {}", rule.rule.id));
    scan.toks
        .iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w.text.to_string()),
            _ => None,
        })
        .collect()
}

fn first(src: &str) -> Word<'_> {
    match scan(src).ok().and_then(|s| s.toks.into_iter().next()) {
        Some(Tok::Word(w)) => w,
        other => panic!("no word in {src:?}: {other:?}"),
    }
}

fn ops(src: &str) -> Vec<Op> {
    let scan = scan(src).unwrap_or_else(|rule| panic!("{src:?}: {}", rule.rule.id));
    scan.toks
        .iter()
        .filter_map(|t| match t {
            Tok::Op(op) => Some(*op),
            _ => None,
        })
        .collect()
}

fn redirs(src: &str) -> Vec<(RedirKind, String, String)> {
    let scan = scan(src).unwrap_or_else(|rule| panic!("{src:?}: {}", rule.rule.id));
    scan.toks
        .iter()
        .filter_map(|t| match t {
            Tok::Redir(r) => Some((r.kind, r.target.text.to_string(), r.body.to_owned())),
            _ => None,
        })
        .collect()
}

#[test]
fn words_match_shell_words_for_plain_commands() {
    for src in [
        "ls -la src",
        "grep -rn 'two words' src/",
        r#"echo "a \"quoted\" word" 'single \ kept' back\ slash"#,
        "r''m -r''f /",
        r#"s""h x.sh"#,
        r"r\m -r\f /",
        "echo '' \"\" x",
        "git log --format='%H %s' -n 5",
        "a\\\nb",
    ] {
        let reference = shell_words::split(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        assert_eq!(words(src), reference, "{src:?}");
    }
}

#[test]
fn operators_split_commands() {
    assert_eq!(
        ops("a | b && c || d ; e & f\ng |& h ;; i"),
        [
            Op::Pipe,
            Op::And,
            Op::Or,
            Op::Seq,
            Op::Background,
            Op::Seq,
            Op::Pipe,
            Op::Seq
        ]
    );
    assert_eq!(ops("(cd x)"), [Op::Open, Op::Close]);
    assert_eq!(ops("echo 'a;b|c' \"d&&e\""), []);
    assert_eq!(words("echo hi # rm -rf /"), ["echo", "hi"]);
    assert_eq!(words("echo a#b"), ["echo", "a#b"]);
}

#[test]
fn redirections_take_their_target() {
    use RedirKind::*;
    let got = redirs("cmd >out 2>&1 <in &>all >>log 3<>rw <<<here");
    let kinds: Vec<_> = got.iter().map(|(k, t, _)| (*k, t.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (Write, "out"),
            (Dup, "1"),
            (Read, "in"),
            (Write, "all"),
            (Write, "log"),
            (Write, "rw"),
            (HereString, "here")
        ]
    );
    assert_eq!(words("cmd 2>/dev/null x"), ["cmd", "x"]);
    assert_eq!(words("echo 2 > f"), ["echo", "2"]);
    assert!(scan("echo >").is_err());
    assert!(scan("echo > | x").is_err());
}

#[test]
fn here_documents_are_read_after_their_line() {
    let got = redirs("cat <<EOF > out\nline $HOME\nEOF\necho done");
    assert_eq!(got[0].0, RedirKind::HereDoc);
    assert_eq!(got[0].2, "line $HOME\n");
    assert_eq!(
        words("cat <<EOF > out\nline $HOME\nEOF\necho done"),
        ["cat", "echo", "done"]
    );
    let quoted = scan("cat <<'EOF'\n$(rm -rf /)\nEOF")
        .ok()
        .map(|s| s.subs.len());
    assert_eq!(quoted, Some(0), "a quoted delimiter turns expansion off");
    let open = scan("cat <<EOF\n$(whoami)\nEOF").ok().map(|s| s.subs.len());
    assert_eq!(open, Some(1));
    assert_eq!(redirs("cat <<-X\n\tbody\n\tX")[0].2, "\tbody\n");
    // Without its delimiter line the body runs to the end, as bash reads it.
    assert_eq!(redirs("cat <<EOF\nno end")[0].2, "no end");
    assert_eq!(redirs("cat <<EOF")[0].2, "");
}

#[test]
fn substitutions_are_collected_outermost_first() {
    let scan = scan("echo $(a $(b)) `c \\`d\\`` <(e) \"$(f)\"")
        .unwrap_or_else(|r| panic!("{}", r.rule.id));
    let subs: Vec<&str> = scan.subs.iter().map(|s| &**s).collect();
    assert_eq!(subs, ["a $(b)", "c `d`", "e", "f"]);
    assert!(first("$(x)y").has(SUBST));
    assert!(super::scan("echo $(unclosed").is_err());
    assert!(super::scan("echo `unclosed").is_err());
}

#[test]
fn expansions_are_flagged_not_expanded() {
    let word = first("\"$HOME\"/x");
    assert_eq!(word.text, "$HOME/x");
    assert!(word.has(EXPANDS) && !word.has(SECRET_VAR));
    assert!(first("$X").pure_expansion());
    assert!(first("\"${X}\"").pure_expansion());
    assert!(!first("\"\"").pure_expansion());
    assert!(!first("'$X'").has(EXPANDS));
    assert!(first("${GITHUB_TOKEN:-x}").has(SECRET_VAR));
    assert_eq!(
        scan("echo $OPENAI_API_KEY").map(|s| s.secret_var).ok(),
        Some("OPENAI_API_KEY")
    );
    assert!(first("*.rs").has(GLOB));
}

#[test]
fn ansi_c_strings_are_decoded() {
    let word = first(r"$'\x72\x6d\u002d\101\n'");
    assert_eq!(word.text, "rm-A\n");
    assert!(word.has(ANSI_C));
    assert_eq!(first(r"$'it\'s'").text, "it's");
}

#[test]
fn unicode_spaces_split_and_invisible_characters_are_dropped() {
    assert_eq!(words("rm\u{3000}-rf\u{a0}/"), ["rm", "-rf", "/"]);
    let word = first("r\u{200b}m");
    assert_eq!(word.text, "rm");
    assert!(word.has(INVISIBLE));
    assert_eq!(words("echo 'é' ü\\ü"), ["echo", "é", "üü"]);
}

#[test]
fn quoted_line_breaks_are_flagged() {
    assert!(first("'a\nb'").has(MULTILINE));
    assert!(first("\"a\nb\"").has(MULTILINE));
    assert!(!first("a\\\nb").has(MULTILINE));
}

#[test]
fn unbalanced_input_is_an_error() {
    for src in ["echo 'x", "echo \"x", "echo ${x", "echo $'x", "a <<"] {
        assert!(scan(src).is_err(), "{src:?}");
    }
}
