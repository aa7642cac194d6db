//! Headless Chromium (Debian's package) opening a page from disk: the DOM it built, a
//! screenshot, and every URL its network log saw. One launch per page.
//!
//! Chromium is started as the probe on this kind of machine starts it (no sandbox as
//! root, no background networking, component updates or sync, a fresh profile), and its
//! own service requests (which it makes whatever the page is) are told apart from the
//! page's by where they started (see `page_requests`). Without Chromium the tests that need it skip, saying so (or fail, in
//! CI: see [`missing`]); `.ci/run` installs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Chromium binary: `$CN_RUN_CHROMIUM`, else Debian's `/usr/bin/chromium`.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CN_RUN_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.is_file() {
        Some(path)
    } else {
        missing(&format!(
            "no Chromium at {} (apt-get install chromium, or set CN_RUN_CHROMIUM)",
            path.display()
        ));
        None
    }
}

/// A report tool is missing: the test skips, saying so, or fails where
/// `CN_RUN_REQUIRE_REPORT_TOOLS=1` (CI sets it after `.ci/install-report-tools`, so a
/// tool CI lost fails the run instead of passing it untested).
pub fn missing(what: &str) {
    assert!(
        std::env::var_os("CN_RUN_REQUIRE_REPORT_TOOLS").is_none_or(|v| v != "1"),
        "{what}, and CN_RUN_REQUIRE_REPORT_TOOLS=1"
    );
    eprintln!("skipped: {what}");
}

/// What Chromium made of a page.
#[derive(Debug)]
pub struct Opened {
    /// The DOM after load (`--dump-dom`): scripts would have run by then.
    pub dom: String,
    pub screenshot: PathBuf,
    /// Every URL in the network log that is not one of Chromium's own services.
    pub page_requests: Vec<String>,
    pub stderr: String,
}

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Opens `page` (a file) at `width`×`height`; the screenshot goes to `shot`.
pub fn open(chromium: &Path, page: &Path, shot: &Path, size: (u32, u32)) -> Opened {
    open_and_print(chromium, page, shot, size, None)
}

/// [`open`], and the page printed to `pdf` in the same launch.
pub fn open_and_print(
    chromium: &Path,
    page: &Path,
    shot: &Path,
    (width, height): (u32, u32),
    pdf: Option<&Path>,
) -> Opened {
    // One Chromium at a time: several on two busy cores starve each other.
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // A Chromium that never finishes is started again: headless Chromium 156 hangs before
    // printing the DOM about once in 30 launches of the control page on two busy cores
    // (a page that opens in 2 s). What the tests assert is read from the launch that finished.
    for _ in 0..3 {
        if let Some(opened) = try_open(chromium, page, shot, (width, height), pdf) {
            return opened;
        }
    }
    panic!(
        "chromium did not finish with {} in three tries",
        page.display()
    );
}

/// One launch of Chromium on `page`; `None` when it did not finish in 60 s (killed).
fn try_open(
    chromium: &Path,
    page: &Path,
    shot: &Path,
    (width, height): (u32, u32),
    pdf: Option<&Path>,
) -> Option<Opened> {
    let profile = tempfile::tempdir().unwrap();
    let netlog = profile.path().join("netlog.json");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            // No name resolves (loopback addresses aside): a request by host name fails at once
            // instead of waiting on this closed network, and is still in the network log.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.path().join("p").display()
        ))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={width},{height}"))
        .args(pdf.map(|p| format!("--print-to-pdf={}", p.display())))
        .arg("--no-pdf-header-footer")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        // Files, not pipes: a DOM of megabytes would fill a pipe nobody reads yet.
        .stdout(std::fs::File::create(profile.path().join("dom.html")).unwrap())
        .stderr(std::fs::File::create(profile.path().join("stderr.txt")).unwrap())
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let read = |name: &str| {
        String::from_utf8_lossy(&std::fs::read(profile.path().join(name)).unwrap()).into_owned()
    };
    Some(Opened {
        dom: read("dom.html"),
        screenshot: shot.to_path_buf(),
        page_requests: page_requests(&netlog, page),
        stderr: read("stderr.txt"),
    })
}

/// The URLs of the network log other than Chromium's own service requests and the page
/// itself. Chromium asks its services (time, updates, sign-in) whatever the page is, even
/// with background networking off; those requests start with no origin (`"initiator":
/// "not an origin"`), while everything a page loads starts from the page's (`null` for a
/// file). A URL is Chromium's own only when every request for it started with no origin;
/// a URL seen only in other events (a preconnect, say) is the page's.
fn page_requests(netlog: &Path, page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(netlog).unwrap_or_default();
    // A log cut short by the exit lacks its closing brackets: its events are still read.
    let log: serde_json::Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .unwrap_or_else(|e| {
            panic!(
                "the network log does not parse ({e}): {}",
                &text[..text.len().min(300)]
            )
        });
    let start_job = &log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"];
    assert!(
        start_job.is_u64(),
        "the network log names no URL_REQUEST_START_JOB"
    );
    let events: Vec<&serde_json::Value> = log["events"].as_array().into_iter().flatten().collect();
    let started_by = |own: bool| -> std::collections::HashSet<&str> {
        events
            .iter()
            .filter(|e| e["type"] == *start_job)
            .filter(|e| (e["params"]["initiator"] == "not an origin") == own)
            .filter_map(|e| e["params"]["url"].as_str())
            .collect()
    };
    let (chromiums, pages) = (started_by(true), started_by(false));
    let own_page = format!("file://{}", page.display());
    let mut urls: Vec<String> = events
        .iter()
        .filter_map(|e| e["params"]["url"].as_str())
        .filter(|u| *u != own_page)
        .filter(|u| pages.contains(u) || !chromiums.contains(u))
        .map(str::to_owned)
        .collect();
    urls.sort();
    urls.dedup();
    urls
}

/// Where a test's screenshots go to be looked at: `target/report-shots/NAME.png`.
pub fn shot_path(name: &str) -> PathBuf {
    let dir = super::runner::repo_root().join("target/report-shots");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}.png"))
}

/// The text of the DOM's `<title>`.
pub fn title(dom: &str) -> &str {
    let start = dom.find("<title>").map_or(0, |i| i + "<title>".len());
    let end = dom[start..].find("</title>").map_or(start, |i| start + i);
    &dom[start..end]
}

/// The text of a PDF (poppler's `pdftotext`), or `None` without it.
pub fn pdf_text(pdf: &Path) -> Option<String> {
    let out = Command::new("pdftotext").arg(pdf).arg("-").output();
    let Some(out) = out.ok().filter(|o| o.status.success()) else {
        missing(&format!("pdftotext failed on {}", pdf.display()));
        return None;
    };
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}
