//! Inputs the fuzz targets in `fuzz/` found, each kept as a test so the bug stays fixed.
//! The test name says what broke; the input is the fuzzer's (minimised where that helped).

use cn_run::command_safety::{Level, evaluate};

/// `bash_evaluator`: a command ending in a here-document whose delimiter line is followed by
/// `; rm -rf /`. The delimiter line no longer matched, so the here-document was "unterminated"
/// and the whole command a parse error (needs permission) — less strict than the command
/// alone (disabled). Bash does not refuse an unterminated here-document: it warns and runs
/// the command, so an unparsable here-document let `rm -rf / <<EOF` through as a mere
/// parse error, which auto mode or a `Bash(*)` rule allows. Fixed in
/// `command_safety/tokenize.rs`: the body runs to the end of the text, as bash reads it.
#[test]
fn an_unterminated_here_document_does_not_hide_the_command() {
    let found: &[u8] = b"<Ep\x01\0\0\0\0\0\x001y<Fdn\x1b=1n `ls.`e eevnec\x12\0\0\0\0\0\0\0eee\"bp\x01\0\0\0\0\0\0\x001y<Fdn\x1b=1n `ls.`e eevnec\x12\0\" <<EOF\nx\nEOF";
    let command = std::str::from_utf8(found).unwrap();
    let alone = evaluate(command);
    let extended = evaluate(&format!("{command}; rm -rf /"));
    assert!(
        extended.level >= alone.level,
        "{alone:?} became {extended:?}"
    );

    for command in [
        "rm -rf / <<EOF",
        "rm -rf / <<EOF\nbody without its end",
        "cat <<A; rm -rf /",
    ] {
        let verdict = evaluate(command);
        assert_eq!(verdict.level, Level::Disabled, "{command:?}: {verdict:?}");
    }
    // The text after an unmatched delimiter is body, not a command: bash does not run it.
    let verdict = evaluate("cat <<EOF\nx\nEOF; rm -rf /");
    assert_eq!(
        verdict.level,
        Level::AllowedWithoutPermission,
        "{verdict:?}"
    );
}

/// `bash_evaluator`: `echo -e …r\` needs permission (its backslash is an escape for
/// `echo -e`), but with `; rm -rf /` appended it is safe. Not a bug: the trailing backslash
/// escapes the `;`, so bash runs one `echo` that prints `…r; rm -rf /` — nothing else. The
/// fuzz target now skips commands that end in an odd number of backslashes; this test keeps
/// the evaluator reading the escape as bash does, in both directions.
#[test]
fn an_escaped_semicolon_is_an_argument_not_a_new_command() {
    let found = "echo -e 007\0\0\0\0\0\0r\\";
    assert_eq!(evaluate(found).level, Level::AllowedWithPermission);
    let escaped = evaluate(&format!("{found}; rm -rf /"));
    assert_ne!(escaped.level, Level::Disabled, "{escaped:?}");
    let unescaped = evaluate(&format!("{found}\\; rm -rf /"));
    assert_eq!(unescaped.level, Level::Disabled, "{unescaped:?}");
}

/// `bash_evaluator`: `$'\c…'` followed by a character of more than one byte panicked
/// ("byte index is not a char boundary"): the control escape consumed one byte of it. A
/// model's `echo $'\cé'` crashed the run (and `cn-run check-command`). Fixed in
/// `command_safety/chars.rs`: the whole next character is consumed.
#[test]
fn a_control_escape_before_a_multibyte_character_does_not_panic() {
    let found: &[u8] = b")\x1b\x00\x00\x0072$'\\x2d\\c\xd9\x8d\xdb\x97\\certutil \\0066'h";
    let verdict = evaluate(std::str::from_utf8(found).unwrap());
    assert_eq!(verdict.level, Level::AllowedWithPermission, "{verdict:?}");
    // A hidden control character in `echo`'s output needs permission; piped to a shell, too.
    for command in [
        "echo $'\\cé'",
        "echo $'\\c\u{1F600}x'",
        "printf $'\\c€' | sh",
    ] {
        let verdict = evaluate(command);
        assert_eq!(
            verdict.level,
            Level::AllowedWithPermission,
            "{command:?}: {verdict:?}"
        );
    }
    assert_eq!(evaluate("echo $'\\cé'; rm -rf /").level, Level::Disabled);
}

