//! Benchmark: counting the tokens of a request stays cheap however long the history gets.
//!
//! Builds a deterministic history of mixed messages (English prose, Rust source, JSON tool
//! output, log lines, some Chinese) and reports:
//! - the cost of building the o200k encoder, and a first count of a 1 MB history that
//!   includes that build (the first use in the process);
//! - a cold count of the 1 MB history with the encoder built (threaded as the counter does
//!   it, and one message at a time on one thread), and with the estimate only;
//! - the cost of one turn — append a message, count system prompt + history + tools — on a
//!   100-message and a 2,000-message history, exact and estimated. Flat means the counter
//!   only tokenises what is new.

use std::hint::black_box;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use cn_run::context::tokens::TokenCounter;
use cn_run::conversation::{Message, ToolCall, ToolSpec};

const MB: usize = 1 << 20;
const RUNS: usize = 5;
const TURNS: usize = 60;
const MODEL: &str = "gpt-4o";

const CODE: [&str; 3] = [
    include_str!("../src/context/tokens_counter.rs"),
    include_str!("../src/context/compaction.rs"),
    include_str!("../src/context/tokens_estimate.rs"),
];
const PROSE: [&str; 6] = [
    "The tests fail because the parser treats a trailing comma as the end of the list. ",
    "I will read the module first, then change the tokenizer so that it keeps going. ",
    "Running the whole suite again to make sure nothing else depends on the old behaviour. ",
    "The configuration file lives next to the binary, and the loader falls back to defaults. ",
    "This looks like a race between the writer and the reader; a lock around the flush fixes it. ",
    "Done: the change is small, covered by a new test, and the benchmark did not move. ",
];
const CHINESE: &str = "上下文快满时先压缩历史，再继续执行当前任务。";

/// Runs the benchmark and prints its figures to stdout.
pub(crate) fn run() {
    if let Err(e) = report(&mut io::stdout().lock()) {
        eprintln!("tokens bench: cannot write the report: {e}");
    }
}

fn report(out: &mut impl Write) -> io::Result<()> {
    let history = history_of_bytes(MB);
    let size = text_bytes(&history) as f64 / MB as f64;
    writeln!(
        out,
        "tokens: {} messages, {size:.2} MB of text, model {MODEL}",
        history.len()
    )?;

    // Must come first: the process-wide encoder is built by this count.
    let (first, tokens) = time(|| TokenCounter::new(MODEL, 0).count_history(&history));
    writeln!(
        out,
        "  first count, encoder build included: {} ({tokens} tokens)",
        ms(first)
    )?;
    let build = median(3, || drop(black_box(tiktoken_rs::o200k_base())));
    writeln!(
        out,
        "  o200k encoder build alone (median of 3): {}",
        ms(build)
    )?;

    let cold = median(RUNS, || {
        black_box(exact_counter().count_history(&history));
    });
    writeln!(
        out,
        "  cold count, encoder ready (median of {RUNS}): {}",
        ms(cold)
    )?;
    let serial = median(RUNS, || {
        let mut counter = exact_counter();
        black_box(
            history
                .iter()
                .map(|m| counter.count_message(m))
                .sum::<u64>(),
        );
    });
    writeln!(
        out,
        "  cold count, one thread, message by message: {}",
        ms(serial)
    )?;
    let estimate = median(RUNS, || {
        black_box(TokenCounter::new(MODEL, u64::MAX).count_history(&history));
    });
    writeln!(out, "  cold count, estimate only: {}", ms(estimate))?;

    writeln!(
        out,
        "  one turn (append a message, count system + history + tools), median of {TURNS}:"
    )?;
    for messages in [100, 2_000] {
        let exact = per_turn(messages, exact_counter);
        let estimated = per_turn(messages, || TokenCounter::new(MODEL, u64::MAX));
        writeln!(
            out,
            "    {messages:>5} messages: exact {}  estimate {}",
            us(exact),
            us(estimated)
        )?;
    }
    Ok(())
}

fn exact_counter() -> TokenCounter {
    let mut counter = TokenCounter::new(MODEL, u64::MAX);
    counter.wait_exact();
    counter
}

/// Median time of one turn on a history that starts with `messages` messages.
fn per_turn(messages: usize, new_counter: impl Fn() -> TokenCounter) -> Duration {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut history: Vec<Message> = (0..messages).map(|i| message(&mut rng, i)).collect();
    let (system, tools) = (PROSE.concat().repeat(20), tool_specs());
    let mut counter = new_counter();
    counter.count_request(&system, &history, &tools);
    let mut times: Vec<Duration> = (0..TURNS)
        .map(|turn| {
            history.push(message(&mut rng, messages + turn));
            time(|| counter.count_request(&system, &history, &tools)).0
        })
        .collect();
    times.sort();
    times[TURNS / 2]
}

fn history_of_bytes(bytes: usize) -> Vec<Message> {
    let mut rng = fastrand::Rng::with_seed(1);
    let mut history = Vec::new();
    while text_bytes(&history) < bytes {
        history.push(message(&mut rng, history.len()));
    }
    history
}

/// Message `i` of a user → assistant (tool call) → tool result rhythm.
fn message(rng: &mut fastrand::Rng, i: usize) -> Message {
    let prose = |rng: &mut fastrand::Rng, n: usize| -> String {
        (0..n).map(|_| PROSE[rng.usize(..PROSE.len())]).collect()
    };
    match i % 5 {
        0 => Message::user(format!("{}{CHINESE}", prose(rng, 4))),
        1 | 3 => {
            let arguments =
                serde_json::json!({"filepath": format!("src/module_{i}.rs"), "limit": i})
                    .to_string();
            let call = ToolCall {
                id: format!("call_{i}"),
                name: "Read".into(),
                arguments,
            };
            Message::assistant(prose(rng, 2), vec![call])
        }
        _ => {
            let code = CODE[rng.usize(..CODE.len())];
            let start = code.floor_char_boundary(rng.usize(..code.len() / 2));
            let end =
                code.floor_char_boundary(start + rng.usize(1_000..6_000).min(code.len() - start));
            let log: String = (0..rng.usize(5..30))
                .map(|n| format!("[{n:04}] ok step {n} in {}ms\n", n * 7))
                .collect();
            let content = format!("{}\n{log}", &code[start..end]);
            Message::Tool {
                tool_call_id: format!("call_{}", i - 1),
                name: "Read".into(),
                content,
                is_error: false,
                images: Vec::new(),
            }
        }
    }
}

fn tool_specs() -> Vec<ToolSpec> {
    [
        "Read",
        "Write",
        "Edit",
        "List",
        "Search",
        "Bash",
        "Fetch",
        "Checklist",
    ]
    .into_iter()
    .map(|name| ToolSpec {
        name: name.into(),
        description: PROSE[name.len() % PROSE.len()].repeat(3),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "filepath": {"type": "string", "description": "Path relative to the workspace."},
                "mode": {"type": "string", "enum": ["read", "write", "append"]}
            },
            "required": ["filepath"]
        }),
    })
    .collect()
}

fn text_bytes(history: &[Message]) -> usize {
    history.iter().map(|m| m.text().len()).sum()
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let value = black_box(f());
    (start.elapsed(), value)
}

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| time(&mut f).0).collect();
    times.sort();
    times[runs / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn us(d: Duration) -> String {
    format!("{:>7.1} µs", d.as_secs_f64() * 1e6)
}
