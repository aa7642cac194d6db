//! report.html, opened by headless Chromium for runs of every shape: passing, failing,
//! denied, stopped by a limit, resumed, parallel, killed, hostile, and big (a 15 MB tool
//! output, 2,000 turns). Each test checks what the page shows (the DOM Chromium built),
//! that it asked for nothing over the network (its network log, and for the hostile run a
//! loopback listener its text points at), that it is the fold of the run's events
//! (`cn-run report RUN --html FILE` writes the same bytes), and leaves a screenshot in
//! `target/report-shots/` to look at. Without Chromium the browser part skips, saying so.

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::browser::{self, Opened};
use crate::support::runner::{
    Run, cn_run, git_init, run, run_parallel_jobs, run_scripted, write_files,
};

fn run_job(dir: &Path, name: &str, job_rest: &str, script: &str, extra: &[&str]) -> Run {
    run_scripted(dir, name, "fix a.txt", job_rest, script, extra)
}

/// `cn-run report FOLDER --html FILE` writes the bytes the run wrote (the page is the
/// fold of the events), and Chromium opens the page without a request; `None` without
/// Chromium.
fn open_page(folder: &Path, shot: &str, size: (u32, u32)) -> Option<Opened> {
    let page = folder.join("report.html");
    let written = std::fs::read_to_string(&page).expect("the run wrote report.html");
    let again = folder.join("again.html");
    let mut cmd = cn_run(folder);
    cmd.arg("report").arg(folder).arg("--html").arg(&again);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(
        std::fs::read_to_string(&again).unwrap() == written,
        "report --html differs from the run's page"
    );
    let chromium = browser::chromium()?;
    let opened = browser::open(&chromium, &page, &browser::shot_path(shot), size);
    assert!(opened.dom.contains("</html>"), "{}", opened.stderr);
    assert!(
        opened.page_requests.is_empty(),
        "the page asked for {:?}",
        opened.page_requests
    );
    assert_links_land(&opened.dom);
    Some(opened)
}

/// Every link of the page goes to an anchor of the page, and every fold can be opened
/// with the keyboard (a `<details>` has its `<summary>`).
fn assert_links_land(dom: &str) {
    for (i, _) in dom.match_indices("<a ") {
        let tag = &dom[i..i + dom[i..].find('>').unwrap()];
        let href = &tag[tag.find("href=\"").unwrap() + 6..];
        let target = &href[..href.find('"').unwrap()];
        let id = target
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("a link out of the page: {tag}"));
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "a link to #{id}, which is not on the page"
        );
    }
    assert_eq!(
        dom.matches("<details").count(),
        dom.matches("<summary").count()
    );
    assert!(
        dom.find("class=\"skip\"") < dom.find("<main"),
        "the skip link comes first"
    );
}

/// The part of the DOM from the top-level section `id` to the next one.
pub(crate) fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<section id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &dom[start + 1..];
    let end = rest
        .find("<section id=\"")
        .map_or(dom.len(), |e| start + 1 + e);
    &dom[start..end]
}

