use pretty_assertions::assert_eq;

use super::*;
use crate::conversation::ToolCall;

fn user(text: &str) -> Message {
    Message::user(text)
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "Read".into(),
        arguments: r#"{"filepath":"a.rs"}"#.into(),
    }
}

fn result(id: &str, content: &str) -> Message {
    Message::Tool {
        tool_call_id: id.into(),
        name: "Read".into(),
        content: content.into(),
        is_error: false,
        images: Vec::new(),
    }
}

fn exact_counter() -> TokenCounter {
    let mut counter = TokenCounter::new("gpt-4o", u64::MAX);
    assert!(counter.wait_exact());
    counter
}

#[test]
fn threshold_follows_cn_formula() {
    // cn's default model: 200k context, 64k reply → 121 000.
    assert_eq!(threshold(200_000, 64_000), Some(121_000));
    // Small window: the buffer is 20 % of 7 000, above max_tokens.
    assert_eq!(threshold(8_000, 1_000), Some(5_600));
    // The 20 % share (24 781) is capped at 15 000.
    assert_eq!(threshold(128_000, 4_096), Some(108_904));
    assert_eq!(threshold(1_000_000, 32_000), Some(953_000));
    // No room at all.
    assert_eq!(threshold(4_096, 4_096), None);
    assert_eq!(threshold(4_000, 8_000), None);
    assert_eq!(threshold(1_000, 800), None);
}

#[test]
fn fits_keeps_room_for_the_reply_and_the_safety_buffer() {
    assert!(fits(135_900, 64_000, 200_000));
    assert!(!fits(135_901, 64_000, 200_000));
    // No max_tokens: 35 % of the context is reserved.
    assert!(fits(6_400, 0, 10_000));
    assert!(!fits(6_401, 0, 10_000));
    assert_eq!(default_max_tokens(200_000), 64_000);
    assert_eq!(default_max_tokens(32_000), 11_200);
    assert_eq!(summary_budget(200_000, 64_000, 5_000), 130_900);
    assert_eq!(summary_budget(1_000, 64_000, 5_000), 0);
}

#[test]
fn the_summary_replaces_the_history() {
    let history = apply_summary("We were fixing the parser.".into());
    assert_eq!(
        history,
        vec![
            Message::Assistant {
                content: "We were fixing the parser.".into(),
                tool_calls: vec![],
                summary: true,
                reasoning: crate::conversation::Reasoning::default(),
            },
            Message::user(RESUME_MESSAGE),
        ]
    );
    // The history after a compaction ends with the user, as every server wants.
    assert!(matches!(history.last(), Some(Message::User { .. })));
    assert!(is_well_paired(&history));
}

#[test]
fn pairing_rules() {
    let good = vec![
        user("go"),
        Message::assistant("", vec![call("a"), call("b")]),
        result("b", "2"),
        result("a", "1"),
        user("next"),
    ];
    assert!(is_well_paired(&good));
    assert!(is_well_paired(&[]));
    let orphan = vec![user("go"), result("a", "1")];
    assert!(!is_well_paired(&orphan));
    let unanswered = vec![
        Message::assistant("", vec![call("a"), call("b")]),
        result("a", "1"),
        user("next"),
    ];
    assert!(!is_well_paired(&unanswered));
    let trailing = vec![user("go"), Message::assistant("", vec![call("a")])];
    assert!(!is_well_paired(&trailing));
    let twice = vec![
        Message::assistant("", vec![call("a")]),
        result("a", "1"),
        result("a", "1"),
    ];
    assert!(!is_well_paired(&twice));
    let stale = vec![
        Message::assistant("", vec![call("a")]),
        result("a", "1"),
        Message::assistant("", vec![call("b")]),
        result("a", "1"),
    ];
    assert!(!is_well_paired(&stale));
}

/// A well-paired history of `groups` groups with random texts and up to three calls.
fn random_history(rng: &mut fastrand::Rng, groups: usize) -> Vec<Message> {
    let mut out = Vec::new();
    let mut next = 0;
    for g in 0..groups {
        let text = "word ".repeat(rng.usize(1..200));
        if g == 0 || rng.u8(..4) == 0 {
            out.push(Message::user(text));
            continue;
        }
        let calls: Vec<ToolCall> = (0..rng.usize(0..4))
            .map(|_| {
                next += 1;
                call(&format!("call_{next}"))
            })
            .collect();
        let mut results: Vec<Message> = calls
            .iter()
            .map(|c| result(&c.id, &"line\n".repeat(rng.usize(1..300))))
            .collect();
        rng.shuffle(&mut results);
        out.push(Message::assistant(text, calls));
        out.extend(results);
    }
    out
}

fn bytes(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.text().len()).sum()
}

