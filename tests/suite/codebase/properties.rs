//! Property tests (proptest) for three promises the safety model and the long-run machinery
//! make, checked on generated inputs instead of hand-picked ones:
//! - the Bash evaluator is monotone: adding `; rm -rf /`, `&& rm -rf /`, `| sh` or `| bash`
//!   to a command, or wrapping it in `sudo`, `$(…)` or backticks, never makes it less strict;
//! - an edit changes the matched span and nothing else;
//! - compaction never leaves a tool result without its call (pruning, and the summary
//!   request).

use std::sync::LazyLock;

use cn_run::command_safety::{Context, Level, evaluate, one_reading_holds, read};
use cn_run::context::compaction::{
    COMPACTION_PROMPT, compaction_request, is_well_paired, prune_to_fit,
};
use cn_run::context::tokens::TokenCounter;
use cn_run::conversation::{Message, ToolCall};
use cn_run::edit::{Strategy as EditStrategy, find_and_replace, find_match, find_matches};
use proptest::prelude::*;

use crate::support::runner::repo_root;

/// 256 cases each (the whole file runs in about a second); `PROPTEST_CASES=N` for more.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------- the evaluator

/// Commands of every risk level: the conformance data plus a few the data lacks.
static COMMANDS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let path = repo_root().join("tests/fixtures/terminal_security.json");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out: Vec<String> = cases
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["command"].as_str().map(str::to_owned))
        .collect();
    out.extend(
        [
            "ls -la",
            "cargo test --all",
            "git status",
            "echo hi > out.txt",
            "cat notes.txt | grep x | wc -l",
            "FOO=1 make",
            "rm -rf build",
            "git push --force",
            "chmod 777 /etc/passwd",
            "curl -s https://example.com/i.sh",
            "printenv OPENAI_API_KEY",
            "python3 -c 'print(1)'",
        ]
        .map(str::to_owned),
    );
    out
});

/// A command from the list, or a combination: `a; b`, `a && b`, `a | b`, `(a)`, `{ a; }`,
/// `VAR=x a`, `a 2>&1`. Commands that end in a backslash or hold a comment are left out:
/// composed with more text (`(del C:\)`, `$( ls # x )`) they swallow the closing bracket,
/// and bash itself refuses the result.
fn command() -> impl Strategy<Value = String> {
    let composable: Vec<String> = COMMANDS
        .iter()
        .filter(|c| !c.ends_with('\\') && !c.contains('#'))
        .cloned()
        .collect();
    let leaf = prop::sample::select(composable);
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["; ", " && ", " || ", " | ", "\n"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("{a}{op}{b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            inner.clone().prop_map(|a| format!("{{ {a}; }}")),
            inner.clone().prop_map(|a| format!("LC_ALL=C {a}")),
            inner.prop_map(|a| format!("{a} 2>&1")),
        ]
    })
}

/// The top-level parts of a command, as the rule matcher sees them.
fn top_parts(command: &str) -> Vec<String> {
    read(command, Context::CONTAINED)
        .parts
        .into_iter()
        .filter(|p| p.depth == 0)
        .map(|p| p.text)
        .collect()
}

/// Texts that can be joined with `; ` without changing how either side is read.
fn joinable(command: &str) -> bool {
    let reading = read(command, Context::CONTAINED);
    !reading.unreadable && !command.contains("<<") && !command.trim_end().ends_with('\\')
}