#[test]
fn a_passing_run_shows_its_calls_rules_diff_checkpoints_and_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "passing",
        "permissions: {allow: ['Edit(a.txt)', 'Bash(echo *)']}\nchecks: [{name: unit, run: 'grep -q b a.txt'}]\n",
        "turns:\n  - tool_calls: [{name: Read, id: r1, arguments: {filepath: a.txt}}]\n  - tool_calls: [{name: Edit, id: e1, arguments: {file_path: a.txt, old_string: \"a\\n\", new_string: \"b\\n\"}}]\n  - tool_calls: [{name: Bash, id: b1, arguments: {command: 'echo done'}}]\n  - text: all good\n",
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let Some(page) = open_page(&tmp.path().join("out"), "passing", (1280, 2400)) else {
        return;
    };
    let dom = &page.dom;
    assert_eq!(browser::title(dom), "cn-run: passing — success");
    let outcome = section(dom, "outcome");
    assert!(
        outcome.contains("exit code <strong>0</strong>") && outcome.contains("all good"),
        "{outcome}"
    );
    let talk = section(dom, "conversation");
    assert_eq!(
        talk.matches("<section class=\"call allowed\"").count(),
        3,
        "{talk}"
    );
    assert!(
        talk.contains("rule `Edit(a.txt)` (from job)"),
        "the rule behind the Edit"
    );
    assert!(
        talk.contains("rule `Bash(echo *)` (from job)"),
        "the rule behind the Bash call"
    );
    assert!(
        talk.contains("<span class=\"del\">-a</span><span class=\"add\">+b</span>"),
        "the edit as a diff"
    );
    assert!(talk.contains("echo done"), "the command");
    // The Edit call links to the checkpoint after it, and the checkpoint back to it.
    let edit = &talk[talk.find("id=\"c2\"").unwrap()..];
    let link = &edit[edit.find("href=\"#k").unwrap() + 6..];
    let anchor = &link[..link.find('"').unwrap()];
    let marks = section(dom, "checkpoints");
    let row = &marks[marks.find(&format!("id=\"{}\"", &anchor[1..])).unwrap()..];
    assert!(
        row[..row.find("</tr>").unwrap()].contains("href=\"#c2\""),
        "{row}"
    );
    assert_eq!(
        section(dom, "timeline").matches("<tr>").count(),
        5,
        "a header and four turns"
    );
    assert!(section(dom, "checks").contains("passed"));
    assert!(section(dom, "changes").contains("a.txt (+1 −1)"));
    assert!(section(dom, "policy").contains("Bash(echo *)"));
}

#[test]
fn a_failing_run_shows_why_and_the_checks_output() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "failing",
        "checks: [{name: never, run: 'echo nope-from-the-check; exit 3'}]\n",
        "turns:\n  - text: done\n",
        &[],
    );
    assert_eq!(r.code, 1, "{r:#?}");
    let Some(page) = open_page(&tmp.path().join("out"), "failing", (1280, 1600)) else {
        return;
    };
    assert_eq!(browser::title(&page.dom), "cn-run: failing — failed");
    assert!(section(&page.dom, "outcome").contains("exit code <strong>1</strong>"));
    let checks = section(&page.dom, "checks");
    assert!(
        checks.contains("failed")
            && checks.contains("nope-from-the-check")
            && checks.contains("exit 3"),
        "{checks}"
    );
}

#[test]
fn a_denied_call_shows_the_rule_and_how_a_job_would_allow_it() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "denied",
        "permissions: {exclude: ['Bash(rm *)']}\n",
        "turns:\n  - tool_calls: [{name: Bash, id: x1, arguments: {command: 'rm -rf a.txt'}}]\n  - tool_calls: [{name: Bash, id: x2, arguments: {command: 'npm install left-pad'}}]\n  - text: gave up\n",
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(tmp.path().join("a.txt").exists());
    let Some(page) = open_page(&tmp.path().join("out"), "denied", (1280, 1600)) else {
        return;
    };
    let talk = section(&page.dom, "conversation");
    assert_eq!(
        talk.matches("<section class=\"call denied\"").count(),
        2,
        "{talk}"
    );
    assert!(talk.contains("rule `Bash(rm *)` (from job)"), "{talk}");
    let denials = section(&page.dom, "denials");
    assert!(
        denials.contains("exclude → denied") && denials.contains("ask → denied"),
        "{denials}"
    );
    assert!(denials.contains("href=\"#c1\"") && denials.contains("href=\"#c2\""));
}

#[test]
fn a_run_stopped_by_a_limit_says_which_and_its_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "limit",
        "limits: {max_turns: 1}\npermissions: {allow: ['Bash(echo *)']}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo one'}}]\n  - text: never\n",
        &[],
    );
    assert_eq!(r.code, 4, "{r:#?}");
    let Some(page) = open_page(&tmp.path().join("out"), "limit", (1280, 1400)) else {
        return;
    };
    assert_eq!(browser::title(&page.dom), "cn-run: limit — limit_reached");
    let outcome = section(&page.dom, "outcome");
    assert!(
        outcome.contains("Limit reached: <strong>max_turns</strong> (max_turns: 1)"),
        "{outcome}"
    );
}

