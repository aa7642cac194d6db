//! The edit engine against Continue's own edit tests (157 cases in
//! `tests/fixtures/edit_match.json`, offsets in UTF-16 units), plus our own cases for
//! non-ASCII text, MultiEdit atomicity, `replace_all`, uniqueness and re-indentation.
//!
//! A case that knowingly behaves differently from Continue must be listed, with its
//! reason, in `tests/fixtures/edit_match.divergences.json`; the conformance test fails on
//! any other mismatch and on any listed case that no longer differs.

use std::collections::BTreeMap;

use cn_run::edit::*;
use serde_json::{Value, json};

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/edit_match.json"
);
const DIVERGENCES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/edit_match.divergences.json"
);

fn load(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn s<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing in {case}"))
}

fn arr(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
}

/// A match as Continue reports it: UTF-16 offsets and the strategy name.
fn match_json(content: &str, m: &Match) -> Value {
    json!({
        "start_index": byte_to_utf16(content, m.start),
        "end_index": byte_to_utf16(content, m.end),
        "strategy": m.strategy.name(),
    })
}

fn outcome<T>(result: Result<T, EditError>, ok: impl FnOnce(T) -> Value) -> Value {
    match result {
        Ok(v) => json!({ "ok": ok(v) }),
        Err(e) => json!({ "error": e.reason }),
    }
}

fn spec_json(spec: &EditSpec) -> Value {
    json!({"old_string": spec.old_string, "new_string": spec.new_string, "replace_all": spec.replace_all})
}

fn spec_from_continue(old: &Value, new: &Value, replace_all: &Value) -> Value {
    let replace_all = replace_all.as_bool().unwrap_or(false);
    json!({"old_string": old, "new_string": new, "replace_all": replace_all})
}

/// What Continue produced, in the shape [`ours`] produces.
fn expected(case: &Value) -> Value {
    let kind = s(case, "kind");
    if let Some(err) = case.get("expected_error") {
        return json!({ "error": err["reason"] });
    }
    match kind {
        "executeFindAndReplace" | "executeMultiFindAndReplace" => {
            json!({ "ok": case["expected_output"] })
        }
        "validateSingleEdit" => {
            let ok = &case["expected_ok"];
            let spec = spec_from_continue(&ok["oldString"], &ok["newString"], &ok["replaceAll"]);
            json!({ "ok": spec })
        }
        "validateMultiEdit" => {
            let edits = arr(&case["expected_ok"]["edits"]).iter();
            let specs = edits
                .map(|e| spec_from_continue(&e["old_string"], &e["new_string"], &e["replace_all"]));
            json!({ "ok": specs.collect::<Vec<_>>() })
        }
        _ => case["expected"].clone(),
    }
}