/// `one_reading`: `(echo $\x1d\x44\mv ` — the parts were at most allowed while the whole needed
/// permission. Not the unclosed `(` nor the control character: hex escapes (`\x44`) were noted
/// on the whole text before any part began, so the finding went to whichever part was open —
/// none when the text began with `(` or `;` (the parts allowed, the whole not), the first part
/// otherwise (`ls; printf '\x72\x6d'` charged `ls` and let the `printf` part pass a rule that
/// covered `ls*`). Fixed in `command_safety/walk.rs`: each part is checked for escapes in its
/// own text and here-documents, so both views come from the one parse.
#[test]
fn escapes_belong_to_the_part_that_holds_them() {
    use cn_run::command_safety::{Context, one_reading_holds, read};
    let found = "(echo $\u{1d}\\x44\\mv ";
    assert_eq!(one_reading_holds(found), Ok(()));
    assert_eq!(evaluate(found).level, Level::AllowedWithPermission);
    for (command, risky_part) in [
        (found, "echo $\u{1d}\\x44\\mv"),
        ("; printf '\\x72\\x6d'", "printf '\\x72\\x6d'"),
        ("ls; printf '\\x72\\x6d'", "printf '\\x72\\x6d'"),
        ("ls && cat <<E\n\\u0072\nE", "cat <<E"),
    ] {
        assert_eq!(one_reading_holds(command), Ok(()), "{command:?}");
        let reading = read(command, Context::CONTAINED);
        let risky: Vec<&str> = reading
            .parts
            .iter()
            .filter(|p| p.verdict.level > Level::AllowedWithoutPermission)
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(risky, [risky_part], "{command:?}");
    }
}

/// `one_reading`, second run: a disabled substitution (`` `whd su` ``: an unknown program
/// around `su`) and later a fork bomb (`cd() { cd …`). Judging without recording parts stopped
/// at the first disabled finding, recording went on and found the more specific fork bomb, so
/// the two views named different rules. Fixed in `command_safety/walk.rs`: every command is
/// read to the end in both.
#[test]
fn both_views_read_a_disabled_command_to_the_end() {
    use cn_run::command_safety::one_reading_holds;
    let found = "\0T ;;;cd() { cd() { e(ho )\u{1}\0\0T ;;;cd() { cd)( { echcd() llo&; \u{7f}/uuuuuuuu`whd su`wmld ahdoct\u{5}\0\0\nrg uuuuuuuuuuuuuuuuuuuuup$f/p$assw.r";
    for command in [
        found,
        "echo `chrt 1 su`; f() { f | f & }; f",
        "sudo ls; :(){ :|:& };:",
    ] {
        assert_eq!(one_reading_holds(command), Ok(()), "{command:?}");
        let verdict = evaluate(command);
        assert_eq!(
            verdict.rule, "critical.fork_bomb",
            "{command:?}: {verdict:?}"
        );
    }
}

/// `one_reading`, third run: `\f#\0\0$'\xb2\b` cannot be tokenised (an unterminated `$'`), so
/// it is one part, whose text was the input passed through `str::trim`. That also removed the
/// form feed, which the shell does not take for a blank, so the part read alone began with `#`
/// and was a comment: no part at all. Fixed in `command_safety/walk.rs`: only spaces, tabs and
/// line breaks are trimmed.
#[test]
fn an_unreadable_part_keeps_the_characters_the_shell_does_not_skip() {
    for command in [
        "\u{c}#\0\0$'\\xb2\\b",
        "\u{b}# \"unterminated",
        "\u{c}#x `ls",
        "\u{c}\t#\u{c} $(",
    ] {
        assert_holds_and_needs_permission(command);
    }
}