#[test]
fn a_resumed_run_shows_both_runs_in_one_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let r = run_job(
        dir,
        "resumed",
        "limits: {max_turns: 1}\npermissions: {allow: ['Bash(echo *)']}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo first-run'}}]\n  - text: finished after the resume\n",
        &[],
    );
    assert_eq!(r.code, 4, "{r:#?}");
    let mut cmd = cn_run(dir);
    cmd.arg("--resume")
        .arg(dir.join("out"))
        .args(["--max-turns", "5", "-p", "go on"]);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let Some(page) = open_page(&dir.join("out"), "resumed", (1280, 1600)) else {
        return;
    };
    assert_eq!(browser::title(&page.dom), "cn-run: resumed — success");
    let talk = section(&page.dom, "conversation");
    let resumed = talk.find("Resumed at").expect("the resume is marked");
    assert!(talk.find("echo first-run").unwrap() < resumed);
    assert!(
        talk[resumed..].contains("go on") && talk[resumed..].contains("finished after the resume")
    );
    assert!(section(&page.dom, "outcome").contains("The run was started 2 times"));
}

#[test]
fn each_job_of_a_parallel_call_has_its_page() {
    let tmp = tempfile::tempdir().unwrap();
    let folders = run_parallel_jobs(tmp.path(), 2);
    for (n, f) in folders.iter().enumerate() {
        let html = std::fs::read_to_string(f.join("report.html")).unwrap();
        assert!(
            html.contains(&format!("job {} done", n + 1)),
            "{}",
            f.display()
        );
        assert!(html.contains("(worktree)"), "the isolation is shown");
    }
    let Some(page) = open_page(&folders[1], "parallel", (1280, 1400)) else {
        return;
    };
    assert_eq!(browser::title(&page.dom), "cn-run: job2 — success");
}

#[test]
fn a_killed_run_gets_a_page_that_says_it_did_not_finish() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_job(
        tmp.path(),
        "killed",
        "permissions: {allow: ['Bash(echo *)']}\n",
        "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'echo one'}}]\n  - tool_calls: [{name: Bash, arguments: {command: 'echo two'}}]\n  - text: done\n",
        &[],
    );
    assert_eq!(r.code, 0, "{r:#?}");
    let folder = tmp.path().join("out");
    // What a kill leaves: events up to the second call's start, the last line torn.
    let events = std::fs::read_to_string(folder.join("events.jsonl")).unwrap();
    let (second, _) = events
        .match_indices("\"type\":\"tool.started\"")
        .nth(1)
        .unwrap();
    let end = events[second..].find('\n').unwrap() + second + 1;
    std::fs::write(folder.join("events.jsonl"), &events[..end + 30]).unwrap();
    for f in ["report.html", "result.json", "junit.xml", "diff.patch"] {
        let _ = std::fs::remove_file(folder.join(f));
    }
    let page = tmp.path().join("killed.html");
    let mut cmd = cn_run(tmp.path());
    cmd.arg("report").arg(&folder).arg("--html").arg(&page);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("the run did not finish"),
        "the outcome says so"
    );
    assert!(
        html.contains("echo two") && html.contains("No result recorded"),
        "the call in flight is shown"
    );
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let opened = browser::open(
        &chromium,
        &page,
        &browser::shot_path("killed"),
        (1280, 1400),
    );
    assert_eq!(
        browser::title(&opened.dom),
        "cn-run: killed — internal_error"
    );
    assert!(
        opened.page_requests.is_empty(),
        "{:?}",
        opened.page_requests
    );
}

/// A loopback listener counting the connections made to it.
struct Listener {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Listener {
    fn start() -> Listener {
        let socket = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = socket.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        std::thread::spawn(move || {
            for stream in socket.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut s = stream;
                let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(200)));
                let _ = s.read(&mut [0u8; 512]);
                let _ = std::io::Write::write_all(
                    &mut s,
                    b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
                );
            }
        });
        Listener { port, hits }
    }
}