/// The raw Edit arguments of a validateSingleEdit case: keys listed in `undefined_args`
/// were absent in the JavaScript test; a JSON `null` elsewhere was a real `null`.
fn single_edit_args(case: &Value) -> Value {
    let undefined = case["undefined_args"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut args = serde_json::Map::new();
    for key in ["old_string", "new_string", "replace_all"] {
        if !undefined.contains(&json!(key)) {
            args.insert(key.to_owned(), case[key].clone());
        }
    }
    Value::Object(args)
}

/// What our engine produces for one case.
fn ours(case: &Value) -> Value {
    let content = case["file_content"].as_str().unwrap_or_default();
    match s(case, "kind") {
        "findSearchMatch" => {
            find_match(content, s(case, "search")).map_or(Value::Null, |m| match_json(content, &m))
        }
        "findSearchMatches" => {
            let found = find_matches(content, s(case, "search"));
            Value::Array(found.iter().map(|m| match_json(content, m)).collect())
        }
        "executeFindAndReplace" => {
            let index = case["edit_index"].as_u64().unwrap_or(0) as usize;
            let replace_all = case["replace_all"].as_bool().unwrap_or(false);
            let (old, new) = (s(case, "old_string"), s(case, "new_string"));
            let result = find_and_replace(content, old, new, replace_all, index);
            outcome(result, |r| json!(r.content))
        }
        "executeMultiFindAndReplace" => {
            let edits: Vec<EditSpec> = arr(&case["edits"])
                .iter()
                .map(|e| EditSpec {
                    old_string: s(e, "old_string").to_owned(),
                    new_string: s(e, "new_string").to_owned(),
                    replace_all: e["replace_all"].as_bool().unwrap_or(false),
                })
                .collect();
            outcome(apply_edits(content, &edits), |(out, _)| json!(out))
        }
        "validateSingleEdit" => outcome(validate_single_edit(&single_edit_args(case)), |e| {
            spec_json(&e)
        }),
        "validateMultiEdit" => outcome(validate_multi_edit(&case["args"]), |edits| {
            edits.iter().map(spec_json).collect()
        }),
        "trimEmptyLines" => {
            let lines: Vec<&str> = arr(&case["args"]["lines"])
                .iter()
                .map(|l| l.as_str().unwrap_or_else(|| panic!("line {l}")))
                .collect();
            let from_end = case["args"]["fromEnd"] == json!(true);
            json!(trim_empty_lines(&lines, from_end))
        }
        other => panic!("unknown kind {other}"),
    }
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[test]
fn conformance_with_continue_edit_cases() {
    let cases = load(CASES);
    let cases = cases.as_array().unwrap();
    assert_eq!(
        cases.len(),
        157,
        "the fixture should hold Continue's 157 cases"
    );
    let listed: BTreeMap<String, String> = load(DIVERGENCES)
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (s(d, "source").to_owned(), s(d, "reason").to_owned()))
        .collect();
    let mut diverging = Vec::new();
    let mut failures = Vec::new();
    for case in cases {
        let source = s(case, "source");
        let (expected, ours) = (expected(case), ours(case));
        if expected == ours {
            continue;
        }
        diverging.push(source);
        let note = if let Some(reason) = listed.get(source) {
            format!("listed divergence: {reason}")
        } else {
            failures.push(source);
            "UNLISTED".to_owned()
        };
        println!(
            "[{}] {source}\n  expected: {}\n  ours:     {}\n  {note}",
            s(case, "kind"),
            short(&expected),
            short(&ours)
        );
    }
    let stale: Vec<&String> = listed
        .keys()
        .filter(|k| !diverging.contains(&k.as_str()))
        .collect();
    let passed = cases.len() - diverging.len();
    println!("edit conformance: {passed}/{} cases agree", cases.len());
    assert!(failures.is_empty(), "unlisted mismatches: {failures:#?}");
    assert!(
        stale.is_empty(),
        "listed but no longer diverging: {stale:#?}"
    );
    assert!(passed * 100 >= cases.len() * 98, "conformance below 98%");
}

/// Byte and UTF-16 span of the match of `search` in `content`, plus the strategy name.
fn located(content: &str, search: &str) -> ((usize, usize), (usize, usize), &'static str) {
    let m = find_match(content, search).unwrap_or_else(|| panic!("{search:?} not found"));
    let utf16 = (
        byte_to_utf16(content, m.start),
        byte_to_utf16(content, m.end),
    );
    ((m.start, m.end), utf16, m.strategy.name())
}

#[test]
fn cjk_offsets_are_bytes_internally_and_utf16_for_continue() {
    let content = "let 名字 = \"张三\";\nprint(名字);";
    // "let " is 4 bytes/units; each CJK character is 3 bytes but 1 UTF-16 unit.
    let (bytes, utf16, strategy) = located(content, "名字 = \"张三\"");
    assert_eq!(strategy, "exactMatch");
    assert_eq!(bytes, (4, 4 + 6 + 3 + 1 + 6 + 1));
    assert_eq!(utf16, (4, 4 + 2 + 3 + 1 + 2 + 1));
    let done = find_and_replace(content, "名字 = \"张三\"", "名字 = \"李四\"", false, 0).unwrap();
    assert_eq!(done.content, "let 名字 = \"李四\";\nprint(名字);");
}

#[test]
fn emoji_surrogate_pairs_survive_whitespace_ignored_matching() {
    let content = "x = [\n  \"🚀\",\n  \"🌍\",\n]";
    let (bytes, utf16, strategy) = located(content, "[\"🚀\",\"🌍\",]");
    assert_eq!(strategy, "whitespaceIgnoredMatch");
    assert_eq!(bytes, (4, content.len()));
    // 19 ASCII characters plus two emoji of 4 bytes / 2 UTF-16 units each.
    assert_eq!(content.len(), 19 + 8);
    assert_eq!(utf16, (4, 19 + 4));
    assert_eq!(utf16_len(content), 23);
    let done = find_and_replace(content, "[\"🚀\",\"🌍\",]", "[\"🌙\"]", false, 0).unwrap();
    assert_eq!(done.content, "x = [\"🌙\"]");
}

#[test]
fn combining_marks_stay_attached_to_their_letters() {
    // "café" spelled with a combining acute accent (e + U+0301).
    let content = "menu: CAFE\u{301} au lait";
    let (bytes, utf16, strategy) = located(content, "cafe\u{301}");
    assert_eq!(strategy, "caseInsensitiveMatch");
    assert_eq!(bytes, (6, 6 + 4 + 2));
    assert_eq!(utf16, (6, 6 + 5));
    let done = find_and_replace(content, "cafe\u{301}", "thé", false, 0).unwrap();
    assert_eq!(done.content, "menu: thé au lait");
}

#[test]
fn case_folding_that_changes_length_maps_back_to_the_right_span() {
    // 'İ' (2 bytes, 1 unit) lowercases to "i̇" (3 bytes, 2 units). JavaScript would
    // report the match one unit too long here; we report exactly "İSTANBUL".
    let content = "xİSTANBUL y";
    let (bytes, utf16, strategy) = located(content, "i\u{307}stanbul");
    assert_eq!(strategy, "caseInsensitiveMatch");
    assert_eq!(&content[bytes.0..bytes.1], "İSTANBUL");
    assert_eq!(bytes, (1, 1 + 2 + 7));
    assert_eq!(utf16, (1, 9));
    // A plain "i" would end inside the lowercase of 'İ', so it does not match there.
    assert!(find_match(content, "xi").is_none());
    // 'ẞ' (3 bytes) lowercases to 'ß' (2 bytes).
    let done = find_and_replace("Ort: STRAẞE 5", "straße", "Weg", false, 0).unwrap();
    assert_eq!(done.content, "Ort: Weg 5");
    assert_eq!(done.strategy, Strategy::CaseInsensitiveMatch);
}

#[test]
fn multi_edit_is_all_or_nothing() {
    let content = "alpha\nbeta\ngamma\n";
    let edit = |old: &str, new: &str| EditSpec {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    };
    let good = [edit("alpha", "ALPHA"), edit("beta", "BETA")];
    let (after, strategies) = apply_edits(content, &good).unwrap();
    assert_eq!(after, "ALPHA\nBETA\ngamma\n");
    assert_eq!(strategies, vec![Strategy::ExactMatch, Strategy::ExactMatch]);

    // The first two edits would succeed on their own; the third fails, so the batch
    // yields an error and no content to write.
    let bad = [
        edit("alpha", "ALPHA"),
        edit("beta", "BETA"),
        edit("delta", "DELTA"),
    ];
    let err = apply_edits(content, &bad).unwrap_err();
    assert_eq!(err.reason, "find_and_replace_old_string_not_found");
    assert!(err.message.contains("edits[2]"), "{err}");
    // Later edits see the result of earlier ones.
    let chained = [edit("alpha", "one"), edit("one\nbeta", "two")];
    assert_eq!(apply_edits(content, &chained).unwrap().0, "two\ngamma\n");
}

#[test]
fn uniqueness_is_required_unless_replace_all() {
    let content = "let x = 1;\nlet y = x + x;\n";
    let err = find_and_replace(content, "x", "z", false, 0).unwrap_err();
    assert_eq!(err.reason, "find_and_replace_multiple_occurrences");
    assert!(err.message.contains("3 places"), "{err}");
    let done = find_and_replace(content, "x", "z", true, 0).unwrap();
    assert_eq!(done.content, "let z = 1;\nlet y = z + z;\n");
    assert_eq!(done.replacements, 3);
    // replace_all also works through the loose strategies, each match re-indented.
    let content = "if a:\n    f( 1 )\nelse:\n  f( 1 )\n";
    let done = find_and_replace(content, "f(1)", "g(1)\ng(2)", true, 0).unwrap();
    assert_eq!(done.strategy, Strategy::WhitespaceIgnoredMatch);
    assert_eq!(
        done.content,
        "if a:\n    g(1)\n    g(2)\nelse:\n  g(1)\n  g(2)\n"
    );
}

#[test]
fn loose_matches_reindent_the_replacement() {
    // Trimmed match: the model dropped the file's tab indentation.
    let content = "fn main() {\n\tlet a = 1;\n}\n";
    let done = find_and_replace(
        content,
        "    let a = 1;",
        "    let a = 2;\n    if a > 1 {\n        go();\n    }",
        false,
        0,
    )
    .unwrap();
    assert_eq!(done.strategy, Strategy::TrimmedMatch);
    assert_eq!(
        done.content,
        "fn main() {\n\tlet a = 2;\n\tif a > 1 {\n\t    go();\n\t}\n}\n"
    );
    // Whitespace-ignored match: unindented old text inside an indented block.
    let content = "class A:\n    def f(self):\n        return  1\n";
    let done = find_and_replace(
        content,
        "def f(self):\n    return 1",
        "def f(self):\n    x = 1\n    return x",
        false,
        0,
    )
    .unwrap();
    assert_eq!(done.strategy, Strategy::WhitespaceIgnoredMatch);
    assert_eq!(
        done.content,
        "class A:\n    def f(self):\n        x = 1\n        return x\n"
    );
    // Exact matches are never re-indented.
    let done = find_and_replace("  a\n", "a", "b\nc", false, 0).unwrap();
    assert_eq!(done.content, "  b\nc\n");
}

#[test]
fn diff_shows_the_edit_with_context() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let new = find_and_replace(old, "e", "E", false, 0).unwrap().content;
    let diff = unified_diff("notes.txt", old, &new);
    assert!(
        diff.starts_with("--- notes.txt\n+++ notes.txt\n@@ -2,7 +2,7 @@\n"),
        "{diff}"
    );
    assert!(diff.contains("\n-e\n+E\n"), "{diff}");
}
