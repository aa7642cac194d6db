//! Planted secrets, end to end through the binary: a secret the model writes into its answer,
//! a file, a denied call and a check's output reaches no output of the run — stdout in every
//! format, stderr, events, result, session, JUnit, GitHub outputs/summary/annotations,
//! uploads, the artifacts folder — in any spelling; and no tool sends one out, however it is
//! encoded (the loopback listener is never reached, the denial is reported).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use crate::support::http::{MockServer, Reply};
use crate::support::runner::{Run, cn_run, files_under, git_init, run, write_files};

/// A secret-looking variable and its value, and whether the job names it in `redact:`.
struct Planted {
    name: &'static str,
    value: &'static str,
    redact: bool,
}

const PLANTED: &[Planted] = &[
    Planted {
        name: "OPENAI_API_KEY",
        value: "sk-proj-Planted0penAIKey9f8e7d6c",
        redact: false,
    },
    Planted {
        name: "GITHUB_TOKEN",
        value: "ghp_PlantedGitHubToken1234567890abcd",
        redact: false,
    },
    Planted {
        name: "DEPLOY_HOOK",
        value: "hook-planted-value-42xyz",
        redact: true,
    },
    Planted {
        name: "DB_PASSWD",
        value: "Pl4nted-db-passwd!value",
        redact: false,
    },
    Planted {
        name: "AZURE_CREDENTIALS",
        value: "azcred_planted_0123456789",
        redact: false,
    },
    Planted {
        name: "AWS_SECRET_ACCESS_KEY",
        value: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTED",
        redact: false,
    },
    Planted {
        name: "NPM_PASS",
        value: "npm-planted-pass-value",
        redact: false,
    },
];

/// Spellings of `secret` that no output may carry.
fn spellings(secret: &str) -> Vec<String> {
    vec![
        secret.to_owned(),
        secret.chars().rev().collect(),
        STANDARD.encode(secret).trim_end_matches('=').to_owned(),
        secret.bytes().map(|b| format!("{b:02x}")).collect(),
    ]
}

fn script(secret: &str, fetch_base: &str) -> String {
    let turns = json!({"turns": [
        {"tool_calls": [
            {"name": "Write", "arguments": {"filepath": "notes.txt", "content": format!("key={secret}\nreversed={}\n", secret.chars().rev().collect::<String>())}},
            {"name": "Fetch", "arguments": {"url": format!("{fetch_base}/leak?k={}", STANDARD.encode(secret))}}
        ]},
        {"text": format!("{{\"summary\": \"the value is {secret}\", \"fixed\": 1}}")}
    ]});
    turns.to_string()
}

fn job(p: &Planted, upload: &str) -> String {
    let redact = if p.redact {
        format!("redact: [{}]\n", p.name)
    } else {
        String::new()
    };
    format!(
        "version: 1\nname: leak\nmodel: {{provider: script, name: m, script: s.json}}\nprompt: go\n{redact}\
         permissions: {{allow: ['Write(notes.txt)', 'Fetch(http://127.0.0.1*)']}}\n\
         checks: [{{name: echo, run: 'echo check saw {v}'}}]\n\
         output_schema: {{type: object, properties: {{summary: {{type: string}}, fixed: {{type: integer}}}}}}\n\
         artifacts: [notes.txt]\n\
         upload: {{url: '{upload}/s/{{run_id}}.json', artifacts_url: '{upload}/a/{{path}}', interval: 1s}}\n",
        v = p.value
    )
}

fn assert_absent(secret: &str, what: &str, text: &str) {
    for s in spellings(secret) {
        assert!(
            !text.contains(&s),
            "{what} carries the secret as {s:?}:\n{text}"
        );
    }
}

async fn leak_run(
    p: &'static Planted,
    format: &'static str,
) -> (Run, tempfile::TempDir, Vec<String>, usize) {
    let upload = MockServer::start_with(|_| Reply::json(200, &json!({}))).await;
    let fetch = MockServer::start_with(|_| Reply::text(200, "text/plain", "ok")).await;
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("job.yaml", &job(p, &upload.url())),
            ("s.json", &script(p.value, &fetch.url())),
            ("README.md", "x\n"),
        ],
    );
    git_init(tmp.path());
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml")
            .args(["--format", format])
            .arg("--junit")
            .arg(dir.join("all.xml"))
            .env(p.name, p.value)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", dir.join("gh_output"))
            .env("GITHUB_STEP_SUMMARY", dir.join("gh_summary"));
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    let bodies = upload
        .requests()
        .iter()
        .map(|q| {
            format!(
                "{} {}\n{}",
                q.method,
                q.path,
                String::from_utf8_lossy(&q.body)
            )
        })
        .collect();
    let fetched = fetch.requests().len();
    (r, tmp, bodies, fetched)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_planted_secret_reaches_no_output_in_any_format() {
    for p in PLANTED {
        for format in ["text", "json", "stream-json"] {
            let what = format!("{} with --format {format}", p.name);
            let (r, tmp, uploads, fetched) = leak_run(p, format).await;
            assert_eq!(r.code, 0, "{what}: {r:#?}");
            // The secret really went through stdout: masked, not dropped.
            assert!(r.stdout.contains("[REDACTED]"), "{what}: {}", r.stdout);
            assert_absent(p.value, &format!("stdout ({what})"), &r.stdout);
            let stderr: String = r
                .stderr
                .lines()
                .filter(|l| !l.starts_with("::add-mask::"))
                .collect::<Vec<_>>()
                .join("\n");
            assert_absent(p.value, &format!("stderr ({what})"), &stderr);
            let mut files = files_under(&tmp.path().join("out"));
            files.extend(["gh_output", "gh_summary", "all.xml"].map(|f| tmp.path().join(f)));
            // diff.patch and the artifacts folder are exact copies of workspace files (a
            // patch must apply); the run flags the diff. Their manifest and uploads are masked.
            assert_eq!(r.result()["secret_in_diff"], true, "{what}");
            files.retain(|f| {
                !f.ends_with("diff.patch") && !f.parent().unwrap().ends_with("artifacts")
            });
            for f in &files {
                let text = std::fs::read_to_string(f).unwrap_or_default();
                assert_absent(p.value, &format!("{} ({what})", f.display()), &text);
            }
            assert!(!uploads.is_empty(), "{what}: nothing was uploaded");
            for body in &uploads {
                assert_absent(p.value, &format!("an upload ({what})"), body);
            }
            // The Fetch carrying the secret was refused, reported, and never sent.
            assert_eq!(fetched, 0, "{what}: the fetch reached the listener");
            let denials = r.result()["permission_denials"].clone();
            assert!(
                denials.to_string().contains("secret.egress"),
                "{what}: {denials}"
            );
        }
    }
}