/// Texts a model, a tool or a check might write to run script, load something or
/// restyle the page; each points at `port` or names the page's title.
fn payloads(port: u16) -> Vec<String> {
    let at = format!("http://127.0.0.1:{port}");
    vec![
        "<script>document.title='PWNED'</script>".to_owned(),
        format!("<img src=\"{at}/img\" onerror=\"document.title='PWNED'\">"),
        "<a href=\"javascript:document.title='PWNED'\">x</a>".to_owned(),
        format!("<style>@import url({at}/css); body{{display:none}}</style>"),
        "</pre></details></div></section><script>document.title='PWNED'</script>".to_owned(),
        "<svg onload=\"document.title='PWNED'\"></svg>".to_owned(),
        format!("<iframe src=\"{at}/frame\"></iframe>"),
        format!("<meta http-equiv=\"refresh\" content=\"0;url={at}/refresh\">"),
        format!("<base href=\"{at}/\"><link rel=stylesheet href=\"{at}/link.css\">"),
        format!(
            "\" onmouseover=\"document.title='PWNED'\" style=\"background:url({at}/attr)\" x=\""
        ),
        format!("<object data=\"{at}/object\"></object><embed src=\"{at}/embed\">"),
        format!(
            "<noscript><p title=\"</noscript><img src={at}/ns onerror=document.title='PWNED'>\">"
        ),
        "\u{202E}lmth.exe <!--".to_owned(),
    ]
}

#[test]
fn hostile_text_from_the_model_tools_and_checks_runs_nothing_and_loads_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let listener = Listener::start();
    let all = payloads(listener.port).join("\n");
    let yaml = |s: &str| serde_json::to_string(s).unwrap();
    write_files(tmp.path(), &[("hostile.txt", &all)]);
    let script = format!(
        "turns:\n  - text: {t}\n    tool_calls:\n      - {{name: Read, id: {t}, arguments: {{filepath: hostile.txt}}}}\n      - {{name: {t}, id: u1, arguments: {{x: {t}}}}}\n  - tool_calls:\n      - {{name: Write, id: w1, arguments: {{filepath: out.txt, content: {t}}}}}\n      - {{name: Bash, id: b1, arguments: {{command: 'cat hostile.txt'}}}}\n  - text: {t}\n",
        t = yaml(&all)
    );
    let r = run_job(
        tmp.path(),
        "hostile",
        "permissions: {mode: auto}\nchecks: [{name: shows, run: 'cat hostile.txt; exit 1'}]\n",
        &script,
        &[],
    );
    assert_eq!(r.code, 1, "{r:#?}");
    let html = std::fs::read_to_string(tmp.path().join("out/report.html")).unwrap();
    assert!(
        html.matches("&lt;script&gt;").count() >= 5,
        "the payloads are shown, as text"
    );
    let Some(page) = open_page(&tmp.path().join("out"), "hostile", (1280, 2400)) else {
        return;
    };
    assert_eq!(
        browser::title(&page.dom),
        "cn-run: hostile — failed",
        "a script ran"
    );
    for tag in [
        "<script",
        "<img",
        "<iframe",
        "<svg",
        "<base",
        "<link",
        "<object",
        "<embed",
        "<noscript",
    ] {
        assert!(!page.dom.contains(tag), "the page has a {tag} element");
    }
    assert_eq!(page.dom.matches("<style").count(), 1);
    assert_eq!(page.dom.matches("<meta").count(), 6);
    assert!(
        page.dom.contains("[U+202E]"),
        "the override is shown, not applied"
    );
    assert_eq!(
        listener.hits.load(Ordering::SeqCst),
        0,
        "the page reached the listener"
    );
}

/// A stylesheet from a host of Google's, as pages load fonts (no network here: the
/// request is still in the log).
const GOOGLE_FONT: &str =
    "<link rel=stylesheet href=\"https://fonts.googleapis.com/css?family=Roboto\">";

