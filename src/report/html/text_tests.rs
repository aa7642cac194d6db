use super::*;

#[test]
fn a_short_text_is_shown_whole() {
    let mut b = Budget::default();
    let s = b.take("one\ntwo\n");
    assert_eq!((s.head.as_str(), s.tail.as_ref()), ("one\ntwo\n", None));
    assert_eq!((s.bytes, s.lines, s.hidden_bytes), (8, 2, 0));
}

#[test]
fn a_long_text_shows_head_and_tail_cut_at_lines_and_counts_what_is_hidden() {
    let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
    let mut b = Budget::default();
    let s = b.take(&text);
    let tail = s.tail.clone().unwrap();
    assert!(
        s.head.starts_with("line 0\n") && s.head.ends_with('\n'),
        "{}",
        &s.head[s.head.len() - 20..]
    );
    assert!(
        tail.ends_with("line 9999\n") && tail.starts_with("line "),
        "{}",
        &tail[..20]
    );
    assert!(s.head.len() <= HEAD && tail.len() <= TAIL);
    assert_eq!(s.head.len() + tail.len() + s.hidden_bytes, text.len());
    let shown_lines = line_count(&s.head) + line_count(&tail);
    assert_eq!(shown_lines + s.hidden_lines, 10_000);
    assert!(!s.starved);
}

#[test]
fn a_cut_never_splits_a_character() {
    let text = "é".repeat(20_000);
    let s = Budget::default().take(&text);
    assert!(s.head.chars().all(|c| c == 'é'));
    assert!(s.tail.unwrap().chars().all(|c| c == 'é'));
}

#[test]
fn once_the_budget_is_spent_texts_show_less_and_say_so() {
    let big = "x".repeat(100_000);
    let mut b = Budget::new(HEAD + TAIL + 10);
    assert!(!b.take(&big).starved);
    let s = b.take(&big);
    assert!(s.starved);
    assert!(s.head.len() <= SPENT_HEAD && s.tail.unwrap().len() <= SPENT_TAIL);
    assert_eq!(b.starved, 1);
    // A short text is still shown whole, and is not counted as cut.
    assert_eq!(b.take("short").head, "short");
    assert_eq!(b.starved, 1);
}

#[test]
fn escapes_go_and_reordering_characters_are_shown_as_code_points() {
    let text = "\u{1b}[31mred\u{1b}[0m admin\u{202E}txt.exe\u{2066}x\u{200B}";
    assert_eq!(
        visible(readable(text)),
        "red admin[U+202E]txt.exe[U+2066]x[U+200B]"
    );
    // Where no block cleaned it (a tool's name), an escape shows as its code point.
    assert_eq!(
        visible("a\u{1b}[31m\u{0}b\tc\n".to_owned()),
        "a[U+001B][31m[U+0000]b\tc\n"
    );
}

#[test]
fn counts_have_thousands_separators() {
    assert_eq!(count(0u64), "0");
    assert_eq!(count(999u64), "999");
    assert_eq!(count(1_000u64), "1,000");
    assert_eq!(count(15_728_640u64), "15,728,640");
}