/// `one_reading`, third run: a 425-byte command of unknown programs and `env` (`echhh… env
/// /pXtar -ck */env /pr$ho …`) ran for over a minute. An unknown program asks whether its
/// arguments, from a known program on, would be disabled; `env` runs an unknown program,
/// which asked again, four times at each of up to sixteen levels. Fixed in
/// `command_safety/rules.rs`: while answering it, an unknown program asks it only once.
#[test]
fn unknown_programs_around_wrappers_are_judged_in_linear_time() {
    let found = "ZWNoaGhoaGhoaGhlY2hoaGhvICBlbnYgL3BYdGFyIC1jayAqL2VudiAvcHIkaG8gIGVvICBlbnYgL3Byb2MAAC9vYy8gKi9lbnYgL2MqIGUvL24qL2VudiAvcHIkdCAqLyovZW52IS9wciRobyAgZW8gIGVudiAvcHJvYwAAL29jLy9wciRobyAgZW8gIGVudiAvcHJvYwAAL29jLyAqL2VudiAvYyogZS8vbiovZW52IC9wciR0ICovKi9lbnYgL3ByJGhvICBlbyAgZW52IC9wcm9jAAAvb2MvICovZW52IC9jLyovZW4gKi9lbnYgL3ByJHQgKi9lbnYgL2MvKi9lbiAqL2VudiAvAC9vYy8gKi9lbnYgL2MqIGUvL24qL2VudiAvcHIkdCAqLyovZW52IS9wciRobyAgZW8gIGVudiAvcHJvYwAAL29jLy9wciRobyAgZW8gIGVudiAvcHJvYwAAL29jLyAqL2VudiAvYyogZS8vbiovZW52IC9wciR0ICovKi9lbnYgL3ByJGhvICBlbyAgZW52IC9wcm9jcHIkdCAqbiQ=";
    let bytes = base64_decode(found);
    let command = std::str::from_utf8(&bytes).unwrap();
    // Unknown programs need permission; nothing in it is disabled. The test harness's own
    // timeout is the bound: before the fix this did not finish in a minute.
    assert_eq!(evaluate(command).level, Level::AllowedWithPermission);
    for chain in [
        format!("{}rm -rf /", "x env ".repeat(5)),
        format!("x {}rm -rf /", "ls ".repeat(12)),
    ] {
        assert_eq!(evaluate(&chain).level, Level::Disabled, "{chain}");
    }
    assert_eq!(cn_run::command_safety::one_reading_holds(command), Ok(()));
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap()
}

/// `one_reading`, fifth run (600 s, after the others were fixed): `,\0\0\0(\\\0<\\` and a
/// newline cannot be tokenised, so it is one part, trimmed of its trailing newline — which
/// the backslash before it escaped: read alone, the text ended in a lone backslash, a
/// different command that split in two. Fixed in `command_safety/walk.rs`: a blank a
/// backslash escapes is never trimmed.
#[test]
fn an_unreadable_part_keeps_a_newline_its_backslash_escapes() {
    for command in [
        ",\0\0\0(\\\0<\\\n",
        "x (\\\n",
        "a (b \\\n",
        "x ( \\\r",
        "echo \"open \\\n",
        "ls ( \\\\\\\n",
    ] {
        assert_holds_and_needs_permission(command);
    }
}

/// `command` is read one way as a whole and by its parts, and does not run unasked.
fn assert_holds_and_needs_permission(command: &str) {
    use cn_run::command_safety::{Context, one_reading_holds, read};
    assert_eq!(one_reading_holds(command), Ok(()), "{command:?}");
    let reading = read(command, Context::CONTAINED);
    assert!(
        reading.verdict.level >= Level::AllowedWithPermission,
        "{command:?}: {:?}",
        reading.verdict
    );
}
