//! The page built from hand-written events: hostile text in every string stays text, the
//! page declares a policy that allows only its own stylesheet, the same events give the
//! same bytes, long texts are cut with a note, and secrets are masked.

use super::*;
use crate::report::transcript::sample::every_kind;

/// Texts a model or a tool might write to become markup, script, a request or a style.
pub(crate) const HOSTILE: &[&str] = &[
    "<script>document.title='PWNED'</script>",
    "<img src=x onerror=\"document.title='PWNED'\">",
    "<a href=\"javascript:document.title='PWNED'\">click</a>",
    "<style>body{display:none}</style>",
    "</pre></details></div></section><script>document.title='PWNED'</script>",
    "<svg onload=\"document.title='PWNED'\"></svg>",
    "<iframe src=\"http://127.0.0.1:9/frame\"></iframe>",
    "<meta http-equiv=\"refresh\" content=\"0;url=http://127.0.0.1:9/refresh\">",
    "<base href=\"http://127.0.0.1:9/\">",
    "<link rel=stylesheet href=\"http://127.0.0.1:9/x.css\">",
    "\" onmouseover=\"document.title='PWNED'\" x=\"",
    "' autofocus onfocus='document.title=1' x='",
    "<!--",
    "<![CDATA[<script>document.title='PWNED'</script>]]>",
    "&lt;script&gt;document.title='PWNED'&lt;/script&gt;",
    "<noscript><p title=\"</noscript><img src=x onerror=document.title='PWNED'>\">",
    "<math><mtext><table><mglyph><style><img src=x onerror=document.title='PWNED'>",
    "body{background:url(http://127.0.0.1:9/bg)}",
    "\u{202E}lmth.exe",
];

/// The tags of the page, in order.
fn tags(html: &str) -> Vec<String> {
    html.match_indices('<')
        .filter_map(|(i, _)| {
            let name: String = html[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '!' || *c == '/')
                .collect();
            (!name.is_empty()).then_some(name.trim_start_matches('/').to_ascii_lowercase())
        })
        .collect()
}

const OURS: &[&str] = &[
    "!doctype", "html", "head", "meta", "title", "style", "body", "a", "header", "p", "code", "h1",
    "h2", "h3", "h4", "h5", "span", "nav", "ul", "li", "main", "section", "div", "dl", "dt", "dd",
    "pre", "details", "summary", "table", "thead", "tbody", "tr", "th", "td", "meter", "footer",
    "strong",
];

fn page_of(text: &str) -> String {
    let t = Transcript::of(&every_kind(text).list, &Redactor::none());
    render(
        &t,
        Some(&format!("diff --git a/{text} b/{text}\n+{text}\n")),
        &Redactor::none(),
    )
}

#[test]
fn hostile_text_in_every_field_stays_text() {
    for payload in HOSTILE {
        let html = page_of(payload);
        let unknown: Vec<String> = tags(&html)
            .into_iter()
            .filter(|t| !OURS.contains(&t.as_str()))
            .collect();
        assert!(unknown.is_empty(), "{payload}: tags {unknown:?}");
        assert_eq!(html.matches("<style").count(), 1, "{payload}");
        assert_eq!(html.matches("<meta").count(), 6, "{payload}");
        for (i, _) in html.match_indices("<a ") {
            assert!(
                html[i..].starts_with("<a href=\"#")
                    || html[i..].starts_with("<a class=\"skip\" href=\"#"),
                "{payload}: {}",
                &html[i..i + 60]
            );
        }
        if payload.contains(['<', '>', '"', '&']) {
            assert!(
                !html.contains(payload),
                "{payload} is in the page as written"
            );
        }
        assert!(html.contains("&lt;") || !payload.contains('<'), "{payload}");
    }
}

#[test]
fn the_control_a_page_that_does_not_escape_would_carry_the_markup() {
    // The check above can fail: the same run with one value written raw shows it.
    let html = page_of("x");
    let raw = html.replacen("<h1>", "<h1><script>document.title='PWNED'</script>", 1);
    assert!(tags(&raw).iter().any(|t| t == "script"));
}

