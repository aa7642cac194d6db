use pretty_assertions::assert_eq;
use serde_json::json;
use tiktoken_rs::{cl100k_base_singleton, o200k_base_singleton};

use super::*;
use crate::conversation::ToolCall;

const PROSE: &str = "The runner keeps a count of every request it is about to send, so that \
compaction starts before the provider refuses the request. Counting must stay cheap: a \
maintenance agent may run for two hundred turns, and nobody wants to pay for a tokenizer \
that a short job never needs. Isn't that the whole point? We'd rather estimate first.";
const CODE: &str = include_str!("compaction.rs");
const CHINESE: &str = "自动压缩在上下文接近上限时触发：模型先总结历史，再用摘要替换之前的全部消息。\
工具调用和它们的结果始终成对保留，绝不会单独发送一个工具结果。";
const RUSSIAN: &str = "Быстрая коричневая лиса перепрыгивает через ленивую собаку, а затем \
возвращается домой и пишет подробный отчёт о проделанной работе.";
const JAPANESE: &str =
    "コンテキストが上限に近づくと、モデルは会話を要約し、その要約がそれまでの履歴を置き換えます。";

fn o200k(text: &str) -> u64 {
    o200k_base_singleton().count_ordinary(text) as u64
}

fn cl100k(text: &str) -> u64 {
    cl100k_base_singleton().count_ordinary(text) as u64
}

fn json_sample() -> String {
    let value = json!({
        "tool": "Edit",
        "arguments": {"filepath": "src/context/tokens.rs", "old_string": "let x = 1;", "new_string": "let x = 2;"},
        "results": [{"line": 12, "ok": true}, {"line": 40, "ok": false, "error": "no match"}],
        "usage": {"input_tokens": 12034, "output_tokens": 512}
    });
    serde_json::to_string_pretty(&value).unwrap()
}

fn exact_counter(model: &str) -> TokenCounter {
    let mut counter = TokenCounter::new(model, u64::MAX);
    assert!(counter.wait_exact());
    counter
}

#[test]
fn models_map_to_their_published_encoding() {
    for model in [
        "gpt-4o",
        "openai/gpt-4.1-mini",
        "gpt-5",
        "o1",
        "o3-mini",
        "o4-mini-high",
        "gpt-oss-120b",
    ] {
        assert_eq!(encoding_for(model), Encoding::O200k, "{model}");
    }
    for model in [
        "gpt-4",
        "gpt-4-turbo",
        "GPT-3.5-turbo",
        "azure/gpt-35-turbo",
    ] {
        assert_eq!(encoding_for(model), Encoding::Cl100k, "{model}");
    }
    for model in [
        "claude-sonnet-4-5",
        "gemini-2.5-pro",
        "mistral-large",
        "qwen3-coder",
        "o3x",
        "olmo-2",
    ] {
        assert_eq!(encoding_for(model), Encoding::Estimate, "{model}");
    }
}

#[test]
fn other_families_are_o200k_times_their_factor() {
    let base = exact_counter("gpt-4o").count_text(PROSE);
    assert_eq!(base, o200k(PROSE));
    for (model, factor) in [
        ("claude-opus-4", 1.23),
        ("gemini-2.0-flash", 1.18),
        ("codestral-latest", 1.26),
    ] {
        let expected = (base as f64 * factor).ceil() as u64;
        assert_eq!(exact_counter(model).count_text(PROSE), expected, "{model}");
    }
    assert_eq!(exact_counter("llama-3.3-70b").count_text(PROSE), base);
    assert_eq!(exact_counter("gpt-4").count_text(PROSE), cl100k(PROSE));
}

#[test]
fn estimate_is_an_upper_bound_on_ordinary_text() {
    let json = json_sample();
    let samples = [
        ("prose", PROSE),
        ("code", CODE),
        ("json", json.as_str()),
        ("chinese", CHINESE),
    ];
    for (name, text) in samples
        .into_iter()
        .chain([("russian", RUSSIAN), ("japanese", JAPANESE)])
    {
        let (est, exact) = (estimate(text), o200k(text));
        assert!(est >= exact, "{name}: estimate {est} < o200k {exact}");
        assert!(
            est <= exact * 3,
            "{name}: estimate {est} is far above o200k {exact}"
        );
    }
    for (name, text) in samples {
        let (est, exact) = (estimate(text), cl100k(text));
        assert!(est >= exact, "{name}: estimate {est} < cl100k {exact}");
    }
}