#[test]
fn the_control_the_same_text_unescaped_runs_and_reaches_the_listener() {
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let listener = Listener::start();
    let raw = format!(
        "<!DOCTYPE html><html><head><title>cn-run: hostile — failed</title>{GOOGLE_FONT}</head><body><script>fetch('http://127.0.0.1:{}/script-ran')</script>{}</body></html>",
        listener.port,
        payloads(listener.port).join("\n")
    );
    let page = tmp.path().join("raw.html");
    std::fs::write(&page, raw).unwrap();
    let opened = browser::open(&chromium, &page, &browser::shot_path("control"), (800, 600));
    assert!(
        listener.hits.load(Ordering::SeqCst) > 0,
        "the payloads reach the listener"
    );
    // A page's request to a host Chromium's own services also use is the page's.
    for asked in [
        "/script-ran",
        "/img",
        "/frame",
        "/refresh",
        "css?family=Roboto",
    ] {
        assert!(
            opened.page_requests.iter().any(|u| u.ends_with(asked)),
            "{asked}: {:?}",
            opened.page_requests
        );
    }
}

/// A run whose one Bash call prints 15.9 MB, in a window large enough that the output goes
/// to the model as it is (no compaction); its run folder.
fn big_output_run(dir: &Path) -> PathBuf {
    write_files(
        dir,
        &[
            (
                "job.yaml",
                "version: 1\nname: big\nmodel: {provider: script, name: m, script: s.yaml, context_length: 100000000}\nprompt: count\npermissions: {allow: ['Bash(seq *)']}\ntools: {bash: {max_output_chars: 20000000, max_output_lines: 3000000}}\n",
            ),
            (
                "s.yaml",
                "turns:\n  - tool_calls: [{name: Bash, arguments: {command: 'seq 1 2100000'}}]\n  - text: counted\n",
            ),
        ],
    );
    git_init(dir);
    let mut cmd = cn_run(dir);
    cmd.arg("job.yaml");
    let r = run(cmd, Some(&dir.join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    dir.join("out")
}

#[test]
fn a_15_mb_tool_output_is_cut_on_the_page_which_says_where_the_rest_is() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = big_output_run(tmp.path());
    let events = std::fs::metadata(folder.join("events.jsonl"))
        .unwrap()
        .len();
    assert!(
        events > 15_000_000,
        "the whole output is in the events ({events} bytes)"
    );
    let size = std::fs::metadata(folder.join("report.html")).unwrap().len();
    assert!(size < 200_000, "report.html is {size} bytes");
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let pdf = tmp.path().join("printed.pdf");
    let page = browser::open_and_print(
        &chromium,
        &folder.join("report.html"),
        &browser::shot_path("big"),
        (390, 844),
        Some(&pdf),
    );
    assert!(page.page_requests.is_empty(), "{:?}", page.page_requests);
    let talk = section(&page.dom, "conversation");
    assert!(talk.contains("\n2100000"), "the last line is shown");
    assert!(
        talk.contains("not shown here") && talk.contains("events.jsonl (the event with \"seq\":"),
        "the cut is said"
    );
    // Printed, the folded lines are on paper too (a fold is closed on screen).
    let Some(text) = browser::pdf_text(&pdf) else {
        return;
    };
    assert!(
        text.contains("\n500\n") && text.contains("2100000"),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(text.contains("not shown here"));
}

#[test]
fn a_2000_turn_run_is_one_bounded_page() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("run");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("events.jsonl"), many_turns(2000)).unwrap();
    let page = tmp.path().join("p.html");
    let mut cmd = cn_run(tmp.path());
    cmd.arg("report").arg(&folder).arg("--html").arg(&page);
    let r = run(cmd, None);
    assert_eq!(r.code, 0, "{r:#?}");
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 8_000_000, "{size} bytes");
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let opened = browser::open(
        &chromium,
        &page,
        &browser::shot_path("turns2000"),
        (1280, 1200),
    );
    assert_eq!(opened.dom.matches("<div class=\"turn\">").count(), 2000);
    assert!(opened.dom.contains("id=\"t2000\""));
    assert!(opened.page_requests.is_empty());
}