/// Each spelling of the token a model might send: all refused, the listener never reached.
pub(crate) fn encodings(secret: &str) -> Vec<(&'static str, String)> {
    let pct: String = secret.bytes().map(|b| format!("%{b:02X}")).collect();
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    let mixed_hex: String = hex
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 2 == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    vec![
        ("plain in the query", format!("?t={secret}")),
        ("plain in the path", format!("/{secret}/x")),
        ("base64", format!("?t={}", STANDARD.encode(secret))),
        (
            "base64 with a prefix",
            format!("?t={}", STANDARD.encode(format!("user:{secret}"))),
        ),
        (
            "base64 with a longer prefix",
            format!("?t={}", STANDARD.encode(format!("tk={secret}&z=1"))),
        ),
        (
            "base64url",
            format!("?t={}", URL_SAFE_NO_PAD.encode(secret)),
        ),
        (
            "base64url with a prefix",
            format!("?t={}", URL_SAFE_NO_PAD.encode(format!("ab{secret}"))),
        ),
        ("hex", format!("?t={hex}")),
        ("upper-case hex", format!("?t={}", hex.to_ascii_uppercase())),
        ("mixed-case hex", format!("?t={mixed_hex}")),
        ("every byte URL-encoded", format!("?t={pct}")),
        (
            "URL-encoded twice",
            format!("?t={}", pct.replace('%', "%25")),
        ),
        (
            "reversed",
            format!("?t={}", secret.chars().rev().collect::<String>()),
        ),
        (
            "reversed in the path",
            format!("/{}", secret.chars().rev().collect::<String>()),
        ),
        (
            "base64 of the reversed value",
            format!(
                "?t={}",
                STANDARD.encode(secret.chars().rev().collect::<String>())
            ),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn no_spelling_of_a_secret_leaves_by_fetch() {
    let secret = "ghp_R3v3rsedTokenPlanted0987654321";
    let server = MockServer::start_with(|_| Reply::text(200, "text/plain", "fetched")).await;
    let cases = encodings(secret);
    let mut calls: Vec<Value> = cases
        .iter()
        .map(|(_, tail)| json!({"name": "Fetch", "arguments": {"url": format!("{}{tail}", server.url())}}))
        .collect();
    // The control: a fetch without the secret does reach the listener.
    calls
        .push(json!({"name": "Fetch", "arguments": {"url": format!("{}/harmless", server.url())}}));
    let script = json!({"turns": [{"tool_calls": calls}, {"text": "done"}]}).to_string();
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            (
                "job.yaml",
                "version: 1\nname: egress\nmodel: {provider: script, name: m, script: s.json}\nprompt: go\npermissions: {allow: ['Fetch(http://127.0.0.1*)']}\n",
            ),
            ("s.json", &script),
        ],
    );
    let dir = tmp.path().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        let mut cmd = cn_run(&dir);
        cmd.arg("job.yaml").env("GH_DEPLOY_TOKEN", secret);
        run(cmd, Some(&dir.join("out")))
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{r:#?}");
    let paths: Vec<String> = server.requests().iter().map(|q| q.path.clone()).collect();
    assert_eq!(
        paths,
        ["/harmless"],
        "only the control reached the listener"
    );
    let denials = r.result()["permission_denials"].as_array().unwrap().clone();
    assert_eq!(denials.len(), cases.len(), "{denials:#?}");
    for (d, (what, _)) in denials.iter().zip(&cases) {
        assert_eq!(d["tool_name"], "Fetch", "{what}: {d}");
        assert!(d.to_string().contains("secret.egress"), "{what}: {d}");
        assert_absent(secret, what, &d.to_string());
    }
    // The model was told why.
    let session = std::fs::read_to_string(tmp.path().join("out/session.jsonl")).unwrap();
    assert!(session.contains("nothing secret may leave"), "{session}");
}