#[test]
fn estimate_stays_within_its_documented_bound_on_random_text() {
    let mut rng = fastrand::Rng::with_seed(11);
    let alphabet: Vec<char> = ('A'..='Z')
        .chain('a'..='z')
        .chain('0'..='9')
        .chain(['+', '/'])
        .collect();
    let base64: String = (0..8000)
        .map(|_| alphabet[rng.usize(..alphabet.len())])
        .collect();
    let hex: String = (0..8000)
        .map(|_| char::from_digit(rng.u32(..16), 16).unwrap())
        .collect();
    for (name, text) in [("base64", base64), ("hex", hex)] {
        let (est, exact) = (estimate(&text) as f64, o200k(&text) as f64);
        assert!(est >= 0.6 * exact, "{name}: estimate {est} < 0.6 × {exact}");
    }
    assert_eq!(estimate(""), 0);
}

#[test]
fn messages_carry_cn_overheads() {
    let mut counter = exact_counter("gpt-4o");
    let user = Message::user("hello there");
    assert_eq!(counter.count_message(&user), o200k("hello there") + 5);
    let call = ToolCall {
        id: "c1".into(),
        name: "Read".into(),
        arguments: r#"{"filepath":"a.rs"}"#.into(),
    };
    let assistant = Message::assistant("Reading it.", vec![call.clone()]);
    let expected = o200k("Reading it.") + 5 + o200k("Read") + 10 + o200k(&call.arguments);
    assert_eq!(counter.count_message(&assistant), expected);
    let tool = Message::Tool {
        tool_call_id: "c1".into(),
        name: "Read".into(),
        content: "fn main() {}".into(),
        is_error: false,
        images: Vec::new(),
    };
    assert_eq!(counter.count_message(&tool), o200k("fn main() {}") + 10);
    assert_eq!(
        counter.count_history(&[user, assistant, tool.clone()]),
        o200k("hello there") + 5 + expected + o200k("fn main() {}") + 10
    );
    assert_eq!(
        counter.count_request("You are careful.", &[], &[]),
        o200k("You are careful.") + 4
    );
    assert_eq!(
        counter.count_request("", &[tool], &[]),
        o200k("fn main() {}") + 10
    );
}

#[test]
fn tool_list_counts_the_whole_definition_nested_parameters_included() {
    let mut counter = exact_counter("gpt-4o");
    let parameters = json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "description": "How to match.", "enum": ["exact", "fuzzy"]},
            "edits": {"type": "array", "items": {"type": "object", "properties": {"old": {"type": "string"}}}}
        }
    });
    let tool = ToolSpec {
        name: "Edit".into(),
        description: "Replace text in a file.".into(),
        parameters: parameters.clone(),
    };
    let definition = json!({"type": "function", "function": {
        "name": "Edit", "description": "Replace text in a file.", "parameters": parameters}});
    let expected = 24 + o200k(&definition.to_string());
    assert_eq!(
        counter.count_request("", &[], std::slice::from_ref(&tool)),
        expected
    );
    // A deeper schema costs more: nothing nested is ignored.
    let mut deeper = tool;
    deeper.parameters["properties"]["edits"]["items"]["properties"]["new"] =
        json!({"type": "string", "description": "The replacement text for this edit."});
    assert!(counter.count_request("", &[], &[deeper]) > expected);
    assert_eq!(counter.count_request("", &[], &[]), 0);
}

fn random_text(rng: &mut fastrand::Rng) -> String {
    let pieces = [
        PROSE,
        CHINESE,
        RUSSIAN,
        "fn f(x: u32) -> u32 { x + 1 }\n",
        "{\"ok\": true, \"n\": 12}",
        "    \n",
    ];
    (0..rng.usize(1..6))
        .map(|_| pieces[rng.usize(..pieces.len())])
        .collect()
}

fn random_message(rng: &mut fastrand::Rng, id: &mut u32) -> Message {
    *id += 1;
    match rng.u8(..3) {
        0 => Message::user(random_text(rng)),
        1 => {
            let call = ToolCall {
                id: format!("c{id}"),
                name: "Bash".into(),
                arguments: random_text(rng),
            };
            Message::assistant(random_text(rng), vec![call])
        }
        _ => Message::Tool {
            tool_call_id: format!("c{id}"),
            name: "Bash".into(),
            content: random_text(rng),
            is_error: rng.bool(),
            images: Vec::new(),
        },
    }
}

