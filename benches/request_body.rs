//! Benchmark: what sending a long history costs a turn with a real provider client — the
//! part of a turn that grows with the run's length by necessity (issue 19 item 4). The
//! scripted provider of `benches/session_turns.sh` sends nothing, so that script measures
//! cn-run's own work per turn without it; this measures it apart: the OpenAI client sends
//! the history of that script (a ~7.5 KB `Write` per turn, and its result) after 30 and
//! after 300 turns to a loopback server that reads the whole body and answers "ok" at once.
//! The time of one request is the body built and serialised, sent over loopback and the
//! tiny answer read back; beside it, the history alone serialised by `serde_json`.

use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use cn_run::conversation::{Message, ToolCall};
use cn_run::provider::openai::{OpenAiClient, OpenAiConfig};
use cn_run::provider::{ChatRequest, RetryPolicy, complete};

const ROUNDS: usize = 21;
const ANSWER: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

/// Runs the benchmark and prints its figures to stdout.
pub(crate) fn run() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    let client = OpenAiClient::new(OpenAiConfig::new(base, "gpt-4.1")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for turns in [30, 300] {
        let history = history(turns);
        let bytes = serde_json::to_vec(&history).unwrap().len();
        let request = ChatRequest {
            model: "gpt-4.1".into(),
            system: "You are a careful assistant.".into(),
            messages: (&history).into(),
            tools: Vec::new(),
            max_tokens: Some(8192),
            temperature: None,
        };
        let ms = runtime.block_on(median_ms(&client, &request));
        let json = median_of(|| {
            black_box(serde_json::to_vec(black_box(&history)).unwrap());
        });
        println!(
            "  history of {turns} turns ({} messages, {:.2} MB): one request {ms:.2} ms \
             (the history alone to JSON: {json:.2} ms)",
            history.len(),
            bytes as f64 / 1e6
        );
    }
}

async fn median_ms(client: &OpenAiClient, request: &ChatRequest<'_>) -> f64 {
    let retry = RetryPolicy {
        max_retries: 0,
        initial_delay: Duration::from_millis(1),
        factor: 1.0,
        max_delay: Duration::from_millis(1),
        ..RetryPolicy::default()
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let turn = complete(
            client,
            request,
            &retry,
            Duration::from_secs(10),
            &cancel,
            &mut |_| {},
        )
        .await
        .unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(turn.text, "ok");
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Median time of `f` in ms over [`ROUNDS`] calls.
fn median_of(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The history of `benches/session_turns.sh` after `turns` turns.
fn history(turns: usize) -> Vec<Message> {
    let mut history = vec![Message::user("write notes")];
    for i in 1..=turns {
        let body: String = format!("turn {i} ")
            .chars()
            .chain(
                "the quick brown fox jumps over the lazy dog "
                    .chars()
                    .cycle(),
            )
            .take(7500)
            .collect();
        let arguments = serde_json::json!({"filepath": format!("notes/f{i}.txt"), "content": body});
        let id = format!("call_{i}");
        history.push(Message::assistant(
            "",
            vec![ToolCall {
                id: id.clone(),
                name: "Write".into(),
                arguments: arguments.to_string(),
            }],
        ));
        history.push(Message::Tool {
            tool_call_id: id,
            name: "Write".into(),
            content: format!("Created notes/f{i}.txt (7500 bytes)"),
            is_error: false,
            images: Vec::new(),
        });
    }
    history
}

/// Answers every request on one keep-alive connection: reads the headers and the whole
/// body (by `Content-Length`), then sends the answer.
fn serve(stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{ANSWER}",
            ANSWER.len()
        );
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}
