//! One simple command: checks that apply to every word (expansions, secrets, obfuscation,
//! multi-line quoting) and redirection, then the command itself: `NAME=value` prefixes, reserved
//! words, a program name hidden in a variable (evaluated both as if the variable were empty and as
//! if it named a destructive program), and finally the program's own rule.

use super::args::{assignment, is_dangerous_var};
use super::catalog;
use super::cx::{Cx, check_write};
use super::destructive;
use super::paths;
use super::rules;
use super::secrets;
use super::tokenize::{
    ANSI_C, EXPANDS, INVISIBLE, LITERAL, MULTILINE, QUOTED, Redir, RedirKind, SECRET_VAR, Word,
};

/// How many `$'…'` words per command are also evaluated as the start of a command.
const MAX_DECODED: usize = 4;

/// Words that only shape control flow; the command follows them.
const PREFIX_KEYWORDS: &[&str] = &[
    "!", "{", "}", "do", "done", "elif", "else", "esac", "fi", "if", "then", "time", "until",
    "while",
];

/// Words after which the rest of the command is data (loop lists, case subjects).
const DATA_KEYWORDS: &[&str] = &["case", "for", "in", "select"];

/// Evaluates a simple command with its redirections.
pub(crate) fn evaluate<'w>(
    words: &[&'w Word<'_>],
    redirs: &[&'w Redir<'_>],
    secret_var: &str,
    cx: &mut Cx<'w>,
) {
    let mut decoded = 0;
    for (k, word) in words.iter().enumerate() {
        check_word(word, secret_var, cx);
        if k > 0 && word.has(ANSI_C) && !word.text.is_empty() && decoded < MAX_DECODED {
            decoded += 1;
            cx.command(&words[k..], false);
        }
    }
    cx.stdin = None;
    for redir in redirs {
        check_redirect(redir, secret_var, cx);
        match redir.kind {
            RedirKind::HereDoc => cx.stdin = Some(redir.body),
            RedirKind::HereString => cx.stdin = Some(&redir.target.text),
            _ => {}
        }
    }
    let after_pipe = cx.after_pipe;
    cx.command(words, after_pipe);
    cx.stdin = None;
}

fn check_word(word: &Word<'_>, secret_var: &str, cx: &mut Cx<'_>) {
    if word.has(SECRET_VAR) {
        cx.note(&catalog::SECRET_VAR, secret_var);
    } else if word.has(EXPANDS) {
        cx.note(&catalog::EXPANSION, &word.text);
    }
    if word.has(MULTILINE) {
        cx.note(&catalog::MULTILINE, "");
    }
    if word.has(INVISIBLE) {
        cx.note(&catalog::OBF_INVISIBLE, &word.text);
    }
    if word.has(ANSI_C) {
        cx.note(&catalog::OBF_ANSI_C, "");
    }
    if secrets::is_secret_path(&word.text) {
        cx.note(&catalog::SECRET_FILE, &word.text);
    }
}

fn check_redirect(redir: &Redir<'_>, secret_var: &str, cx: &mut Cx<'_>) {
    let target = &redir.target;
    check_word(target, secret_var, cx);
    if target.text.starts_with("/dev/tcp/") || target.text.starts_with("/dev/udp/") {
        return cx.note(&catalog::NETWORK, &target.text);
    }
    if redir.kind == RedirKind::Write {
        check_write(&target.text, cx);
    }
}

/// Evaluates `words` as a command line: assignments, reserved words, then the program.
pub(crate) fn command(words: &[&Word<'_>], cx: &mut Cx<'_>) {
    let mut k = 0;
    while let Some(name) = words.get(k).and_then(|w| assignment(w)) {
        if is_dangerous_var(name) {
            cx.note(&catalog::ENV_DANGEROUS, name);
        }
        k += 1;
    }
    let keyword = |w: &Word<'_>, list: &[&str]| !w.has(QUOTED) && list.contains(&&*w.text);
    while words.get(k).is_some_and(|w| keyword(w, PREFIX_KEYWORDS)) {
        k += 1;
        if words.get(k).is_some_and(|w| w.text == "-p") && words[k - 1].text == "time" {
            k += 1;
        }
    }
    let Some(program) = words.get(k) else {
        return cx.note(&catalog::SAFE_SHELL, "");
    };
    if keyword(program, DATA_KEYWORDS) {
        return cx.note(&catalog::SAFE_SHELL, &program.text);
    }
    let args = &words[k + 1..];
    if program.hidden() {
        hidden_program(program, args, cx);
    } else if let Some(inner) = brace_list(program) {
        brace_command(&inner, args, cx);
    } else {
        rules::classify(program, args, cx);
    }
}

/// The items of an unquoted `{a,b,c}` program word, which the shell expands into separate words.
fn brace_list<'w>(program: &'w Word<'_>) -> Option<Vec<&'w str>> {
    let inner = program.text.strip_prefix('{')?.strip_suffix('}')?;
    let expands = !program.has(QUOTED) && inner.contains(',') && !inner.contains(['{', '}']);
    expands.then(|| inner.split(',').collect())
}

/// `{rm,-rf,/} x`: judged as `rm -rf / x`, which is what runs.
fn brace_command(items: &[&str], args: &[&Word<'_>], cx: &mut Cx<'_>) {
    let expanded: Vec<Word<'_>> = items
        .iter()
        .map(|item| Word {
            text: std::borrow::Cow::Borrowed(item),
            flags: LITERAL,
            plain_len: item.len(),
        })
        .collect();
    let mut line: Vec<&Word<'_>> = expanded.iter().collect();
    line.extend_from_slice(args);
    let after_pipe = cx.after_pipe;
    cx.command(&line, after_pipe);
}

/// The program name comes from an expansion: what runs is unknown. The rest is evaluated as if
/// the expansion were empty, and refused if it would be destructive for rm, chmod or chown.
fn hidden_program(program: &Word<'_>, args: &[&Word<'_>], cx: &mut Cx<'_>) {
    cx.note(&catalog::HIDDEN_PROGRAM, &program.text);
    if !program.pure_expansion() {
        // `eval${IFS}id`, `r$X"m" -rf /`: judged as the text with `IFS` as a blank and every
        // other expansion empty, which is one thing it may run.
        let mut shape = paths::blank_ifs(&program.text);
        for arg in args {
            shape.push(' ');
            shape.push_str(&arg.text);
        }
        cx.text(&shape);
    }
    if program.pure_expansion() && !args.is_empty() {
        let after_pipe = cx.after_pipe;
        cx.command(args, after_pipe);
    }
    if destructive::critical_for_any(args) {
        cx.note(&catalog::HIDDEN_DESTRUCTIVE, &program.text);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tokenize::{Tok, scan};
    use super::*;

    fn first_word(text: &str) -> Word<'_> {
        match scan(text).ok().and_then(|s| s.toks.into_iter().next()) {
            Some(Tok::Word(w)) => w,
            other => panic!("no word in {text:?}: {other:?}"),
        }
    }

    #[test]
    fn assignments_need_an_unquoted_name() {
        assert_eq!(assignment(&first_word("FOO=bar")), Some("FOO"));
        assert_eq!(assignment(&first_word("FOO=\"a b\"")), Some("FOO"));
        assert_eq!(assignment(&first_word("PATH+=:/x")), Some("PATH"));
        assert_eq!(assignment(&first_word("\"FOO=bar\"")), None);
        assert_eq!(assignment(&first_word("1X=2")), None);
        assert_eq!(assignment(&first_word("--opt=1")), None);
    }
}