/// Appends, prunes the front, rewrites the tail and replaces everything, checking after
/// each step that the cached count equals a count from scratch.
fn check_incremental(mut counter: TokenCounter, fresh: impl Fn() -> TokenCounter, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut id = 0;
    let mut history = Vec::new();
    for step in 0..120 {
        match rng.u8(..10) {
            0 if history.len() > 3 => drop(history.drain(..rng.usize(1..3))),
            1 if !history.is_empty() => {
                history.pop();
                history.push(random_message(&mut rng, &mut id));
            }
            2 if step % 40 == 0 => history = vec![Message::user("summary so far")],
            _ => history.push(random_message(&mut rng, &mut id)),
        }
        let cached = counter.count_history(&history);
        assert_eq!(
            cached,
            fresh().count_history(&history),
            "seed {seed}, step {step}"
        );
    }
}

#[test]
fn incremental_counts_equal_a_full_recount() {
    for seed in 0..4 {
        check_incremental(exact_counter("gpt-4o"), || exact_counter("gpt-4o"), seed);
        check_incremental(
            exact_counter("claude-sonnet-4"),
            || exact_counter("claude-sonnet-4"),
            seed,
        );
        let estimating = || TokenCounter::new("gpt-4o", u64::MAX);
        check_incremental(estimating(), estimating, seed);
        assert!(!estimating().is_exact());
    }
}

#[test]
fn a_run_far_below_its_threshold_never_builds_the_encoder() {
    let mut counter = TokenCounter::new("gpt-4o", 121_000);
    let history: Vec<Message> = (0..50)
        .map(|i| Message::user(format!("{PROSE} {i}")))
        .collect();
    let total = counter.count_request("You are careful.", &history, &[]);
    assert!(total < 121_000 * 6 / 10, "{total}");
    assert!(!counter.warmup_started());
    assert!(!counter.is_exact());
}

#[test]
fn nearing_the_threshold_builds_the_encoder_in_the_background() {
    let history: Vec<Message> = (0..20)
        .map(|i| Message::user(format!("{PROSE} {i}")))
        .collect();
    let estimated = TokenCounter::new("gpt-4o", u64::MAX).count_history(&history);
    let exact = exact_counter("gpt-4o").count_history(&history);
    assert!(estimated > exact);
    // 70 % of the threshold by the estimate: the build starts, the answer is not delayed.
    let mut counter = TokenCounter::new("gpt-4o", estimated * 10 / 7);
    assert_eq!(counter.count_history(&history), estimated);
    assert!(counter.warmup_started());
    assert!(counter.wait_exact());
    assert_eq!(counter.count_history(&history), exact);
    let more = [history.as_slice(), &[Message::user(CHINESE)]].concat();
    assert_eq!(
        counter.count_history(&more),
        exact_counter("gpt-4o").count_history(&more)
    );
}

#[test]
fn a_total_at_the_threshold_is_never_an_estimate() {
    let history: Vec<Message> = (0..20)
        .map(|i| Message::user(format!("{PROSE} {i}")))
        .collect();
    let estimated = TokenCounter::new("gpt-4o", u64::MAX).count_history(&history);
    let mut counter = TokenCounter::new("gpt-4o", estimated);
    let total = counter.count_history(&history);
    assert!(counter.is_exact());
    assert_eq!(total, exact_counter("gpt-4o").count_history(&history));
}

#[test]
fn large_appends_counted_on_threads_match_serial_counts() {
    let history: Vec<Message> = (0..100)
        .map(|i| Message::user(format!("{CODE}{i}")))
        .collect();
    let mut counter = exact_counter("gpt-4o");
    let expected: u64 = history.iter().map(|m| o200k(m.text()) + 5).sum();
    assert_eq!(counter.count_history(&history), expected);
}

#[test]
fn forgetting_the_cache_picks_up_an_edit_in_the_middle() {
    let mut history: Vec<Message> = (0..6)
        .map(|i| Message::user(format!("{PROSE} {i}")))
        .collect();
    let mut counter = exact_counter("gpt-4o");
    counter.count_history(&history);
    history[3] = Message::user(CHINESE);
    counter.forget_history();
    assert_eq!(
        counter.count_history(&history),
        exact_counter("gpt-4o").count_history(&history)
    );
}

#[test]
fn a_counter_can_move_into_an_async_task() {
    fn assert_send<T: Send>() {}
    assert_send::<TokenCounter>();
}