/// events.jsonl of a run of `turns` turns, each one Bash call with a short output.
fn many_turns(turns: u32) -> String {
    let mut lines = Vec::new();
    let mut seq = 0;
    let mut push = |v: serde_json::Value| {
        seq += 1;
        let mut line = serde_json::json!({"schema_version": 1, "seq": seq, "ts": "2026-01-01T00:00:00.000Z", "run_id": "r"});
        line.as_object_mut()
            .unwrap()
            .extend(v.as_object().unwrap().clone());
        lines.push(line.to_string());
    };
    push(
        serde_json::json!({"type": "run.started", "job": "long", "prompt": "go", "provider": "script",
        "model": "m", "workspace": "/w", "tools": ["Bash"], "mode": "auto", "resumed": false}),
    );
    let out = "x".repeat(300);
    for t in 1..=turns {
        let id = format!("c{t}");
        push(serde_json::json!({"type": "turn.started", "turn": t}));
        push(
            serde_json::json!({"type": "assistant.message", "turn": t, "text": format!("step {t}"),
            "tool_calls": [{"id": id, "name": "Bash", "arguments": "{\"command\":\"echo\"}"}],
            "usage": {"input_tokens": 1000 + t, "output_tokens": 20}, "cost_usd": 0.001}),
        );
        push(
            serde_json::json!({"type": "tool.started", "turn": t, "call_id": id, "tool": "Bash", "arguments": {"command": "echo"}}),
        );
        push(
            serde_json::json!({"type": "tool.finished", "turn": t, "call_id": id, "tool": "Bash", "status": "ok", "output": out, "duration_ms": 2}),
        );
        push(serde_json::json!({"type": "turn.completed", "turn": t, "num_turns": t}));
    }
    push(
        serde_json::json!({"type": "run.completed", "status": "success", "exit_code": 0, "reason": "the agent finished",
        "result": "done", "num_turns": turns, "duration_ms": 1000, "usage": {"input_tokens": 1, "output_tokens": 1},
        "total_cost_usd": 2.0, "cost_unknown": false}),
    );
    lines.join("\n") + "\n"
}

#[test]
fn the_flag_and_the_jobs_outputs_turn_the_page_off_and_on() {
    let cases = [
        ("", &[][..], true),
        ("", &["--html", "off"][..], false),
        ("outputs: {html: false}\n", &[][..], false),
        ("outputs: {html: false}\n", &["--html", "on"][..], true),
        ("outputs: {html: true}\n", &["--html", "off"][..], false),
    ];
    for (job, flags, written) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let r = run_job(tmp.path(), "switch", job, "turns:\n  - text: ok\n", flags);
        assert_eq!(r.code, 0, "{r:#?}");
        let page = tmp.path().join("out/report.html");
        assert_eq!(page.exists(), written, "{job} {flags:?}");
        let path = r.result()["report_path"].clone();
        assert_eq!(
            path.as_str().map(PathBuf::from),
            written.then_some(page),
            "{job} {flags:?}"
        );
    }
}

#[test]
fn the_step_summary_and_the_step_outputs_name_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_files(dir, &[("gh_output", ""), ("gh_summary", "")]);
    let job =
        "version: 1\nname: gh\nmodel: {provider: script, name: m, script: s.yaml}\nprompt: p\n";
    write_files(
        dir,
        &[("job.yaml", job), ("s.yaml", "turns:\n  - text: ok\n")],
    );
    git_init(dir);
    let mut cmd = cn_run(dir);
    cmd.arg("job.yaml")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", dir.join("gh_output"))
        .env("GITHUB_STEP_SUMMARY", dir.join("gh_summary"));
    let r = run(cmd, Some(&dir.join("out")));
    assert_eq!(r.code, 0, "{r:#?}");
    let page = dir.join("out/report.html").canonicalize().unwrap();
    let outputs = std::fs::read_to_string(dir.join("gh_output")).unwrap();
    assert!(
        outputs.contains(&format!("report={}\n", page.display())),
        "{outputs}"
    );
    assert!(
        outputs.contains(&format!("\"report\":\"{}\"", page.display())),
        "{outputs}"
    );
    let summary = std::fs::read_to_string(dir.join("gh_summary")).unwrap();
    assert!(
        summary.contains(&format!("`report.html` (`{}`)", page.display())),
        "{summary}"
    );
}