#[test]
fn pruning_drops_whole_groups_from_the_oldest_side() {
    let mut rng = fastrand::Rng::with_seed(3);
    for case in 0..300 {
        let groups = rng.usize(1..30);
        let original = random_history(&mut rng, groups);
        let limit = rng.usize(0..=bytes(&original));
        let mut pruned = original.clone();
        prune_to_fit(&mut pruned, |h| bytes(h) <= limit);
        assert!(is_well_paired(&pruned), "case {case}");
        assert_eq!(
            pruned.last(),
            original.last(),
            "case {case}: the newest message stays"
        );
        let last_user = original
            .iter()
            .rev()
            .find(|m| matches!(m, Message::User { .. }));
        if let Some(last_user) = last_user {
            assert!(
                pruned.contains(last_user),
                "case {case}: the last user message stays"
            );
        }
        // Apart from the protected user message, what is kept is a suffix of the original.
        let tail: Vec<&Message> = pruned.iter().filter(|m| Some(*m) != last_user).collect();
        let original_tail: Vec<&Message> =
            original.iter().filter(|m| Some(*m) != last_user).collect();
        assert_eq!(
            tail[..],
            original_tail[original_tail.len() - tail.len()..],
            "case {case}"
        );
        if bytes(&pruned) > limit {
            // Still too big: only the newest group and the last user's group are left.
            let starts = group_starts(&pruned);
            let protected = pruned
                .iter()
                .rposition(|m| matches!(m, Message::User { .. }));
            for (k, start) in starts.iter().enumerate() {
                assert!(
                    k == starts.len() - 1 || Some(*start) == protected,
                    "case {case}: stopped early"
                );
            }
        }
    }
}

#[test]
fn pruning_stops_as_soon_as_it_fits() {
    let mut history = vec![
        user("one"),
        Message::assistant("two", vec![call("a")]),
        result("a", "three"),
        Message::assistant("four", vec![]),
    ];
    prune_to_fit(&mut history, |h| h.len() <= 3);
    assert_eq!(
        history,
        vec![user("one"), Message::assistant("four", vec![])]
    );
}

#[test]
fn summary_request_keeps_everything_when_it_fits() {
    let mut rng = fastrand::Rng::with_seed(5);
    let history = random_history(&mut rng, 10);
    let mut counter = exact_counter();
    let request = compaction_request(&history, u64::MAX, &mut counter);
    assert_eq!(request[..history.len()], history[..]);
    assert_eq!(request.last(), Some(&Message::user(COMPACTION_PROMPT)));
    assert_eq!(request.len(), history.len() + 1);
    let empty = compaction_request(&[], 0, &mut counter);
    assert_eq!(empty, vec![Message::user(COMPACTION_PROMPT)]);
}

#[test]
fn summary_request_prunes_the_oldest_groups_within_budget() {
    let mut rng = fastrand::Rng::with_seed(9);
    let mut counter = exact_counter();
    let mut pruned = 0;
    for case in 0..150 {
        let groups = rng.usize(2..25);
        let history = random_history(&mut rng, groups);
        let full = counter.count_history(&history);
        let prompt = counter.count_message(&Message::user(COMPACTION_PROMPT));
        let budget = prompt + rng.u64(full / 4..=full);
        let request = compaction_request(&history, budget, &mut counter);
        assert!(is_well_paired(&request), "case {case}");
        assert!(!matches!(request[0], Message::Tool { .. }), "case {case}");
        assert_eq!(request.last(), Some(&Message::user(COMPACTION_PROMPT)));
        let sent: u64 = request.iter().map(|m| counter.count_message(m)).sum();
        let kept = &request[1..request.len() - 1];
        let was_cut = kept.iter().any(|m| m.text().contains("bytes cut here"));
        let cuttable = kept.iter().any(|m| m.text().len() > MIN_KEPT_BYTES);
        assert!(
            sent <= budget || !cuttable,
            "case {case}: {sent} > {budget}"
        );
        if request.len() - 1 < history.len() {
            pruned += 1;
            assert!(request[0].text().contains("left out"), "case {case}");
            if !was_cut {
                assert_eq!(kept, &history[history.len() - kept.len()..], "case {case}");
            }
        }
    }
    assert!(pruned > 50, "only {pruned} of 150 requests were pruned");
}

#[test]
fn a_group_too_large_for_the_budget_is_cut_in_the_middle() {
    let huge = format!("HEAD {}TAIL", "log line with some detail\n".repeat(4_000));
    let history = vec![
        user("start"),
        Message::assistant("", vec![call("a")]),
        result("a", &huge),
    ];
    let mut counter = exact_counter();
    let budget = 2_000;
    let request = compaction_request(&history, budget, &mut counter);
    assert!(is_well_paired(&request));
    let sent: u64 = request.iter().map(|m| counter.count_message(m)).sum();
    assert!(sent <= budget, "{sent}");
    let cut = request
        .iter()
        .find(|m| matches!(m, Message::Tool { .. }))
        .unwrap()
        .text();
    assert!(cut.starts_with("HEAD") && cut.ends_with("TAIL") && cut.contains("bytes cut here"));
}

#[test]
fn continue_is_added_once_when_the_model_stops_right_after_a_compaction() {
    let mut auto = AutoContinue::default();
    assert_eq!(auto.after_reply(true), None);
    auto.compacted();
    assert_eq!(
        auto.after_reply(true),
        Some(Message::user(CONTINUE_MESSAGE))
    );
    assert_eq!(auto.after_reply(true), None);
    auto.compacted();
    assert_eq!(auto.after_reply(false), None);
    assert_eq!(auto.after_reply(true), None);
}