#[test]
fn the_policy_allows_only_the_pages_own_stylesheet_by_its_hash() {
    let html = page_of("x");
    let style_start = html.find("<style>").unwrap() + "<style>".len();
    let style_end = html.find("</style>").unwrap();
    let css = &html[style_start..style_end];
    use base64::Engine;
    use sha2::Digest;
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(css));
    let csp = page::content_security_policy();
    assert!(
        csp.starts_with("default-src 'none'; style-src 'sha256-"),
        "{csp}"
    );
    assert!(csp.contains(&format!("'sha256-{hash}'")));
    assert!(!csp.contains("unsafe"));
    assert!(html.contains(&format!("content=\"{csp}\"")));
}

#[test]
fn the_same_events_give_the_same_page() {
    assert_eq!(page_of("x"), page_of("x"));
}

#[test]
fn a_15_mb_output_is_cut_with_a_note_saying_where_it_is_whole() {
    let big: String = (0..1_500_000).map(|i| format!("{i:09}\n")).collect();
    assert!(big.len() >= 15_000_000);
    let mut e = crate::report::transcript::sample::Events::default();
    e.started("j", "p", false)
        .turn(None, 1)
        .response(None, 1, "", &[("c1", "Bash", "{\"command\": \"seq\"}")])
        .ran(
            None,
            "c1",
            "Bash",
            serde_json::json!({"command": "seq"}),
            &big,
        );
    let seq = e.list.last().unwrap().seq;
    let html = render(
        &Transcript::of(&e.list, &Redactor::none()),
        None,
        &Redactor::none(),
    );
    assert!(html.len() < 200_000, "{} bytes", html.len());
    assert!(html.contains("000000000\n"), "the first lines are shown");
    assert!(html.contains("001499999\n"), "the last line is shown");
    assert!(
        html.contains(&format!(
            "the whole text is in events.jsonl (the event with &quot;seq&quot;: {seq})"
        )),
        "the note names the event"
    );
}

#[test]
fn the_page_stays_bounded_however_many_large_outputs_there_are() {
    let out = "y".repeat(100_000);
    let mut e = crate::report::transcript::sample::Events::default();
    e.started("j", "p", false);
    let total = 1 << 20;
    for turn in 1..=300 {
        let id = format!("c{turn}");
        e.turn(None, turn)
            .response(None, turn, "", &[(&id, "Bash", "{\"command\": \"yes\"}")])
            .ran(
                None,
                &id,
                "Bash",
                serde_json::json!({"command": "yes"}),
                &out,
            );
    }
    let html = render_within(
        &Transcript::of(&e.list, &Redactor::none()),
        None,
        &Redactor::none(),
        total,
    );
    // 30 MB of outputs; the page: its text budget, and per turn the spent-budget parts
    // and the markup.
    let per_turn = text::SPENT_HEAD + text::SPENT_TAIL + 4_000;
    assert!(html.len() < total + 300 * per_turn, "{} bytes", html.len());
    assert!(html.contains("this page's budget for text is spent"));
    assert!(html.contains("texts are shown in part because the page's budget"));
}

#[test]
fn a_secret_is_masked_however_the_page_would_escape_it() {
    let secret = "tok<en>&\"9f8e7d6c\"";
    let t = Transcript::of(
        &every_kind(secret).list,
        &Redactor::from_values(vec![secret.to_owned()]),
    );
    let html = render(
        &t,
        Some(&format!("+{secret}\n")),
        &Redactor::from_values(vec![secret.to_owned()]),
    );
    assert!(!html.contains("9f8e7d6c"));
    assert!(html.contains(crate::redact::MASK));
}

#[test]
fn a_subagents_conversation_is_inside_the_call_it_worked_for() {
    let html = page_of("x");
    let call = &html[html.find("Tool call Subagent").unwrap()..];
    let call = &call[..call.find("</section>").unwrap()];
    assert!(
        call.contains("The subagent&#39;s conversation (1 responses)")
            || call.contains("The subagent's conversation (1 responses)"),
        "{call}"
    );
    assert!(call.contains("<div class=\"sub\">"), "{call}");
    assert!(html.contains("id=\"subagents\""), "the Subagents section");
}