const DANGEROUS_TAILS: [&str; 4] = ["; rm -rf /", " && rm -rf /", " | sh", " | bash"];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_rule_matcher_sees_exactly_the_parts_the_evaluator_judged(cmd in command()) {
        prop_assert_eq!(one_reading_holds(&cmd), Ok(()));
    }

    #[test]
    fn arbitrary_text_has_one_reading(cmd in "\\PC{0,60}") {
        prop_assert_eq!(one_reading_holds(&cmd), Ok(()));
    }

    #[test]
    fn a_compound_command_has_the_parts_of_its_commands(a in command(), b in command()) {
        prop_assume!(joinable(&a) && joinable(&b));
        let mut both = top_parts(&a);
        both.extend(top_parts(&b));
        prop_assert_eq!(top_parts(&format!("{a}; {b}")), both);
    }

    #[test]
    fn appending_a_dangerous_tail_never_makes_a_command_less_strict(cmd in command()) {
        let before = evaluate(&cmd);
        for tail in DANGEROUS_TAILS {
            let after = evaluate(&format!("{cmd}{tail}"));
            prop_assert!(
                after.level >= before.level,
                "{cmd:?} is {:?} ({}), but with {tail:?} it is {:?} ({})",
                before.level, before.rule, after.level, after.rule
            );
        }
        let destroyed = evaluate(&format!("{cmd}; rm -rf /"));
        prop_assert_eq!(destroyed.level, Level::Disabled, "{:?}: {}", cmd, destroyed.rule);
    }

    #[test]
    fn wrapping_a_command_never_makes_it_less_strict(cmd in command()) {
        let before = evaluate(&cmd);
        // `$( … )` with spaces: `$((` would start arithmetic. Backticks do not nest, so a
        // command that has some is not wrapped in more.
        let mut wraps = vec![format!("sudo {cmd}"), format!("echo $( {cmd} )")];
        if !cmd.contains('`') {
            wraps.push(format!("echo `{cmd}`"));
        }
        for wrapped in wraps {
            let after = evaluate(&wrapped);
            prop_assert!(
                after.level >= before.level,
                "{cmd:?} is {:?} ({}), but {wrapped:?} is {:?} ({})",
                before.level, before.rule, after.level, after.rule
            );
        }
    }

    #[test]
    fn arbitrary_text_with_a_dangerous_tail_is_never_less_strict(cmd in "\\PC{0,40}") {
        let before = evaluate(&cmd);
        for tail in DANGEROUS_TAILS {
            let after = evaluate(&format!("{cmd}{tail}"));
            prop_assert!(after.level >= before.level, "{cmd:?} + {tail:?}: {after:?} < {before:?}");
        }
    }
}

// ---------------------------------------------------------------- the edit matcher

/// File-like text: short lines of words with varied case and indentation.
fn file_text() -> impl Strategy<Value = String> {
    prop::collection::vec("[ \t]{0,4}[a-cA-C é{}();=]{0,12}", 1..10).prop_map(|l| l.join("\n"))
}

/// A search text taken from `content` (a slice, perhaps re-cased, re-indented or padded) or
/// invented.
fn content_and_search() -> impl Strategy<Value = (String, String)> {
    (
        file_text(),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        0..5u8,
        "[a-c \n]{0,6}",
    )
        .prop_map(|(content, a, b, how, invented)| {
            let bounds: Vec<usize> = (0..=content.len())
                .filter(|&i| content.is_char_boundary(i))
                .collect();
            let (x, y) = (a.index(bounds.len()), b.index(bounds.len()));
            let slice = &content[bounds[x.min(y)]..bounds[x.max(y)]];
            let search = match how {
                0 => slice.to_owned(),
                1 => slice.to_uppercase(),
                2 => format!("  {}  ", slice.trim()),
                3 => slice.replace(' ', "").replace('\t', "    "),
                _ => invented,
            };
            (content, search)
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn an_edit_changes_the_matched_span_and_nothing_else(
        (content, search) in content_and_search(),
        new in "[a-z \n\t]{0,10}",
    ) {
        let Ok(done) = find_and_replace(&content, &search, &new, false, 0) else {
            return Ok(());
        };
        let m = find_match(&content, &search).expect("a successful edit had a match");
        prop_assert_eq!(done.strategy, m.strategy);
        let (before, after) = (&content[..m.start], &content[m.end..]);
        let out = done.content.as_str();
        prop_assert!(out.starts_with(before), "the text before the match changed: {:?}", out);
        prop_assert!(
            out.len() >= before.len() + after.len() && out.ends_with(after),
            "the text after the match changed: {:?}", out
        );
        let replaced = &out[before.len()..out.len() - after.len()];
        if matches!(m.strategy, EditStrategy::ExactMatch | EditStrategy::EmptySearch) {
            prop_assert_eq!(replaced, new.as_str());
        }
    }

    #[test]
    fn replace_all_keeps_every_gap_between_matches(
        (content, search) in content_and_search(),
        new in "[a-z]{0,4}",
    ) {
        let Ok(done) = find_and_replace(&content, &search, &new, true, 0) else {
            return Ok(());
        };
        let matches = find_matches(&content, &search);
        prop_assert_eq!(done.replacements, matches.len());
        let mut gaps = Vec::new();
        let mut from = 0;
        for m in &matches {
            prop_assert!(m.start >= from, "matches overlap: {:?}", matches);
            gaps.push(&content[from..m.start]);
            from = m.end;
        }
        gaps.push(&content[from..]);
        let out = done.content.as_str();
        prop_assert!(out.starts_with(gaps[0]) && out.ends_with(gaps[gaps.len() - 1]));
        let mut at = 0;
        for gap in &gaps {
            let Some(pos) = out[at..].find(gap) else {
                return Err(TestCaseError::fail(format!("gap {gap:?} lost in {out:?}")));
            };
            at += pos + gap.len();
        }
        if matches!(done.strategy, EditStrategy::ExactMatch | EditStrategy::EmptySearch) {
            prop_assert_eq!(out, gaps.join(new.as_str()));
        }
    }
}

// ---------------------------------------------------------------- compaction

/// One group of a history: a user message, or an assistant message and its tool results.
#[derive(Debug, Clone)]
enum Group {
    User(usize),
    Turn { text: usize, results: Vec<usize> },
}

fn history() -> impl Strategy<Value = Vec<Message>> {
    let sizes = prop_oneof![4 => 0..200usize, 1 => 200..6000usize];
    let group = prop_oneof![
        1 => sizes.clone().prop_map(Group::User),
        3 => (sizes.clone(), prop::collection::vec(sizes, 0..4))
            .prop_map(|(text, results)| Group::Turn { text, results }),
    ];
    (sizes_first(), prop::collection::vec(group, 0..14)).prop_map(|(first, groups)| {
        let mut out = vec![Message::user("x".repeat(first))];
        for (g, group) in groups.into_iter().enumerate() {
            match group {
                Group::User(n) => out.push(Message::user("u ".repeat(n / 2))),
                Group::Turn { text, results } => {
                    let calls: Vec<ToolCall> = (0..results.len())
                        .map(|i| ToolCall {
                            id: format!("call_{g}_{i}"),
                            name: "Read".into(),
                            arguments: format!("{{\"filepath\": \"f{g}_{i}.rs\"}}"),
                        })
                        .collect();
                    out.push(Message::assistant("a ".repeat(text / 2), calls));
                    for (i, n) in results.into_iter().enumerate() {
                        out.push(Message::Tool {
                            tool_call_id: format!("call_{g}_{i}"),
                            name: "Read".into(),
                            content: "line of a file\n".repeat(n / 15 + 1),
                            is_error: false,
                            images: Vec::new(),
                        });
                    }
                }
            }
        }
        out
    })
}

fn sizes_first() -> impl Strategy<Value = usize> {
    1..300usize
}

fn bytes(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| match m {
            Message::Assistant { tool_calls, .. } => {
                m.text().len() + tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>()
            }
            _ => m.text().len(),
        })
        .sum()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn pruning_never_orphans_a_tool_result(history in history(), budget in 0..20_000usize) {
        prop_assert!(is_well_paired(&history));
        let last_user = history
            .iter()
            .rev()
            .find(|m| matches!(m, Message::User { .. }))
            .cloned();
        let mut pruned = history.clone();
        prune_to_fit(&mut pruned, |m| bytes(m) <= budget);
        prop_assert!(is_well_paired(&pruned), "orphaned result after pruning: {:#?}", pruned);
        let starts_with_result = matches!(pruned.first(), Some(Message::Tool { .. }));
        prop_assert!(!starts_with_result, "pruned history starts with a tool result");
        prop_assert!(pruned.last() == history.last(), "the newest message was dropped");
        prop_assert!(pruned.iter().any(|m| Some(m) == last_user.as_ref()), "the task was dropped");
        // Only whole messages go, in order: what is left is a subsequence of the history.
        let mut rest = history.iter();
        for m in &pruned {
            prop_assert!(rest.any(|h| h == m), "pruning changed or reordered messages");
        }
    }

    #[test]
    fn the_summary_request_never_orphans_a_tool_result(
        history in history(),
        budget in 50..6_000u64,
    ) {
        let mut counter = TokenCounter::new("gpt-4o", u64::MAX);
        let request = compaction_request(&history, budget, &mut counter);
        let (prompt, body) = request.split_last().unwrap();
        prop_assert_eq!(prompt, &Message::user(COMPACTION_PROMPT));
        prop_assert!(is_well_paired(body), "orphaned result in the summary request: {:#?}", body);
        let starts_with_result = matches!(body.first(), Some(Message::Tool { .. }));
        prop_assert!(!starts_with_result, "the summary request starts with a tool result");
        // Every call in the request still has its result, and no result lost its call.
        let calls: usize = body
            .iter()
            .map(|m| match m {
                Message::Assistant { tool_calls, .. } => tool_calls.len(),
                _ => 0,
            })
            .sum();
        let results = body.iter().filter(|m| matches!(m, Message::Tool { .. })).count();
        prop_assert_eq!(calls, results);
    }
}
